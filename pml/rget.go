package pml

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorun-mpi/gorun/internal/relaxed"
)

// Choosing, per message, between the single-copy read and the two-copy
// pipeline (pml_ob1_rget_adaptive).
//
// Which of the two is faster depends on the machine's state, not only on
// the size: on the 2-vCPU machines this runtime is measured on, the host
// moves the two vCPUs between a near and a far placement (a cache line
// crosses in ~60 ns or ~250-460 ns), and the kernel's process_vm_readv ran
// at ~35 GB/s in one state and ~9 GB/s in another, where the pipeline keeps
// 40-50 GB/s. So the receiver measures both paths as it uses them and takes
// the one that was faster lately, per size class of the bytes left after
// the first chunk. The path that lost is tried again with one message once
// its measurement is older than pml_ob1_rget_explore, so a change of state
// is noticed within that time.
//
// What is timed is the data's movement only: a read's system call, and a
// pipelined receive from its first FRAG to its last. Not counted: that a
// sender waiting for the FIN of a long read may go to sleep (after
// pml_ob1_spin_count polls), and that waking it costs the next message
// tens of µs on this machine. Measured here (64 KiB-1 MiB ping-pong, in a
// state where process_vm_readv ran 3-5x slower than the pipeline), a forced
// read lost about half of its time to that; so the choice is off by
// default, for the machines and states where reading wins by more.
//
// Only "serial" messages choose and are measured: matched when no other
// receive is posted, no message waits unexpected and no pipelined receive
// is in flight (a ping-pong, or a lone large message). In a window of
// messages (several receives posted, or transfers overlapping) the pipeline
// keeps both ranks' cores copying and is used as before; its time per
// message would not be comparable with a read's either.

// Paths of a rendezvous's rest, as indexes of pathEst's arrays.
const (
	pathPipe = 0
	pathRead = 1
)

// rgetClasses is the number of size classes: bits.Len of the bytes left.
const rgetClasses = 48

// pathSamples is how many recent measurements of each path a size class
// keeps; its cost is their minimum. Delays only ever add time (a rank
// preempted, a page fault, an interrupt), so the minimum of the last few
// is the path's cost now, and a change of placement shows after that many.
const pathSamples = 4

// pathEst is what one size class knows of the two paths.
type pathEst struct {
	ns     [2][pathSamples]float64 // recent costs in ns per byte, a ring each; 0: empty
	next   [2]uint8                // the ring's next index
	at     [2]int64                // when each path was last measured or tried (ns, monotonic)
	last   [2]int64                // each path's last measurement (ns); 0: none
	warmed [2]bool                 // rgetChoice.warmUp: the path's first measurement was dropped
}

// exploreWindows bounds what trying the slower path again costs: it is
// tried once its last measurement is older than explore and than this many
// times that measurement, so that it takes at most about 2% of the time
// even where one try is long. A one-way stream of 64 messages of 2 MiB
// through the pipeline took ~77 ms in the far placement (1.7 GB/s, against
// 14 GB/s read): tried every pml_ob1_rget_explore (20 ms), every other
// window would have gone that way.
const exploreWindows = 50

// cost is path's cost in ns per byte: the least of its recent
// measurements, 0 if it has none.
func (e *pathEst) cost(path int) float64 {
	c := 0.0
	for _, v := range e.ns[path] {
		if v > 0 && (c == 0 || v < c) {
			c = v
		}
	}
	return c
}

// pick returns whether the next serial message of this class reads, and
// the estimate with the chosen path's try noted. A path never measured is
// tried first (first, when neither was); then the cheaper one is taken,
// except that the other is tried once when its measurement is older than
// explore ns.
func (e pathEst) pick(now, explore int64, first int) (read bool, next pathEst) {
	return e.pickFavoring(now, explore, first, 1)
}

// pickFavoring is pick with first's cost weighed by favor (at most 1) in
// the comparison: the other path is taken only when it is cheaper by more
// than that margin.
func (e pathEst) pickFavoring(now, explore int64, first int, favor float64) (read bool, next pathEst) {
	var path int
	rc, pc := e.cost(pathRead), e.cost(pathPipe)
	switch {
	case rc == 0 && pc == 0:
		path = first
	case rc == 0:
		path = pathRead
	case pc == 0:
		path = pathPipe
	default:
		w := [2]float64{1, 1}
		w[first] = favor
		path = pathPipe
		if rc*w[pathRead] < pc*w[pathPipe] {
			path = pathRead
		}
		if other := 1 - path; now-e.at[other] > max(explore, exploreWindows*e.last[other]) {
			path = other
		}
	}
	e.at[path] = now
	return path == pathRead, e
}

// note adds one measurement of path, d ns for n bytes, in place of the
// oldest.
func (e pathEst) note(path int, d time.Duration, n int, now int64) pathEst {
	if n <= 0 {
		return e
	}
	i := e.next[path]
	e.ns[path][i] = max(float64(d), 1) / float64(n)
	e.next[path] = (i + 1) % pathSamples
	e.at[path], e.last[path] = now, int64(d)
	return e
}

// rgetClass is the size class of a rest of n bytes.
func rgetClass(n int) int { return min(bits.Len(uint(n)), rgetClasses-1) }

// rgetChoice holds one rank's estimates for one choice: a serial
// rendezvous's path (PML.rget) or a one-way stream's way (PML.streams,
// with warmUp). Its mutex is a leaf lock.
type rgetChoice struct {
	mu      sync.Mutex
	warmUp  bool  // drop each path's first measurement in each size class (a stream's first window of a way ran 3.5-4x slow)
	explore int64 // pml_ob1_rget_explore in ns
	// favor weighs the cost of the path tried first in the comparison
	// (pathEst.pickFavoring): 1 (init's), or below 1 to keep that path
	// unless the other is cheaper by the margin.
	favor float64
	epoch time.Time
	est   [rgetClasses]pathEst
	regs  uint64 // pipelined receives registered so far (under PML.mu, not mu)
}

func (c *rgetChoice) init(explore time.Duration) {
	if explore <= 0 {
		explore = 20 * time.Millisecond
	}
	c.explore, c.epoch, c.favor = int64(explore), time.Now(), 1
}

// now is the time in ns since init, monotonic.
func (c *rgetChoice) now() int64 { return int64(time.Since(c.epoch)) }

// choose picks the path of a serial message whose rest is n bytes (the
// read first, when neither was measured).
func (c *rgetChoice) choose(n int) bool { return c.chooseAt(n, c.now(), pathRead) }

// chooseAt is choose at now, trying first when neither path was measured.
func (c *rgetChoice) chooseAt(n int, now int64, first int) bool {
	k := rgetClass(n)
	c.mu.Lock()
	read, e := c.est[k].pickFavoring(now, c.explore, first, c.favor)
	c.est[k] = e
	c.mu.Unlock()
	return read
}

// note records that the rest of a serial message, n bytes, took d by path.
func (c *rgetChoice) note(path int, n int, d time.Duration) { c.noteAt(path, n, n, d, c.now()) }

// noteAt records that bytes bytes of size class rgetClass(n) took d by
// path, at now.
func (c *rgetChoice) noteAt(path int, n, bytes int, d time.Duration, now int64) {
	k := rgetClass(n)
	c.mu.Lock()
	if e := &c.est[k]; c.warmUp && !e.warmed[path] {
		e.warmed[path], e.at[path] = true, now // so the path counts as not measured, and is taken again
	} else {
		*e = e.note(path, d, bytes, now)
	}
	c.mu.Unlock()
}

// Serial sends (Config.SerialCarryMax): a rendezvous of at most
// pml_ob1_serial_carry_max bytes that is not part of a one-way
// stream (Comm.streamingTo) and starts while no other send of the rank is
// in flight (a ping-pong's) carries its payload in its first fragment, as
// a stream's does, or offers it for the receiver's single-copy read.
// Which is faster turns with the placement: osu lat, carried against
// read, one binary: near 8 KiB 0.79x, 16 KiB 0.95x, 32 KiB 1.06x; far
// 1.44x, 1.69x, 2.02x. So the sender times such sends from the plan to
// the completion (the receiver's ACK or FIN: the time the buffer was held,
// which a blocking Send waits for), per size class, and the way that was
// faster lately goes on (pathEst: the read first, the first measurement
// of each way dropped, the slower way tried again once its timing is older
// than pml_ob1_rget_explore), in runs of serialRun sends (serialChoice.runs). A
// send whose receive is late is slower by the same wait either way, and a
// carried one that arrives unexpected loses its payload (the receive asks
// for it as FRAGs), which the timing counts against carrying. The limit
// is 16 KiB by default: a carried send goes as a serial record
// (btl.LockedSender's serial) that sm's fast box takes up to 16 KiB, and
// a blocking Recv takes it from there directly: osu lat 16 KiB near
// 1.03-1.07x -> 0.87-0.94x of Open MPI, far 0.94x -> 0.96x with serialCut
// (tagged rounds, docs/bench/2026-11-30/s4). Through a fragment, as before sm's
// box took them, 16 KiB gained 0-5% near and lost about as much far.

// serialRuns is the run of serial sends in progress per size class: the
// way picked for the first send of a run goes on for serialRun sends, so
// that a way tried again after a while is measured warm (a lone carried
// send among reads took 3-4x a carried one's time in a run: its
// fragment's lines and the receiver's copy start cold), and every
// serialEvery-th send of a run is timed. Its words are read and written
// without a lock (relaxed stores: a rank's goroutines racing here only
// shift a run's length); a run's first send takes its choice's lock.
type serialRuns struct {
	left  [rgetClasses]atomic.Uint32 // sends of the run still to go
	other [rgetClasses]atomic.Uint32 // 1: the run goes the other way (carried, split), 0: read (whole)
}

// serialRun and serialEvery: a run's length, and which of its sends are
// timed (a clock read costs ~40 ns here, ~1.4% of a far 8 KiB one-way).
const (
	serialRun   = 32
	serialEvery = 4
)

// serialChoice is one choice of serial sends, its estimates and its
// runs: carried or read (PML.serial), split or read whole (serialSplit).
type serialChoice struct {
	rgetChoice
	runs serialRuns
}

// way picks the way of a serial send of n bytes (see above): the other
// way (carried, split), true, or the read (whole), false; t0 is when a
// timed one started, on c's clock (0: not timed).
func (c *serialChoice) way(n int) (other bool, t0 int64) {
	k := rgetClass(n)
	runs := &c.runs
	if left := runs.left[k].Load(); left > 0 {
		relaxed.Store32(&runs.left[k], left-1)
		if left%serialEvery == 0 {
			t0 = max(c.now(), 1)
		}
		return runs.other[k].Load() != 0, t0
	}
	t0 = max(c.now(), 1)
	other = !c.chooseAt(n, t0, pathRead)
	var way uint32
	if other {
		way = 1
	}
	relaxed.Store32(&runs.other[k], way)
	relaxed.Store32(&runs.left[k], serialRun-1)
	return other, t0
}

// splitFavor: a serial send asks for a split read only when splits were
// more than 5% faster than whole reads lately. The two are within ~11% of
// each other either way (osu lat 32 KiB: split 0.89x near, 1.11x far);
// without the margin, noisy timings in the far placement chose splits
// often enough to cost 3-6% there (12 rounds each, two batches).
const splitFavor = 0.95

// serialDone notes the time of r, a timed serial send that completed, as
// the way it went: a split its receiver declined (splitRead: the sender
// not seen polling, a send of the receiver's in flight) was a whole read
// and is timed as one. (Timed as a split, such reads, fast where splits
// are slow, made splits look as fast as whole reads: an estimate is the
// least of its last few times.)
func (p *PML) serialDone(r *Request) {
	c, path := &p.serial, pathRead
	if !p.peers[r.peer].lim.carriable(len(r.buf)) {
		c = &p.serialSplit
	}
	if r.carried || r.split && r.wrote {
		path = pathPipe
	}
	now := c.now()
	c.noteAt(path, len(r.buf), len(r.buf), time.Duration(now-r.st0), now)
	c.cutLosing(len(r.buf), path)
}

// serialCut: a run of serial sends ends early once its way, just timed,
// costs more than this many times the other way: trying the slower way
// again is then paid for about serialEvery+1 sends rather than serialRun.
// osu lat 16 KiB far, 23 rounds (docs/bench/2026-11-30/s4, ab/cut-lat16.txt):
// 0.984x of Open MPI with whole runs of carried sends, 0.957x with the
// cut, 0.941x reading alone.
const serialCut = 1.25

// cutLosing ends size n's run when it goes by path and path's estimate is
// above serialCut times the other's, so that the next send chooses again.
func (c *serialChoice) cutLosing(n int, path int) {
	k := rgetClass(n)
	if (c.runs.other[k].Load() != 0) != (path == pathPipe) || c.runs.left[k].Load() == 0 {
		return
	}
	c.mu.Lock()
	e := &c.est[k]
	mine, other := e.cost(path), e.cost(1-path)
	c.mu.Unlock()
	if mine > 0 && other > 0 && mine > serialCut*other {
		relaxed.Store32(&c.runs.left[k], 0)
	}
}

// serialLocked says whether a RNDV matched now is serial (see above): no
// other receive posted, no message unexpected, no pipelined receive in
// flight. Called with p.mu held, after the match.
func (p *PML) serialLocked() bool {
	posted, unexpected, _ := p.eng.Len()
	return posted == 0 && unexpected == 0 && len(p.recvs) == 0
}

// planReadLocked decides for a RNDV of size bytes matched by r whose rest
// after the first chunk is rest bytes: read it (true) or ask for FRAGs. An
// adaptive serial message that goes by the pipeline is marked for timing
// (r.rgetT0 set when its ACK goes out). Called with p.mu held.
func (p *PML) planReadLocked(r *Request, src int, h *matchHdr, rest int) bool {
	l := &p.peers[src].lim
	offered := h.flags&flagRget != 0
	r.rg.timed = false
	if rest <= 0 || !offered || !l.adaptive || l.inBand(int(h.size)) || !p.serialLocked() {
		return planRead(int(h.size), l, offered, false)
	}
	read := planRead(int(h.size), l, offered, p.rget.choose(rest))
	r.rg.timed = true
	return read
}

// rgetMark is a receive's part in the measurements: whether it is timed,
// and for the pipeline, the registration it was (under PML.mu), when its
// first FRAG arrived and the bytes it had then (set by onFrag).
type rgetMark struct {
	timed bool
	reg   uint64
	t0    int64
	from  int
}

// startPipeLocked notes that r, a timed receive, asks for FRAGs now, with
// inFlight other pipelined receives registered. Every registration counts,
// so endPipeLocked can tell whether another transfer overlapped r's.
func (c *rgetChoice) startPipeLocked(r *Request, inFlight int) {
	c.regs++
	if !r.rg.timed {
		return
	}
	r.rg.timed = inFlight == 0
	r.rg.reg, r.rg.t0 = c.regs, 0
}

// fragArrived starts the clock of a timed pipelined receive at its first
// FRAG. What is compared with a read is the data's movement: the ACK's
// trip and the sender's reaction to it are left out, as the sender's
// reaction to the FIN is left out of a read (a sender that went to sleep
// while waiting would otherwise count its wake-up against the pipeline).
func (c *rgetChoice) fragArrived(r *Request) {
	if r.rg.timed && r.rg.t0 == 0 {
		r.rg.t0, r.rg.from = max(c.now(), 1), r.received
	}
}

// endPipeLocked says whether r, whose last FRAG is in, is to be measured:
// timed, and no other pipelined receive started while it ran.
func (c *rgetChoice) endPipeLocked(r *Request) bool {
	return r.rg.timed && c.regs == r.rg.reg
}
