package shm

import "unsafe"

// Single-copy operations (Hooks.Read and Hooks.Write: process_vm_readv
// and process_vm_writev through the BTL, which checks the peer).
//
// Above the slot, copying through the segment costs two transfers of every
// cache line between cores (the writer takes the slot's lines back from
// the last reader, the reader takes them from the writer), and the
// schedules' pipeline as many. Here each rank publishes the address of its
// input in its cell instead of the input itself, and the others read it
// straight out of its memory into their output: one copy, from lines that
// the owner does not write (its send buffer), so that they stay shared
// between the caches from one call to the next. Open MPI's vader does the
// same with CMA above its eager limit.
//
// An owner must not return (and change or free its input) before every
// rank that reads it is done: the symmetric operations wait for every
// done = s (each rank reads every other's input), a Reduce's non-root for
// the root's. Seeing every done >= s also proves what begin waits for, so
// they set safe = s.

// readChunk is the piece a folding operation reads and combines at a time:
// the scratch it reads into stays in the core's cache between the read and
// the fold, and there are few system calls.
const readChunk = 64 << 10

// CanRead reports whether the team has single-copy reads (Hooks.Read).
func (t *Team) CanRead() bool { return t.hooks.Read != nil }

// pubAddr stores the address of b (its first byte; b non-empty) in this
// rank's cell of s and publishes it.
func (t *Team) pubAddr(s uint64, b []byte) {
	t.keep = b // b escapes: a heap buffer does not move while others read it
	*(*uintptr)(unsafe.Pointer(&t.slotOf(t.me, s, 8)[0])) = uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	t.publish(t.arrive(t.me, s), s)
}

// addrOf is the address rank r published for operation s.
func (t *Team) addrOf(r int, s uint64) uintptr {
	return *(*uintptr)(unsafe.Pointer(&t.slotOf(r, s, 8)[0]))
}

// read copies len(dst) bytes at offset off of rank r's input of s into dst.
func (t *Team) read(r int, s uint64, off int, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	if err := t.hooks.Read(r, t.addrOf(r, s)+uintptr(off), dst); err != nil {
		t.err = err
		return err
	}
	return nil
}

// allDone reports whether every rank is done with s.
func (t *Team) allDone(s uint64) bool {
	for j := 0; j < t.n; j++ {
		if t.done(j).Load() < s {
			return false
		}
	}
	return true
}

// finishRead publishes done = s and waits until every rank is done with s
// (none reads this rank's input any more).
func (t *Team) finishRead(s uint64) error {
	t.publish(t.done(t.me), s)
	return t.awaitDone(s)
}

// awaitDone is finishRead's wait, for a rank that published done = s and
// then did local work of its own (exchangeRead).
func (t *Team) awaitDone(s uint64) error {
	if err := t.wait(func() bool { return t.allDone(s) }); err != nil {
		return err
	}
	t.keep = nil
	t.safe = s
	return nil
}

// scratch returns the team's private buffer of n bytes (at most readChunk).
func (t *Team) scratch(i, n int) []byte {
	if t.tmp[i] == nil {
		t.tmp[i] = make([]byte, readChunk)
	}
	return t.tmp[i][:n]
}

// AllgatherRead is Allgather by single-copy reads: in is this rank's block
// (len(out)/n bytes, any length; it may be this rank's block of out), which
// the others read while this rank reads theirs into out. Needs CanRead.
func (t *Team) AllgatherRead(in, out []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := len(out) / t.n
	return t.exchangeRead(in[:b], in[:b], out, b, 0)
}

// AlltoallRead is Alltoall by single-copy reads: in and out hold n blocks
// of len(in)/n bytes and must not overlap (others read in while this rank
// writes out). Needs CanRead.
func (t *Team) AlltoallRead(in, out []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := len(in) / t.n
	return t.exchangeRead(in, in[t.me*b:(t.me+1)*b], out, b, t.me*b)
}

// exchangeRead is one operation in which every rank publishes pub, reads
// block j of out from rank j's pub at offset off and puts own in its block
// of out (b bytes). With more ranks than cores (Hooks.Yield) it copies own
// while the others arrive and reads each rank as soon as that one has
// arrived (readReady; np 8 on 2 cores, Alltoall/Open MPI against waiting
// for all in the same run: 128 KiB blocks 1.36 -> 1.27, 256-512 KiB
// 1.37-1.40 -> 1.18-1.22). Else it reads the others once all have arrived
// (readAll), says so (done) and only then copies own, so that a rank that
// got its core later, and reads this one's input later, keeps this one
// waiting for less: np 2, Alltoall/Open MPI (median of 6 per-round
// ratios, main and this interleaved, rotating order) 64 KiB-1 MiB
// 0.98-1.17 -> 0.79-0.83, Allgather 0.90-1.00 -> 0.83-0.91. b == 0:
// nothing moves, but it is still one operation on every rank.
func (t *Team) exchangeRead(pub, own, out []byte, b, off int) error {
	s, err := t.begin()
	if err != nil {
		return err
	}
	if b == 0 {
		return t.finishRead(s)
	}
	t.pubAddr(s, pub)
	copyOwn := func() {
		if &own[0] != &out[t.me*b] {
			copy(out[t.me*b:(t.me+1)*b], own)
		}
	}
	get := func(j int) error { return t.read(j, s, off, out[j*b:(j+1)*b]) }
	if t.hooks.Yield {
		copyOwn()
		if err := t.readReady(func(j int) bool { return t.arrive(j, s).Load() >= s }, get); err != nil {
			return err
		}
		return t.finishRead(s)
	}
	if err := t.readAll(s, get); err != nil {
		return err
	}
	t.publish(t.done(t.me), s) // read all it reads; the others may go once they have too
	copyOwn()
	return t.awaitDone(s)
}

// readAll waits until every rank has arrived at s and then calls get(j)
// for every other rank j, in the order me+1, me+2, ... (not all on rank 0
// at once).
func (t *Team) readAll(s uint64, get func(j int) error) error {
	if err := t.wait(func() bool { return t.allArrived(s) }); err != nil {
		return err
	}
	for k := 1; k < t.n; k++ {
		if err := get((t.me + k) % t.n); err != nil {
			return err
		}
	}
	return nil
}

// readReady calls get(j) once for every other rank j, each as soon as
// ready(j) says that j's data is there, in the order me+1, me+2, ... (not
// all on rank 0 at once) among those that are: a rank whose peer waits
// for a core reads the others meanwhile.
func (t *Team) readReady(ready func(j int) bool, get func(j int) error) error {
	if len(t.got) != t.n {
		t.got = make([]bool, t.n)
	}
	clear(t.got)
	for left := t.n - 1; left > 0; {
		for k := 1; k < t.n; k++ {
			j := (t.me + k) % t.n
			if t.got[j] || !ready(j) {
				continue
			}
			if err := get(j); err != nil {
				return err
			}
			t.got[j] = true
			left--
		}
		if left > 0 {
			if err := t.wait(func() bool { return t.anyReady(ready) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// anyReady reports whether a rank not yet read (t.got) is ready.
func (t *Team) anyReady(ready func(j int) bool) bool {
	for j := 0; j < t.n; j++ {
		if j != t.me && !t.got[j] && ready(j) {
			return true
		}
	}
	return false
}

// AllreduceRead is Allreduce by single-copy reads: every rank combines
// every rank's in, in rank order, into its out (the same length as in,
// not overlapping it: the others read in meanwhile). Needs CanRead.
func (t *Team) AllreduceRead(in, out []byte, red func(acc, in []byte)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.begin()
	if err != nil {
		return err
	}
	if len(in) == 0 {
		return t.finishRead(s)
	}
	t.pubAddr(s, in)
	if err := t.wait(func() bool { return t.allArrived(s) }); err != nil {
		return err
	}
	if err := t.foldRead(s, 0, in, out, red, false); err != nil {
		return err
	}
	return t.finishRead(s)
}

// ReduceRead is Reduce by single-copy reads: root reads every other rank's
// in and combines them into its out (which may be its in); the others
// publish in and wait until root is done. The order is the ranks' unless
// commute (red commutes: a built-in op), which lets root read another
// rank's input straight into out instead of copying its own there first.
//
// Two ranks, commute, with Hooks.Write: from halvesMin to halvesMax
// bytes each rank combines a part (reduceHalves); above, root's out not
// its in, the input is moved by both at once (see splitAt): root reads
// the first part into out while the other rank writes the rest into
// root's out, then root adds its own input.
// Needs CanRead.
func (t *Team) ReduceRead(in, out []byte, root int, red func(acc, in []byte), commute bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.begin()
	if err != nil {
		return err
	}
	if len(in) == 0 {
		return t.finishRead(s)
	}
	h := splitAt(len(in))
	if commute && t.n == 2 && len(in) >= halvesMin && len(in) <= halvesMax && t.slot >= 16 && t.hooks.Write != nil {
		return t.reduceHalves(s, in, out, root, red)
	}
	split := commute && t.n == 2 && h > 0 && t.hooks.Write != nil
	if t.me != root {
		t.pubAddr(s, in)
		if split {
			r := t.arrive(root, s)
			if err := t.wait(func() bool { return r.Load() >= s }); err != nil {
				return err
			}
			if a := t.addrOf(root, s); a != 0 { // else root reads it all
				if err := t.write(root, a+uintptr(h), in[h:]); err != nil {
					return err
				}
			}
			t.publish(t.done(t.me), s) // written (root waits for it)
		}
		d := t.done(root)
		if err := t.wait(func() bool { return d.Load() >= s }); err != nil {
			return err
		}
		t.keep = nil
		if !split {
			t.publish(t.done(t.me), s)
		}
		return nil
	}
	out = out[:len(in)]
	alias := &in[0] == &out[0]
	if split {
		if alias {
			storeRel((*uint64)(unsafe.Pointer(&t.slotOf(t.me, s, 8)[0])), 0) // nothing to write here
			t.publish(t.arrive(t.me, s), s)
		} else {
			t.pubAddr(s, out)
		}
	} else {
		storeRel((*uint64)(unsafe.Pointer(t.arrive(t.me, s))), s) // nothing to read here
	}
	if err := t.wait(func() bool { return t.othersArrived(s) }); err != nil {
		return err
	}
	t.safe = s - 1
	if split && !alias {
		j := 1 - t.me
		if err := t.read(j, s, 0, out[:h]); err != nil {
			return err
		}
		t.publish(t.done(t.me), s)
		d := t.done(j)
		if err := t.wait(func() bool { return d.Load() >= s }); err != nil {
			return err
		}
		t.keep = nil
		red(out, in)
		return nil
	}
	if commute && t.n == 2 && !alias {
		// The other rank's input straight into out, all of it; once read,
		// that rank may go (done), while this one adds its own.
		if err := t.read(1-t.me, s, 0, out); err != nil {
			return err
		}
		t.publish(t.done(t.me), s)
		red(out, in)
		return nil
	}
	if err := t.foldRead(s, 0, in, out, red, commute); err != nil {
		return err
	}
	t.publish(t.done(t.me), s)
	if split { // the other rank's done says it is done, not that it wrote
		d := t.done(1 - t.me)
		return t.wait(func() bool { return d.Load() >= s })
	}
	return nil
}

// halvesMin and halvesMax bound the input of a two-rank Reduce that
// reduceHalves takes. np 2, osu medians of 10 runs in alternating order:
// against root reading all and adding all, 128-512 KiB -3, -12, -27%, but
// 16-64 KiB +6-25% (the other rank's two system calls); against the
// split (splitAt), 1 MiB -16%, 2-4 MiB +14-20%.
const (
	halvesMin = 128 << 10
	halvesMax = 1 << 20
)

// reduceHalves is a two-rank Reduce of a commuting op in which each rank
// combines a part, at once: root reads the other rank's input up to h
// (halvesRoot(n) percent of it) and adds its own there; the other rank reads
// root's input from h on into its scratch, adds its own and writes the sum
// into root's out (root publishes out's address after in's, in its
// cell's second word). Root's part is the larger: the other rank's has a
// second system call. Root returns once the other rank is done (its part
// of out written, root's input read), the other rank once root is done
// (its input read). The parts combine the two operands in either order
// (root's part other⊕root unless in place): for a built-in op the same
// bits, except which payload a result of two NaNs carries, and the same
// from run to run (the parts depend only on the length and the form).
func (t *Team) reduceHalves(s uint64, in, out []byte, root int, red func(acc, in []byte)) error {
	n := len(in)
	h := n * halvesRoot(n) / 100 &^ 63 // whole elements of any size
	j := 1 - t.me
	if t.me != root {
		t.pubAddr(s, in)
		r := t.arrive(root, s)
		if err := t.wait(func() bool { return r.Load() >= s }); err != nil {
			return err
		}
		sum := t.halfBuf(n - h)
		if err := t.read(root, s, h, sum); err != nil {
			return err
		}
		red(sum, in[h:])
		if err := t.write(root, t.addrWord(root, s, 1)+uintptr(h), sum); err != nil {
			return err
		}
		t.publish(t.done(t.me), s)
		return t.awaitDone(s)
	}
	out = out[:n]
	*(*uintptr)(unsafe.Pointer(&t.slotOf(t.me, s, 16)[8])) = uintptr(unsafe.Pointer(unsafe.SliceData(out)))
	t.pubAddr(s, in)
	if err := t.wait(func() bool { return t.othersArrived(s) }); err != nil {
		return err
	}
	if &in[0] == &out[0] { // in place: out[:h] holds root's input until added
		other := t.halfBuf(h)
		if err := t.read(j, s, 0, other); err != nil {
			return err
		}
		red(out[:h], other)
	} else {
		if err := t.read(j, s, 0, out[:h]); err != nil {
			return err
		}
		red(out[:h], in[:h])
	}
	t.publish(t.done(t.me), s)
	return t.awaitDone(s)
}

// halvesRoot is the percentage of a reduceHalves input of n bytes that
// root combines. Per KiB, timed inside the call (np 2, TSC marks): root
// reads 71-83 ns and adds 24-26; the other rank reads 76-94, adds 24-26
// and writes 53-78, so at 60% root waited 1.5-2 us for it at 128-256 KiB.
// osu reduce, np 2, against 60: 64% at 128 and 256 KiB -4 and -5% (two
// takes of 10 rounds, the order rotating), 512 KiB -8, -1 and -5% (three);
// at 1 MiB -13, +6 and +10%, so 60 stays there. 66-70% gained no more at
// 128-512 KiB, 75-80% lost 8-23% from 256 KiB.
func halvesRoot(n int) int {
	if n >= 1<<20 {
		return 60
	}
	return 64
}

// halfBuf returns the team's buffer of n bytes for reduceHalves (kept
// between calls, grown as needed: up to halvesMax bytes).
func (t *Team) halfBuf(n int) []byte {
	if cap(t.half) < n {
		t.half = make([]byte, n)
	}
	return t.half[:n]
}

// splitAt is where a split Reduce of n bytes divides its input: the first
// half root reads, the rest the other rank writes; 0: no split. From
// splitMin on: np 2 Reduce/Open MPI (compare.py --rounds 3, 2 takes) 1-4
// MiB 0.97-1.12 -> 0.56-0.67; below, root's add takes the written half's
// lines from the other core, and 16-256 KiB lost (0.87-1.03 -> 1.16-1.59).
// ReduceRead takes reduceHalves before it up to halvesMax.
func splitAt(n int) int {
	if n < splitMin {
		return 0
	}
	return n / 2 &^ 63 // whole elements of any size
}

const splitMin = 1 << 20

// write copies src into rank r's memory at addr (Hooks.Write).
func (t *Team) write(r int, addr uintptr, src []byte) error {
	if err := t.hooks.Write(r, addr, src); err != nil {
		t.err = err
		return err
	}
	return nil
}

// foldRead puts in_0 ⊕ in_1 ⊕ ... ⊕ in_{n-1} of operation s into out,
// readChunk bytes at a time, reading the other ranks' inputs from offset
// base on; this rank's is in (its bytes from base on), which may be out
// itself. In rank order unless commute: then out starts as this rank's
// input (in place) or the next rank's, read into it.
func (t *Team) foldRead(s uint64, base int, in, out []byte, red func(acc, in []byte), commute bool) error {
	alias := &in[0] == &out[0]
	first := 0 // the rank whose input out starts as
	if commute {
		first = t.me
		if !alias && t.n > 1 {
			first = (t.me + 1) % t.n
		}
	}
	for lo := 0; lo < len(out); lo += readChunk {
		hi := min(lo+readChunk, len(out))
		acc, own := out[lo:hi], in[lo:hi]
		if alias && first != t.me {
			own = t.scratch(1, hi-lo) // out starts as another rank's
			copy(own, in[lo:hi])
		}
		switch {
		case first != t.me:
			if err := t.read(first, s, base+lo, acc); err != nil {
				return err
			}
		case !alias:
			copy(acc, own)
		}
		for k := 1; k < t.n; k++ {
			j := (first + k) % t.n
			if !commute {
				j = k // first is 0
			}
			if j == t.me {
				red(acc, own)
				continue
			}
			tmp := t.scratch(0, hi-lo)
			if err := t.read(j, s, base+lo, tmp); err != nil {
				return err
			}
			red(acc, tmp)
		}
	}
	return nil
}

// BcastRead is Bcast by single-copy reads: every other rank reads root's
// buf into its own; root returns once all have. Needs CanRead.
func (t *Team) BcastRead(buf []byte, root int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.begin()
	if err != nil {
		return err
	}
	if len(buf) == 0 {
		return t.finishRead(s)
	}
	if t.n == 2 && len(buf) >= bcastSplitMin && t.hooks.Write != nil {
		return t.bcastSplit(s, buf, root)
	}
	if t.me == root {
		t.pubAddr(s, buf)
		return t.finishRead(s)
	}
	r := t.arrive(root, s)
	if err := t.wait(func() bool { return r.Load() >= s }); err != nil {
		return err
	}
	if err := t.read(root, s, 0, buf); err != nil {
		return err
	}
	t.publish(t.done(t.me), s)
	return nil
}

// bcastSplitMin is the least Bcast that bcastSplit takes: np 2 Bcast/Open
// MPI (compare.py --rounds 3, 3 takes against main, interleaved) 32 KiB-4
// MiB 0.82-1.07 -> 0.30-0.79; 16 KiB lost (0.68-0.91 -> 0.90-0.99).
const bcastSplitMin = 32 << 10

// bcastSplit is BcastRead on 2 ranks moving the bytes from both sides at
// once: the other rank reads the first half of root's buf while root
// writes the rest into the other's buf (process_vm_writev), each core
// copying half. Each rank publishes its buf and returns once the other is
// done: root's done says it wrote, the other's that it read.
func (t *Team) bcastSplit(s uint64, buf []byte, root int) error {
	h := len(buf) / 2
	j := 1 - t.me
	t.pubAddr(s, buf)
	a := t.arrive(j, s)
	if err := t.wait(func() bool { return a.Load() >= s }); err != nil {
		return err
	}
	if t.me == root {
		if err := t.write(j, t.addrOf(j, s)+uintptr(h), buf[h:]); err != nil {
			return err
		}
	} else if err := t.read(j, s, 0, buf[:h]); err != nil {
		return err
	}
	return t.finishRead(s)
}
