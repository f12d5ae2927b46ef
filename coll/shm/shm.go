// Package shm runs small blocking collectives among ranks of one machine
// through a shared segment of their own (Open MPI's coll/sm and UCC's shm
// team are the model) instead of point-to-point messages: each rank
// publishes its input in its slot and a sequence number on its control
// line, and reads the others' slots once their numbers say they are there.
//
// Layout of a team of n ranks: per rank a done line and a sleep line
// (LineSize bytes each; rank r's at r*2*LineSize), then per rank two
// cells, one per parity: an 8-byte sequence number (arrive) followed by the
// payload, Slot bytes, each cell rounded up to LineSize. Operation number s
// (1, 2, ... in the order every rank calls them) uses the cells of parity
// s&1. The sequence number shares a cache line with the first 56 bytes of
// the payload, so a small payload crosses with its arrival in one
// transfer; the sleep line is written only around a sleep, so reading it at
// every publish hits the cache.
//
// Invariants. A rank writes its cell of operation s only once every rank
// is done reading operation s-2 (the cell's previous use): done[j] >= s-2
// for every j. A rank stores done = s once it has read all it reads of
// operation s, and its cell's number = s (arrive) after the payload; it
// stores done = s-1 before arrive = s (program order), so seeing arrive[j]
// >= s proves done[j] >= s-1. A publish (arrive, done) is a release
// store (storeRel: a plain store on amd64, whose total store order keeps
// it after the payload; a Go atomic elsewhere) and every read of a number
// an atomic load, so a payload written before arrive is seen by whoever
// sees arrive. A release store does not wait for its cache line (a
// locked exchange does): the rank polls the others' numbers while its own
// travels, one cache-line transfer instead of two on a small call's path.
// Its price: a publisher's look at a sleeper's armed flag may pass its
// store, so a rank that arms in that window sleeps until the next publish
// or SleepMax (the other side of the Dekker pair stays a full fence).
// A rank copies its payload into its slot with memcpy.Copy (REP MOVSB
// from 1 KiB), whose stores do not first read each line back from the
// cores that read the slot last, as copy()'s AVX stores do (np 4 on 2
// cores, against copy(), osu medians of 8-10 runs in alternating order:
// Bcast 16-128 KiB -15-27%, Reduce 16-512 KiB -9-16%, Alltoall 2-16 KiB
// -9-13%, the sizes its slots take; np 2 within the noise, ±5%). Copying
// out with it measured no better (Bcast -5%, Allgather and Alltoall
// ±5-25% either way).
// Allreduce combines cell 0, 1, ..., n-1 in rank order on every
// rank: every rank computes the same bits, for any op. Allgather and
// Alltoall copy their blocks out of the others' cells once all have arrived. The
// Barrier is flat, or right after a Bcast (with Hooks.Lead) goes through
// the Bcast's root, so that it leaves first (leadBarrier).
//
// Waiting polls the numbers it waits for, and the PML's progress now and
// then so that point-to-point traffic keeps moving; oversubscribed it
// yields the core between polls (and so does a rank that shares its CPU
// with another rank of the team, which also moves the higher-numbered of
// the two off that CPU: see lookColoc); after Hooks.Spin it sleeps on its sleep
// line's futex (armed flag, Dekker as in btl/sm), which every publisher
// wakes, for at most SleepMax at a time, and checks that the communicator
// is still usable and no rank of it is lost.
package shm

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/internal/memcpy"
	"github.com/gorun-mpi/gorun/internal/spinlock"
)

// LineSize is the size of a line: two cache lines, so the adjacent-line
// prefetcher does not make neighbours share.
const LineSize = 128

// SleepMax bounds one futex sleep: point-to-point traffic to a sleeping
// rank and a lost peer are noticed within it.
const SleepMax = time.Millisecond

// sleepLine is a rank's sleep state.
type sleepLine struct {
	armed atomic.Uint32 // the rank sleeps, or is about to, on wake
	wake  atomic.Uint32 // the futex word
}

// Hooks is what a team calls while it waits.
type Hooks struct {
	Progress func() int    // the PML's progress (nil: none)
	Check    func() error  // is the communicator still usable (nil: always)
	Yield    bool          // oversubscribed: yield the core between polls
	Spin     time.Duration // how long a wait polls before it sleeps (0: SpinDefault)
	Lead     bool          // a Barrier after a Bcast goes through its root (see leadBarrier)
	// Read copies len(dst) bytes at addr in team rank r's memory into dst
	// (single copy: process_vm_readv); nil: none (see read.go).
	Read func(r int, addr uintptr, dst []byte) error
	// Pipe: a slot Bcast of more than Pipe bytes moves in pieces of
	// Pipe bytes, each published as soon as the root has copied it, so
	// that the others copy one while the root copies the next (0: in one
	// piece).
	Pipe int
	// Write copies src to addr in team rank r's memory
	// (process_vm_writev); nil: none, and the two-rank operations that
	// split the bytes between both ranks read them all instead (read.go).
	Write func(r int, addr uintptr, src []byte) error
}

// yieldAfter is how many idle polls a wait makes before it yields the core
// between polls even when not oversubscribed: the rank it waits for may
// share this core (the scheduler places new processes together at first;
// nothing binds ranks to cores), and then only a yield lets it run.
const yieldAfter = 1024

// SpinDefault is how long a wait polls before it sleeps: about what the
// PML's 1000 idle polls take, so that a peer that lost its core for a
// moment does not cost a sleep and a wake-up.
const SpinDefault = 250 * time.Microsecond

// Team is one rank's view of a communicator's segment. Its operations are
// blocking and must be called by every rank in the same order, one at a
// time (a mutex serializes goroutines of one rank).
type Team struct {
	mu    spinlock.Mutex // its Unlock is a plain store: see Bcast
	n, me int
	slot  int
	cell  int // a cell's size: 8 + slot, rounded up to LineSize
	mem   []byte
	seq   uint64 // the last operation started
	safe  uint64 // every rank's done is known to be >= safe
	hooks Hooks
	lead  int       // the root of the last operation if it was a Bcast, else -1
	err   error     // a failed wait leaves the team unusable
	keep  []byte    // the input others may be reading (read.go)
	tmp   [2][]byte // scratch of the folding reads (read.go)
	got   []bool    // the ranks read so far (readReady)
	half  []byte    // the scratch of reduceHalves

	// Sharing a core (see lookColoc): coloc says that the last look found
	// another rank of the team on this rank's CPU, cpu is the CPU this
	// rank last stored in its done line (+1; 0: none yet), moved when it
	// last tried to move off a shared core.
	coloc bool
	cpu   uint32
	moved time.Time
}

// Size is the segment size for n ranks and slots of slot bytes.
func Size(n, slot int) int { return n*2*LineSize + 2*n*cellSize(slot) }

func cellSize(slot int) int { return (8 + slot + LineSize - 1) / LineSize * LineSize }

// Create makes the segment file at path (exclusively, mode 0600), sized for
// n ranks and slots of slot bytes, zero-filled, every page reserved now:
// a sparse file on a full file system would kill a rank with SIGBUS at its
// first store into a page, where a failed Create only sends the
// communicator's collectives back to their schedules.
func Create(path string, n, slot int) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("shm: %w", err)
	}
	defer f.Close()
	size := int64(Size(n, slot))
	err = unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) {
		err = f.Truncate(size) // no reservation there: as good as it gets
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("shm: reserving %s (%d bytes): %w", path, size, err)
	}
	return nil
}

// Open maps the segment at path as rank me of n.
func Open(path string, n, me, slot int, h Hooks) (*Team, error) {
	if n < 1 || me < 0 || me >= n || slot < 8 || slot%8 != 0 {
		return nil, fmt.Errorf("shm: bad team (n %d, rank %d, slot %d)", n, me, slot)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("shm: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shm: %w", err)
	}
	if st.Size() != int64(Size(n, slot)) {
		return nil, fmt.Errorf("shm: %s has %d bytes, want %d", path, st.Size(), Size(n, slot))
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, Size(n, slot), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("shm: mapping %s: %w", path, err)
	}
	if h.Spin <= 0 {
		h.Spin = SpinDefault
	}
	if h.Pipe > 0 {
		h.Pipe = max(h.Pipe, slot>>pieceBits+1)
	}
	return &Team{n: n, me: me, slot: slot, cell: cellSize(slot), mem: mem, hooks: h, lead: -1}, nil
}

// Slot is the largest payload of one operation, in bytes.
func (t *Team) Slot() int { return t.slot }

// Close unmaps the segment. The team must not be used afterwards.
func (t *Team) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mem == nil {
		return nil
	}
	err := unix.Munmap(t.mem)
	t.mem = nil
	return err
}

// done is rank r's done number.
func (t *Team) done(r int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&t.mem[r*2*LineSize]))
}

// doneWord is done(r) for storeRel.
func (t *Team) doneWord(r int) *uint64 { return (*uint64)(unsafe.Pointer(t.done(r))) }

// cpuWord is where rank r keeps the CPU it last ran on (+1; 0: unknown):
// the second cache line of its done line, so that storing it does not
// disturb the readers of done.
func (t *Team) cpuWord(r int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&t.mem[r*2*LineSize+64]))
}

// sleeper is rank r's sleep line.
func (t *Team) sleeper(r int) *sleepLine {
	return (*sleepLine)(unsafe.Pointer(&t.mem[r*2*LineSize+LineSize]))
}

func (t *Team) cellOff(r int, s uint64) int { return t.n*2*LineSize + (2*r+int(s&1))*t.cell }

// arrive is the sequence number of rank r's cell for operation s.
func (t *Team) arrive(r int, s uint64) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&t.mem[t.cellOff(r, s)]))
}

// slotOf is the payload of rank r's cell for operation s, n bytes long.
func (t *Team) slotOf(r int, s uint64, n int) []byte {
	off := t.cellOff(r, s) + 8
	return t.mem[off : off+n : off+n]
}

var errClosed = errors.New("shm: team closed")

// begin starts the next operation: it returns its number once this rank
// may write its slot of it (every rank is done with operation s-2).
func (t *Team) begin() (uint64, error) {
	if t.err != nil {
		return 0, t.err
	}
	if t.mem == nil {
		return 0, errClosed
	}
	t.seq++
	t.lead = -1
	s := t.seq
	if s >= 2 && t.safe < s-2 {
		// Remember the least done seen, not just s-2: a rank is often
		// done with s-1 already, and the next operation then reads no
		// other rank's line (each read here is a cache miss: the ranks
		// write their done words every operation).
		var least uint64
		err := t.wait(func() bool {
			least = ^uint64(0)
			for j := 0; j < t.n; j++ {
				d := t.done(j).Load()
				if d < s-2 {
					return false
				}
				least = min(least, d)
			}
			return true
		})
		if err != nil {
			return 0, err
		}
		t.safe = min(least, s-1)
	}
	return s, nil
}

// publish stores v into *w and wakes every sleeping rank.
func (t *Team) publish(w *atomic.Uint64, v uint64) {
	storeRel((*uint64)(unsafe.Pointer(w)), v)
	for j := 0; j < t.n; j++ {
		if j == t.me {
			continue
		}
		if l := t.sleeper(j); l.armed.Load() != 0 && l.armed.CompareAndSwap(1, 0) {
			l.wake.Add(1)
			futexWake(&l.wake)
		}
	}
}

// allArrived reports whether every rank has arrived at s.
func (t *Team) allArrived(s uint64) bool {
	for j := 0; j < t.n; j++ {
		if t.arrive(j, s).Load() < s {
			return false
		}
	}
	return true
}

// Barrier returns once every rank has called it. It is flat (every rank
// publishes its arrival and waits for all: the last to arrive leaves
// first) except right after a Bcast when Hooks.Lead is set: then it goes
// through the Bcast's root (leadBarrier).
func (t *Team) Barrier() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	lead := t.lead
	s, err := t.begin()
	if err != nil {
		return err
	}
	if lead >= 0 && t.hooks.Lead {
		return t.leadBarrier(s, lead)
	}
	t.publish(t.arrive(t.me, s), s)
	if err := t.wait(func() bool { return t.allArrived(s) }); err != nil {
		return err
	}
	t.safe = s - 1
	t.publish(t.done(t.me), s)
	return nil
}

// leadBarrier is the Barrier through rank lead: every other rank arrives
// and waits for lead's done = s, which lead stores once all have arrived,
// so lead always leaves first. After a Bcast, its root is the rank with
// data to hand out: oversubscribed, a flat Barrier lets it leave last
// (it arrives first, having nothing to wait for in the Bcast, and then
// waits for a core), and every reader of a Bcast that follows waits a
// round trip through the scheduler for it; through the root, the next
// Bcast's data is there before its readers come. Seeing done[lead] >= s
// proves every rank arrived, so done[j] >= s-1 for all j. lead publishes
// its arrival too, so that a rank that takes the flat Barrier here (its
// Hooks.Lead differs: an oversubscription seen differently) still gets
// through.
func (t *Team) leadBarrier(s uint64, lead int) error {
	t.publish(t.arrive(t.me, s), s)
	if t.me != lead {
		d := t.done(lead)
		if err := t.wait(func() bool { return d.Load() >= s }); err != nil {
			return err
		}
	} else if err := t.wait(func() bool { return t.othersArrived(s) }); err != nil {
		return err
	}
	t.safe = s - 1
	t.publish(t.done(t.me), s)
	return nil
}

// othersArrived reports whether every rank but this one has arrived at s.
func (t *Team) othersArrived(s uint64) bool {
	for j := 0; j < t.n; j++ {
		if j != t.me && t.arrive(j, s).Load() < s {
			return false
		}
	}
	return true
}

// Allgather puts every rank's block into every rank's out: out holds n
// blocks of len(out)/n bytes (at most Slot), this rank's already in place
// at block Rank.
func (t *Team) Allgather(out []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.begin()
	if err != nil {
		return err
	}
	b := len(out) / t.n
	memcpy.Copy(t.slotOf(t.me, s, b), out[t.me*b:])
	t.publish(t.arrive(t.me, s), s)
	if err := t.wait(func() bool { return t.allArrived(s) }); err != nil {
		return err
	}
	for j := 0; j < t.n; j++ {
		if j != t.me {
			copy(out[j*b:(j+1)*b], t.slotOf(j, s, b))
		}
	}
	t.safe = s - 1
	t.publish(t.done(t.me), s)
	return nil
}

// Alltoall gives rank j block j of every rank's in, at block i of its out
// for in of rank i: in and out hold n blocks of len(in)/n bytes, len(in)
// at most Slot. in and out may be the same slice. A rank's slot gets the
// others' blocks only; its own goes from in to out directly (np 2, osu
// medians of 8 and 12 runs in alternating order, against all blocks
// through the slot: 256 B 0.78 -> 0.62 and 0.95 -> 0.60 us, 128 B -12-14%,
// 512 B-16 KiB within 5%; np 4 within the noise, ±10% either way).
func (t *Team) Alltoall(in, out []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.begin()
	if err != nil {
		return err
	}
	b := len(in) / t.n
	slot := t.slotOf(t.me, s, len(in))
	mine := t.me * b
	memcpy.Copy(slot[:mine], in[:mine]) // the others' blocks, around this rank's own
	memcpy.Copy(slot[mine+b:], in[mine+b:])
	t.publish(t.arrive(t.me, s), s)
	if b > 0 && &in[0] != &out[0] {
		copy(out[mine:mine+b], in[mine:]) // this rank's own block: straight across
	}
	if err := t.wait(func() bool { return t.allArrived(s) }); err != nil {
		return err
	}
	for j := 0; j < t.n; j++ {
		if j != t.me {
			copy(out[j*b:(j+1)*b], t.slotOf(j, s, len(in))[t.me*b:])
		}
	}
	t.safe = s - 1
	t.publish(t.done(t.me), s)
	return nil
}

// Allreduce combines every rank's buf (at most Slot bytes, the same length
// on every rank) with red, in rank order, into every rank's buf.
func (t *Team) Allreduce(buf []byte, red func(acc, in []byte)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.begin()
	if err != nil {
		return err
	}
	memcpy.Copy(t.slotOf(t.me, s, len(buf)), buf)
	t.publish(t.arrive(t.me, s), s)
	if err := t.wait(func() bool { return t.allArrived(s) }); err != nil {
		return err
	}
	t.fold(buf, s, red)
	t.safe = s - 1
	t.publish(t.done(t.me), s)
	return nil
}

// fold puts slot 0 ⊕ slot 1 ⊕ ... ⊕ slot n-1 of operation s into out.
func (t *Team) fold(out []byte, s uint64, red func(acc, in []byte)) {
	copy(out, t.slotOf(0, s, len(out)))
	for j := 1; j < t.n; j++ {
		red(out, t.slotOf(j, s, len(out)))
	}
}

// Reduce combines every rank's in (at most Slot bytes, the same length on
// every rank) in rank order into root's out (len(in) bytes; unused
// elsewhere). in and out may be the same slice.
func (t *Team) Reduce(in, out []byte, root int, red func(acc, in []byte)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.begin()
	if err != nil {
		return err
	}
	memcpy.Copy(t.slotOf(t.me, s, len(in)), in)
	if t.me != root {
		storeRel(t.doneWord(t.me), s) // nothing to read
		t.publish(t.arrive(t.me, s), s)
		return nil
	}
	storeRel((*uint64)(unsafe.Pointer(t.arrive(t.me, s))), s) // not XCHG: see publish
	if err := t.wait(func() bool { return t.allArrived(s) }); err != nil {
		return err
	}
	t.fold(out[:len(in)], s, red)
	t.safe = s - 1
	t.publish(t.done(t.me), s)
	return nil
}

// Bcast copies root's buf (at most Slot bytes) into every rank's buf.
//
// The root returns as soon as its stores are issued: nothing on its way
// out is a locked instruction (the team's lock is a spinlock.Mutex, whose
// Unlock is a plain store), which would wait for the slot's cache lines to
// be taken back from the ranks that read the last Bcast (a round trip
// between cores; np 2, far placement: 0.41-0.44 us Reduces and 0.35-0.40
// us Bcasts of 4-64 B, 0.27-0.33 and 0.27-0.30 without). The same goes for
// the non-roots of a Reduce.
//
// With Hooks.Pipe, a Bcast of more than Pipe bytes moves in pieces (see
// Pipe): every rank decides alike, from len(buf).
func (t *Team) Bcast(buf []byte, root int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.begin()
	if err != nil {
		return err
	}
	t.lead = root
	pipe := t.hooks.Pipe > 0 && len(buf) > t.hooks.Pipe
	if t.me == root {
		if pipe {
			t.pipeOut(s, buf)
		} else {
			memcpy.Copy(t.slotOf(t.me, s, len(buf)), buf)
		}
		storeRel(t.doneWord(t.me), s) // not XCHG: see publish
		t.publish(t.arrive(t.me, s), s)
		return nil
	}
	if pipe {
		if err := t.pipeIn(s, buf, root); err != nil {
			return err
		}
	} else {
		r := t.arrive(root, s)
		if err := t.wait(func() bool { return r.Load() >= s }); err != nil {
			return err
		}
		copy(buf, t.slotOf(root, s, len(buf)))
	}
	t.publish(t.done(t.me), s)
	return nil
}

// progress is rank r's pipeline word: s<<pieceBits | the pieces of
// operation s it has put in its slot (in the done line's second cache
// line, beside cpuWord, which is written only now and then).
func (t *Team) progress(r int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&t.mem[r*2*LineSize+72]))
}

// pieceBits: a pipelined Bcast has fewer than 1<<pieceBits pieces
// (Hooks.Pipe is at least Slot>>pieceBits: see Open).
const pieceBits = 20

// pipeOut copies buf into this rank's slot of s Hooks.Pipe bytes at a
// time, publishing each piece (all but the last: the arrival says that).
func (t *Team) pipeOut(s uint64, buf []byte) {
	slot := t.slotOf(t.me, s, len(buf))
	k := uint64(0)
	for off := 0; off < len(buf); off += t.hooks.Pipe {
		end := min(off+t.hooks.Pipe, len(buf))
		memcpy.Copy(slot[off:end], buf[off:end])
		k++
		if end < len(buf) {
			t.publish(t.progress(t.me), s<<pieceBits|k)
		}
	}
}

// pipeIn copies root's slot of s into buf piece by piece as pipeOut
// publishes them.
func (t *Team) pipeIn(s uint64, buf []byte, root int) error {
	slot := t.slotOf(root, s, len(buf))
	p, r := t.progress(root), t.arrive(root, s)
	k := uint64(0)
	for off := 0; off < len(buf); off += t.hooks.Pipe {
		end := min(off+t.hooks.Pipe, len(buf))
		k++
		want := s<<pieceBits | k
		if err := t.wait(func() bool { return r.Load() >= s || p.Load() >= want }); err != nil {
			return err
		}
		copy(buf[off:end], slot[off:end])
	}
	return nil
}

// wait polls until ok, keeping the PML's progress going; see the package
// doc. A failed Check ends the wait and leaves the team unusable.
func (t *Team) wait(ok func() bool) error {
	spins := 0
	var since time.Time
	if t.coloc && !t.hooks.Yield {
		t.lookColoc() // the other rank may have moved since
	}
	yield := t.hooks.Yield || t.coloc
	for !ok() {
		spins++
		if spins == colocLook && !t.hooks.Yield {
			t.lookColoc()
			yield = t.coloc
		}
		if spins&63 == 0 && t.hooks.Progress != nil { // not in a short wait: it costs more than a poll
			t.hooks.Progress()
		}
		if yield || spins > yieldAfter {
			// Raw: a yield that switches to another rank lasts long
			// enough for the runtime's monitor thread to take the P
			// back and hand it to another thread, which wakes, finds
			// nothing to run and sleeps again, on a core a rank needs.
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
		if spins&63 != 0 {
			continue
		}
		if spins&255 == 0 {
			runtime.Gosched() // the rank's other goroutines (often on the same P) get a turn
		}
		if since.IsZero() {
			since = time.Now()
			continue
		}
		if time.Since(since) < t.hooks.Spin {
			continue
		}
		since = time.Time{}
		if t.hooks.Check != nil {
			if err := t.hooks.Check(); err != nil {
				t.err = err
				return err
			}
		}
		t.sleep(ok)
	}
	return nil
}

// sleep sleeps on this rank's sleep line until a publisher wakes it (or
// SleepMax passes), unless ok already holds once it is armed.
func (t *Team) sleep(ok func() bool) {
	me := t.sleeper(t.me)
	w := me.wake.Load()
	me.armed.Store(1)
	if !ok() {
		futexWait(&me.wake, w, SleepMax)
	}
	me.armed.Store(0)
}

// Ranks that share a core. The scheduler often starts a job's ranks on
// one core, or pulls one onto its partner's core when it wakes it (as the
// ranks' sleeps and wakes while they connect do), and leaves them there
// for tens of milliseconds with the other core idle: a rank that is always
// running counts as cache-hot, and the load balancer moves such a task
// only after several failed attempts. There a wait's polls only delay the
// rank it waits for, and its yields are weak (a yield switches only when
// the other task is eligible to run). So a wait that has polled colocLook
// times looks whether another rank of the team last ran on its CPU (each
// rank stores its own CPU when it looks). If one did, the higher-numbered
// of the two moves itself off that CPU (at most every moveEvery): it
// excludes the CPU from its affinity, which migrates it at once, and puts
// the old mask back, where the scheduler leaves it. Until a look finds the
// core no longer shared, its waits look at every start and yield at every
// poll. (np 2 Alltoall, the first size measured after start: 5-10 us a
// call with both ranks on one CPU for 15-25 ms, against 0.2.)
const (
	colocLook = 512
	moveEvery = time.Millisecond
)

// lookColoc stores the CPU this rank runs on, sets coloc to whether
// another rank of the team last ran there, and if so moves this rank off
// it when it has the higher number (see above).
func (t *Team) lookColoc() {
	c := t.storeCPU()
	t.coloc = false
	for j := 0; j < t.n; j++ {
		if j == t.me || t.cpuWord(j).Load() != c {
			continue
		}
		t.coloc = true
		if j < t.me && time.Since(t.moved) >= moveEvery {
			t.moved = time.Now()
			if moveOff(int(c - 1)) {
				t.storeCPU()
				t.coloc = false
			}
		}
		return
	}
}

// storeCPU stores the CPU this rank runs on (+1) in its line and returns it.
func (t *Team) storeCPU() uint32 {
	c := getcpu() + 1
	if c != t.cpu {
		t.cpu = c
		t.cpuWord(t.me).Store(c)
	}
	return c
}

// moveOff migrates the calling thread off cpu: its affinity without cpu,
// then the mask it had (the thread stays where the first call put it). It
// reports whether it moved.
func moveOff(cpu int) bool {
	runtime.LockOSThread() // both calls on the same thread
	defer runtime.UnlockOSThread()
	var old, off unix.CPUSet
	if unix.SchedGetaffinity(0, &old) != nil || !old.IsSet(cpu) {
		return false
	}
	off = old
	off.Clear(cpu)
	if off.Count() == 0 || unix.SchedSetaffinity(0, &off) != nil {
		return false
	}
	unix.SchedSetaffinity(0, &old)
	return true
}

// getcpu is the CPU the calling thread runs on (about 0.1 us).
func getcpu() uint32 {
	var c uint32
	unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&c)), 0, 0)
	return c
}

// Futex operations (linux/futex.h); shared, not FUTEX_PRIVATE_FLAG.
const (
	futexWaitOp = 0
	futexWakeOp = 1
)

// futexWait sleeps while *w == val, at most d; EAGAIN, EINTR and ETIMEDOUT
// all mean: look again.
func futexWait(w *atomic.Uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitOp, uintptr(val),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
}

func futexWake(w *atomic.Uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakeOp, 1<<30, 0, 0, 0)
}
