package shm

import (
	"sync/atomic"
	"unsafe"
)

// AllreduceSplitRead is Allreduce by single-copy reads in two phases, a
// reduce-scatter and an allgather: rank r folds part r of every rank's in
// (whole elements of elem bytes; parts as equal as elements allow), in
// rank order, into part r of its out, and says so; then it reads every
// other rank's folded part out of that rank's out. Each element is folded
// by one rank only, so every rank gets the same bits, run after run; each
// rank folds 1/n of the vector instead of all of it (AllreduceRead), which
// counts when ranks share cores. in and out have the same length and do
// not overlap (others read both meanwhile). Needs CanRead and Slot >=
// SplitReadSlot.
func (t *Team) AllreduceSplitRead(in, out []byte, elem int, red func(acc, in []byte)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.begin()
	if err != nil {
		return err
	}
	if len(in) == 0 {
		return t.finishRead(s)
	}
	t.keep = in
	cell := t.slotOf(t.me, s, SplitReadSlot)
	*(*uintptr)(unsafe.Pointer(&cell[0])) = uintptr(unsafe.Pointer(unsafe.SliceData(in)))
	*(*uintptr)(unsafe.Pointer(&cell[8])) = uintptr(unsafe.Pointer(unsafe.SliceData(out)))
	t.folded(t.me, s).Store(0) // a stale value from another use of the cell
	t.publish(t.arrive(t.me, s), s)
	if err := t.wait(func() bool { return t.allArrived(s) }); err != nil {
		return err
	}
	lo, hi := t.part(t.me, len(in), elem)
	if lo < hi {
		if err := t.foldRead(s, lo, in[lo:hi], out[lo:hi], red, false); err != nil {
			return err
		}
	}
	t.publish(t.folded(t.me, s), s)
	err = t.readReady(func(j int) bool { return t.folded(j, s).Load() == s }, func(j int) error {
		lo, hi := t.part(j, len(in), elem)
		return t.readAt(j, t.addrWord(j, s, 1)+uintptr(lo), out[lo:hi])
	})
	if err != nil {
		return err
	}
	return t.finishRead(s)
}

// SplitReadSlot is the least slot AllreduceSplitRead needs: a cell holds
// the addresses of in and out and the folded flag.
const SplitReadSlot = 24

// part is the byte range [lo, hi) of rank r's part of a vector of size
// bytes in elements of elem bytes: the first size/elem % n ranks one
// element more than the rest.
func (t *Team) part(r, size, elem int) (lo, hi int) {
	count := size / elem
	q, extra := count/t.n, count%t.n
	first := r*q + min(r, extra)
	n := q
	if r < extra {
		n++
	}
	return first * elem, (first + n) * elem
}

// folded is rank r's flag of AllreduceSplitRead s: s once its part of out
// holds the result (the third word of its cell).
func (t *Team) folded(r int, s uint64) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&t.slotOf(r, s, SplitReadSlot)[16]))
}

// addrWord is word w of the addresses rank r published for operation s.
func (t *Team) addrWord(r int, s uint64, w int) uintptr {
	return *(*uintptr)(unsafe.Pointer(&t.slotOf(r, s, 8*(w+1))[8*w]))
}

// readAt copies len(dst) bytes at addr in rank r's memory into dst.
func (t *Team) readAt(r int, addr uintptr, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	if err := t.hooks.Read(r, addr, dst); err != nil {
		t.err = err
		return err
	}
	return nil
}
