package pml

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/relaxed"
	"github.com/gorun-mpi/gorun/internal/spinlock"
)

// Waiting, in one place: a waiting call (Wait, WaitFor) polls Progress,
// yields its core between idle polls when the rank is oversubscribed,
// passes through Go's scheduler now and then, and blocks when its spin
// phase is over: SpinCount idle polls and, when the rank has a core of its
// own, pml_ob1_spin_time more (a Barrier's waits at least barrierSpin; see
// spun). One blocked goroutine at a time (the sleeper) holds progMu and
// sleeps in the primary Sleeper (see btl.Sleeper for how it is chosen),
// after arming the other Sleepers (Watchers) to wake it; the others wait
// on their request's channel or on gen, which the sleeper closes when it
// gives the role up (and replaces, when one took it). Local events that
// no peer announces (a send to self, a cancel, a lost peer, Close) kick
// the sleeper.
//
// Other goroutines of the rank. With GOMAXPROCS at the rank's share of the
// cores (often 1), a waiting goroutine holds the rank's only P while it
// polls, and a sleeper in the transport holds it in a system call until
// the runtime's monitor thread takes it back (20 us to 20 ms later). So a
// wait that sees goroutines ready to run (othersRunnable) lets them run
// first: as it starts, at its first idle poll and every othersEvery idle
// polls it passes through Go's scheduler when one is ready, and the
// would-be sleeper does not sleep while one is (it polls once each time
// they give the core back).
// A goroutine that receives and hands each message over a channel to
// another so answers within microseconds, and a CPU-bound goroutine beside
// a blocked Recv keeps its core. The looks as a wait starts and at its
// first idle poll are skipped while recent looks found nobody (see
// quietAfter), so a rank with one goroutine pays about one look per
// quietEvery waits plus one per othersEvery idle polls.
//
// Oversubscribed, a rank also keeps to a CPU of its own, spread by rank
// (see placer).

// waitState is what waits share.
type waitState struct {
	primary  btl.Sleeper   // where the sleeper sleeps
	wake     func()        // primary.Wake, bound once
	watchers []btl.Watcher // the other Sleepers: armed while the sleeper sleeps
	runners  []runner      // modules that show which ranks are on a core
	yielder  coreYielder   // the one runner, when it yields the core itself

	active atomic.Bool // a goroutine holds the sleeper role
	genMu  sync.Mutex
	gen    chan struct{} // closed when the sleeper role is given up, if taken
	// genTaken says that a waiter took gen since it was made (genMu): a
	// sleeper that gives the role up replaces gen only then, so a rank
	// whose one goroutine sleeps allocates nothing per sleep.
	genTaken bool

	// idleTick counts the rank's idle polls (see idleFor, goschedEvery).
	// An atomic add is no extra cost there: each poll already takes and
	// drops two locks.
	idleTick atomic.Uint32

	// quiet counts the looks at the run queues in a row that found no
	// other goroutine ready to run (see othersReady).
	quiet atomic.Uint32

	// wakeSpin says that the last sleep was ended by work within
	// wakeSpin: the spin phases poll that long before the next sleep.
	wakeSpin atomic.Bool

	// events counts the progress passes, of any goroutine, that handled
	// something: a sleeper-to-be that yields (yieldToOthers) looks at it
	// to learn that another goroutine's poll may have ended its wait.
	events atomic.Uint64

	place placer // oversubscribed: the CPU this rank keeps to (see placer)
}

// runner is implemented by a BTL that shows which ranks are on a core
// (sm: a flag per rank in the shared segment).
type runner interface {
	SetRunning(on bool)
	PeerRunning(rank int) bool
}

// init chooses the primary sleeper among mods by capability: the one
// Sleeper that is not a Watcher, or the first Sleeper when all are, or the
// PML's own channel when none is. Two Sleepers that cannot watch are an
// error: the rank could sleep in only one of them.
func (w *waitState) init(mods []btl.Module) error {
	var sleepers []btl.Sleeper
	var blind []string
	for _, m := range mods {
		s, ok := m.(btl.Sleeper)
		if !ok {
			continue
		}
		sleepers = append(sleepers, s)
		if _, watches := m.(btl.Watcher); !watches {
			blind = append(blind, m.Name())
			w.primary = s
		}
	}
	if len(blind) > 1 {
		return fmt.Errorf("pml: BTLs %s all sleep without watching for the others (btl.Watcher); a rank can sleep in only one of them", strings.Join(blind, ", "))
	}
	if w.primary == nil && len(sleepers) > 0 {
		w.primary = sleepers[0]
	}
	for _, s := range sleepers {
		if s != w.primary {
			w.watchers = append(w.watchers, s.(btl.Watcher))
		}
	}
	if w.primary == nil {
		w.primary = newChanSleeper()
	}
	w.wake = w.primary.Wake
	for _, m := range mods {
		if rn, ok := m.(runner); ok {
			w.runners = append(w.runners, rn)
		}
	}
	if len(w.runners) == 1 {
		// Asserted once here: an interface-to-interface assertion per
		// yield costs a lookup in the runtime's itab table.
		w.yielder, _ = w.runners[0].(coreYielder)
	}
	w.gen = make(chan struct{})
	return nil
}

// chanSleeper is the primary when no BTL sleeps (self only): every event
// that can end its sleep is local and kicks it.
type chanSleeper chan struct{}

func newChanSleeper() chanSleeper { return make(chanSleeper, 1) }

func (c chanSleeper) Sleep(d time.Duration) {
	if d <= 0 {
		<-c
		return
	}
	t := time.NewTimer(d)
	select {
	case <-c:
	case <-t.C:
	}
	t.Stop()
}

func (c chanSleeper) Wake() {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Progress polls every BTL once. It returns the number of events handled,
// or 0 at once when another goroutine is progressing.
func (p *PML) Progress() int {
	if p.closed.Load() || !p.progMu.TryLock() {
		return 0
	}
	return p.pass()
}

// pass is Progress once progMu is taken; it releases it.
func (p *PML) pass() int {
	n := p.progressLocked()
	p.progMu.Unlock()
	if h := p.hook.Load(); h != nil {
		if k := (*h)(); k > 0 {
			n += k
			p.wait.noteEvents()
		}
	}
	return n
}

// passEvery is how often a wait for one peer's message makes a full
// progress pass (Progress: every module, every peer, the collectives'
// hook): once per passEvery polls, counted across the rank's waits, so that
// a stream of waits that each end within a few polls (a ping-pong) still
// returns acks, drains queued sends and advances other transfers. In
// between it polls only where that peer's messages arrive (pollFor). Only
// waits poll so (a blocking receive, a send waiting for its answer, a
// blocking probe): Iprobe and Test keep a full pass per call, since a
// program that computes between two calls would otherwise move its other
// transfers on passEvery times less often.
const passEvery = 8

// peekPolls is how many times pollFor asks its source's module whether a
// poll would find anything (btl.SourcePoller.Waiting: a few loads, no
// lock), with a spin-wait hint (spinlock.Pause, ~30 ns here) after each
// no, before it polls anyway. It does so with the PML's progress lock
// held, which Close takes, so the BTL's memory stays mapped meanwhile.
// A PollFrom that finds nothing costs the BTL's lock and the wait's
// bookkeeping after it (idleFor: an atomic add); the look costs neither,
// so a ping-pong's message is taken sooner after it lands. osu lat, one
// binary with the look on and off (30 rounds tagged by bench/shmfloor):
// near placement 1-512 B -2 to -7%, 1 KiB-4 KiB within 2%; far within
// 2%; mr and bibw -3 to +1%. Without the hint, or with 16 looks, 512 B-2
// KiB lost 3-6% near.
const peekPolls = 4

// othersEveryFor is the idleState.othersEvery of a wait whose polls are
// pollFor(src): othersEveryLooking when they look first.
func (p *PML) othersEveryFor(src int) uint32 {
	if src >= 0 && p.peers[src].poller != nil {
		return othersEveryLooking
	}
	return othersEvery
}

// pollFor is one poll of a wait for a message from world rank src (-1:
// from anyone, or a wait that is not for one peer's message): through the
// peer's module alone (btl.SourcePoller), except every passEvery-th poll,
// which is a full Progress pass. A ping-pong's message is then handed
// over without the pass's layers (the PML's and the BTL's passes, the
// self BTL, the collectives' hook, the other boxes): callgrind, a round
// trip of BenchmarkPingPongOneGoroutine/0 3459 -> 3304 instructions; osu
// lat (3-way nway, main against itself within 0.97-1.04) 0-256 B -3 to
// -9% with the host fast, 64-256 B -5 to -8% with it slow, 8 KiB-1 MiB
// -4 to -11% in one take (a rendezvous's sender waits for its FIN the
// same way); bw, bibw and mr unchanged.
func (p *PML) pollFor(src int) int {
	var sp btl.SourcePoller
	if src >= 0 {
		sp = p.peers[src].poller
	}
	if sp == nil {
		return p.Progress()
	}
	if p.closed.Load() || !p.progMu.TryLock() {
		return 0
	}
	if p.sincePass++; p.sincePass >= passEvery {
		return p.pass()
	}
	for i := 0; i < peekPolls && !sp.Waiting(src); i++ { // see peekPolls
		spinlock.Pause()
	}
	n := sp.PollFrom(src)
	p.endPass()
	p.progMu.Unlock()
	if n > 0 {
		p.wait.noteEvents()
	}
	return n
}

// SetProgressHook makes every Progress call that polled the BTLs also run
// fn, which returns how many events it handled (the coll package advances
// its schedules so). fn must not block or wait, and may be called from any
// goroutine that waits or tests.
func (p *PML) SetProgressHook(fn func() int) { p.hook.Store(&fn) }

// progressLocked polls every BTL once (progMu held).
func (p *PML) progressLocked() int {
	p.sincePass = 0
	n := 0
	for _, m := range p.mods {
		n += m.Progress()
		p.endPass() // the poll's batch of deliveries (recv.go)
	}
	if n > 0 {
		p.wait.noteEvents()
	}
	return n
}

// noteEvents moves events on with a plain store, not a locked add, which
// would cost the poll that delivers a ping-pong's message the wait for
// its store buffer: progressLocked's writers hold progMu, and a hook's
// may race one another, but whatever they store differs from what a
// waiter read before them, which is all yieldToOthers asks.
func (w *waitState) noteEvents() { relaxed.Store64(&w.events, w.events.Load()+1) }

// kick wakes the sleeper after a local event that no remote sender will
// announce (a send to self, a cancel, a lost peer, Close).
//
//go:noinline
func (p *PML) kick() {
	if p.wait.active.Load() {
		p.wait.wake()
	}
}

// sentTo is the tail of every send: a send to self is a local event.
func (p *PML) sentTo(dest int) {
	if dest == p.cfg.Rank {
		p.kick()
	}
}

// Wait blocks until r completes or ctx ends (ctx may be nil). It returns
// ctx's error, or errClosed when the PML closes first; nil once r is done
// (r's own result is in r).
func (p *PML) Wait(ctx context.Context, r *Request) error { return p.waitLook(ctx, r, true) }

// othersFirst is a blocking receive's look before it posts: a goroutine
// this one just readied (say, by handing it the last message over a
// channel) runs first, so that posting the receive comes after that
// goroutine's answer instead of before it. The receive's wait then skips
// its own look (waitLook's look argument).
func (p *PML) othersFirst() {
	if p.wait.othersReady() {
		runtime.Gosched()
	}
}

// waitLook is Wait; look says whether to look for other goroutines ready to
// run as it starts (false: the caller just did, see othersFirst).
//
// While the rank has sends whose receiver may split their read (bigSends),
// the wait says it is polling through the runner modules (sm's running
// flag: not otherwise used with a core per rank, and split reads are off
// without), so that a receiver splits a read only while the sender polls
// and will write its part (see splitRead).
func (p *PML) waitLook(ctx context.Context, r *Request, look bool) error {
	if p.bigSends.Load() == 0 {
		return p.waitSpin(ctx, r, look, 0)
	}
	p.setRunning(true)
	err := p.waitSpin(ctx, r, look, 0)
	p.setRunning(false)
	return err
}

// waitBarrier is Wait for a Barrier's message: its spin phase lasts at
// least barrierSpin (see there).
func (p *PML) waitBarrier(r *Request) (Status, error) {
	if err := p.waitSpin(nil, r, true, barrierSpin); err != nil {
		return Status{}, err
	}
	return r.status, r.err
}

// barrierSpin is the least spin time of a Barrier's waits (see spun for
// why a rank with a core of its own polls rather than sleeps). Programs
// time what follows a Barrier: ranks that left Init or allocated their
// buffers a few milliseconds apart met in a sleeping Barrier, and the
// first size a benchmark measured after it (0 B) came out at 1.3-2.8x the
// next one. Other waits spin pml_ob1_spin_time (0 by default): while a
// wait spins, the rank's other goroutines' timers fire late (a 1 ms
// time.Sleep beside a Recv spinning 20 ms: 130-165 us late against 85-110
// when the Recv sleeps, osu goroutine mode).
const barrierSpin = 20 * time.Millisecond

// waitSpin is waitLook with a spin phase's timed part of at least spin.
func (p *PML) waitSpin(ctx context.Context, r *Request, look bool, spin time.Duration) error {
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	idle := idleState{minSpin: spin}
	if !look {
		idle.polls = 1 // and not at the first idle poll either
	} else if !r.Done() && p.wait.othersReady() {
		// A goroutine this one just readied (say, by handing it the
		// last message over a channel) runs before we poll.
		idle.polls = 1
		runtime.Gosched()
	}
	src := r.polledFrom()
	idle.othersEvery = p.othersEveryFor(src)
	for !r.Done() {
		if p.pollFor(src) > 0 {
			idle.restart()
			continue
		}
		p.idleFor(r.awaited(), &idle)
		if idle.spins&63 == 0 && done != nil {
			select {
			case <-done:
				if r.Done() {
					return nil
				}
				return ctx.Err()
			default:
			}
		}
		if !p.spun(&idle) {
			continue
		}
		if err := p.block(ctx, done, r.waitChan); err != nil && !r.Done() {
			return err
		}
		p.afterBlock(&idle)
	}
	return nil
}

// WaitFor is Wait for a condition that is not a request (probe, finalize,
// WaitAny): it polls cond between progress calls and sleeps like Wait. It
// returns nil once cond holds, errClosed if the PML closes first.
func (p *PML) WaitFor(cond func() bool) error { return p.waitFrom(-1, cond) }

// waitFrom is WaitFor for a condition that a message from world rank src
// makes true (a probe for src's message): its polls are pollFor(src).
func (p *PML) waitFrom(src int, cond func() bool) error {
	idle := idleState{othersEvery: p.othersEveryFor(src)}
	for !cond() {
		if p.pollFor(src) > 0 {
			idle.restart()
			continue
		}
		p.idleFor(-1, &idle)
		if !p.spun(&idle) {
			continue
		}
		if err := p.block(nil, nil, nil); err != nil && !cond() {
			return err
		}
		p.afterBlock(&idle)
	}
	return nil
}

// idle is called after a poll that found nothing. Oversubscribed (more ranks
// than cores), it yields the core, as Open MPI's mpi_yield_when_idle does:
// the rank that holds the token gets the CPU instead of us spinning.
//
// Every goschedEvery idle polls it also passes through Go's scheduler. A
// goroutine that polls for 10 ms without doing so is preempted by a signal
// from the runtime's monitor thread, and on these virtual machines a signal
// costs the rank, and so its partner, far more than the ~100 ns a Gosched
// does: 8-byte ping-pong latency varied between 0.15 and 0.5 us from run
// to run with the signals and sat at 0.15 us without them.
func (p *PML) idle() { p.idleFor(-1, nil) }

// peerSpinMax bounds the polls a waiting rank makes without yielding while
// the rank it waits for is on a core (a few microseconds; a yield that
// switches costs ~8 us here).
const peerSpinMax = 100

// idleState is one wait's idle bookkeeping (nil: p.idle's shared count).
type idleState struct {
	polls       uint32 // idle polls of this wait
	othersEvery uint32 // idle polls between looks at the run queues (0: othersEvery)
	peerSpins   int    // polls without a yield while the awaited rank runs

	// The spin phase (see spun): idle polls since the wait began or last
	// handled an event, when its timed part ends (zero: not begun), and
	// whether the phase is over (a block's wake brought nothing).
	spins   int
	spinEnd time.Time
	spent   bool
	minSpin time.Duration // the least spin time (waitSpin)
}

// restart begins a new spin phase: the wait handled an event.
func (st *idleState) restart() { st.spins, st.spinEnd, st.spent = 0, time.Time{}, false }

// spinClockEvery: idle polls between two reads of the clock in the timed
// part of a spin phase (a read costs about as much as a poll), each with a
// pass through Go's scheduler (about 100 ns; every 5-10 us of polling).
const spinClockEvery = 256

// spun counts an idle poll of a wait's spin phase and reports whether the
// phase is over, so that the wait blocks: after SpinCount idle polls, and
// when the rank has a core of its own (not Yield) after SpinUsec more
// microseconds (pml_ob1_spin_time; a Barrier's waits at least barrierSpin,
// and any wait wakeSpin after a sleep that work ended within it).
// Oversubscribed, each idle poll yields the core to ranks that need it,
// and the count alone bounds the phase. With a core of its own the rank
// polls on: a sleep in the transport is a system call, after 20 us of
// which the Go runtime's monitor thread takes the rank's P back and,
// having done so, wakes every 20 us for the next millisecond and then
// every 40, 80 .. us up to 10 ms, each wake taking a core from a polling
// rank. Ranks that left Init or allocated their buffers a few milliseconds
// apart met in a sleeping Barrier, and the first size a benchmark measured
// after it (0 B) came out at 1.3-2.8x the next one; a wait that outlasts
// the count by less than the spin time ends without the system call (the
// same as Open MPI's ranks, which never sleep), at the price of the
// rank's other goroutines' timers (see barrierSpin). The clock is read from the
// SpinCount-th idle poll on, not before: the waits of a ping-pong end
// within a few polls and pay nothing for it.
func (p *PML) spun(st *idleState) bool {
	st.spins++
	if st.spent {
		return true
	}
	if st.spins < p.cfg.SpinCount {
		return false
	}
	spin := max(time.Duration(p.cfg.SpinUsec)*time.Microsecond, st.minSpin)
	if p.wait.wakeSpin.Load() {
		spin = max(spin, wakeSpin)
	}
	if p.cfg.Yield || spin <= 0 {
		return true
	}
	if st.spinEnd.IsZero() {
		st.spinEnd = time.Now().Add(spin)
		return false
	}
	if (st.spins-p.cfg.SpinCount)%spinClockEvery != 0 {
		return false
	}
	// Timers of the rank's other goroutines run when the P passes through
	// the scheduler: the sleep this phase replaces would have let the
	// runtime hand the P over within tens of microseconds.
	runtime.Gosched()
	return time.Now().After(st.spinEnd)
}

// wakeSpin is the spin phase's timed part after a sleep that work ended
// within it (waitState.wakeSpin). Two ranks that stream messages to each
// other in windows (osu bw, mr) otherwise fall into a steady mode in which
// each sleeps at the end of every window: a wake on these virtual machines
// takes longer than the other rank's SpinCount idle polls, so the woken
// rank's answer comes after its partner has gone to sleep too, and so on
// (osu bw 1-2048 B: 0.6 M messages/s, ~7000 sleeps of < 1 ms per rank,
// against ~6 M/s and tens of sleeps; entered when a rank loses its core
// for a while, e.g. under load). A rank whose sleeps are ended by work
// that soon polls that long instead, which ends the mode at the first
// sleep; one woken by work later, by its timeout, or by nothing (a truly
// idle rank) sleeps after SpinCount idle polls as before.
const wakeSpin = time.Millisecond

// othersEvery: idle polls between two looks at the run queues (see the
// top of this file); the first idle poll of a wait looks too.
// othersEveryLooking is othersEvery for a wait whose polls look before
// they poll (pollFor, peekPolls): such an idle poll takes ~190 ns against
// ~50, so the run queues are looked at about as often in time. With 32
// the look came 4x as late: osu goroutine's p99 (a message handed over a
// channel) 2.0 -> 4.0 us.
const (
	othersEvery        = 32
	othersEveryLooking = 8
)

// idleFor is idle for a wait on a message from rank src (-1: any source).
// When another goroutine of the rank is ready to run, it lets it run.
// Oversubscribed, it does not yield while src is polling on another core
// (up to peerSpinMax polls, counted in st.peerSpins): src's message may be
// a microsecond away, and a yield would hand our core to a rank that most
// likely has nothing to do. This cut shift's time per round by ~6% (8 ranks,
// 2 cores, 6 runs each way).
func (p *PML) idleFor(src int, st *idleState) {
	tick := p.wait.idleTick.Add(1)
	n := tick
	if st != nil {
		st.polls++
		n = st.polls
	}
	look := uint32(othersEvery)
	if st != nil && st.othersEvery != 0 {
		look = st.othersEvery
	}
	if n == 1 && p.wait.othersReady() || n%look == 0 && p.wait.othersLook() {
		runtime.Gosched()
		return
	}
	if p.cfg.Yield {
		if tick%placeEvery == 1 { // the rank's first idle poll, and every placeEvery-th
			p.wait.place.check(&p.cfg)
		}
		if src >= 0 && st != nil && st.peerSpins < peerSpinMax && p.peerRunning(src) {
			st.peerSpins++
		} else {
			if st != nil {
				st.peerSpins = 0
			}
			p.yieldCore()
		}
	}
	every := uint32(goschedEvery)
	if p.cfg.Yield {
		every = goschedEveryYielding
	}
	if tick%every == 0 { // the rank's idle polls, not this wait's: see goschedEvery
		runtime.Gosched()
	}
}

// runnable is the runtime's count of goroutines ready to run but not
// running (runtime/metrics; O(GOMAXPROCS) under the scheduler's lock,
// about 50 ns). The mutex serializes the sample's reuse: a waiter that
// finds it taken skips its look.
var runnable = struct {
	sync.Mutex
	s [1]metrics.Sample
}{s: [1]metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}}}

// quietAfter and quietEvery gate the looks at the run queues that a wait
// makes as it starts and at its first idle poll (othersReady): after
// quietAfter looks in a row found no other goroutine ready, only one start
// in quietEvery looks, until a look finds one. A look costs ~50 ns with
// warm caches but 0.3-0.6 us right after another process ran on the core,
// which is when an oversubscribed rank's wait starts: two looks per wait
// were most of what 889ed37 added to shift's round (8 ranks on 2 cores,
// about 1 us). A rank whose goroutines hand work to each other keeps
// finding one and so keeps looking every time; a goroutine that becomes
// ready in a rank that had none is still seen within othersEvery idle
// polls (those looks are not gated, and they reset the count).
const (
	quietAfter = 8
	quietEvery = 64
)

// othersReady is the gated look of a wait's start and first idle poll:
// othersRunnable, or false without looking when the recent looks found
// nothing (see quietAfter). quiet is loaded and stored, not added to, and
// stored with release order only (relaxed: an atomic store, a locked
// instruction on amd64, was 4% of a ping-pong's CPU time, two per Recv):
// goroutines racing on it lose counts, which only shifts when the next
// look comes.
func (w *waitState) othersReady() bool {
	q := w.quiet.Load()
	if skipLook(q) {
		relaxed.Store32(&w.quiet, q+1)
		return false
	}
	return w.othersLook()
}

// skipLook reports whether a gated look is skipped after q quiet looks.
func skipLook(q uint32) bool { return q >= quietAfter && q%quietEvery != 0 }

// othersLook is othersRunnable, counted in quiet.
func (w *waitState) othersLook() bool {
	if othersRunnable() {
		relaxed.Store32(&w.quiet, 0)
		return true
	}
	relaxed.Store32(&w.quiet, w.quiet.Load()+1)
	return false
}

// othersRunnable reports whether a goroutine of this process is ready to
// run and waits for a P.
func othersRunnable() bool {
	if !runnable.TryLock() {
		return false
	}
	metrics.Read(runnable.s[:])
	v := runnable.s[0].Value
	runnable.Unlock()
	return v.Kind() == metrics.KindUint64 && v.Uint64() > 0
}

// coreYielder is a runner that yields the core itself, flagged as not
// running meanwhile, more cheaply than SetRunning, yield, SetRunning do
// (sm: one close guard for the three).
type coreYielder interface{ YieldCore() }

// yieldCore gives up the core (sched_yield) with the rank flagged as not
// running while it is off.
func (p *PML) yieldCore() {
	if y := p.wait.yielder; y != nil {
		y.YieldCore()
		return
	}
	p.setRunning(false)
	unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
	p.setRunning(true)
}

// setRunning tells every runner module whether this rank polls.
func (p *PML) setRunning(on bool) {
	for _, rn := range p.wait.runners {
		rn.SetRunning(on)
	}
}

// peerRunning reports whether a runner module says src is on a core.
func (p *PML) peerRunning(src int) bool {
	for _, rn := range p.wait.runners {
		if rn.PeerRunning(src) {
			return true
		}
	}
	return false
}

// placer keeps an oversubscribed rank on a CPU of its own choosing: the
// rank's index among the ranks of its machine, modulo the CPUs it may run
// on (so ranks 0, 2, 4 .. on the first CPU and 1, 3, 5 .. on the second of
// two). It does not bind: at the rank's first idle poll and every
// placeEvery idle polls after (idleTick: of all its waits), the waiting
// goroutine looks at its CPU, and when it is not that one it sets its
// thread's affinity to that CPU alone and then back to the mask it had,
// which moves the thread and leaves the kernel free to move it again.
// Only when yielding (cfg.Yield), and only among the CPUs the rank's mask
// allows: a rank bound to one CPU stays there.
//
// The kernel moving a rank away again and again means that its CPU is
// busy with other work (a CPU hog there: its balancer moves ranks to the
// other CPU, and each move back costs the rank the hog's time slices), so
// the least time between two moves doubles with each move, from placeGap,
// and after placeMoves moves the rank leaves its placement to the kernel
// for good. Without other work a rank moves once or twice, as the job
// starts (5-8 moves in all per run of shift, 8 ranks). With a CPU hog
// pinned to the second of 2 CPUs, shift took 810 us/round with a fixed
// 2 ms gap and no limit, against 139 without placing.
//
// Why: ranks that always run (they yield, never sleep) count as cache-hot,
// and the kernel's balancer leaves them where they started for tens of
// milliseconds, often five ranks on one CPU and three on the other (seen
// in sched_switch traces of shift, 8 ranks on 2 CPUs), the first CPU then
// setting the pace. Spread by parity, every rank's left and right
// neighbours run on the other CPU, so a rank waiting for its left one
// finds it running there more often and catches its message while it
// spins (idleFor) instead of after a yield. Same take, 10 interleaved
// runs each of osu shift (10000 rounds): median 5.18 us/round without,
// 3.57 with, Open MPI 3.04; the ranks in blocks (0-3, 4-7) instead of by
// parity: 5.42 against 5.10 without. Placing once, as the PML starts,
// was no better than not placing (one take of 6 runs: 6.9 against 5.4):
// the sleeps of start-up and Barrier let the kernel move the ranks again.
type placer struct {
	mu    sync.Mutex    // TryLock: one goroutine of the rank places at a time
	state uint8         // placeUnknown, placeOff, placeOn
	want  int           // the CPU (placeOn)
	moved time.Time     // the last move
	gap   time.Duration // the least time from moved to the next move
	moves int           // moves so far
}

const (
	placeUnknown = iota // not computed yet
	placeOff            // no placement: one CPU allowed, the call failed, or placeMoves reached
	placeOn             // the rank keeps to want
)

// placeEvery is the idle polls between two looks at the CPU (a getcpu
// system call, ~0.1 us), placeGap the least time between the first two
// moves (a move is two sched_setaffinity calls and a migration, tens of
// us), which doubles with each move, and placeMoves the most moves.
const (
	placeEvery = 64
	placeGap   = 2 * time.Millisecond
	placeMoves = 4
)

// placeCPU is the CPU of the local-th rank of a machine among cpus, the
// CPUs it may run on.
func placeCPU(local int, cpus []int) int { return cpus[local%len(cpus)] }

// localIndex is rank's index among the ranks of its machine (nodes: each
// rank's machine, nil when all share one).
func localIndex(rank int, nodes []int) int {
	if nodes == nil {
		return rank
	}
	local := 0
	for r := 0; r < rank; r++ {
		if nodes[r] == nodes[rank] {
			local++
		}
	}
	return local
}

// check moves the calling thread to the rank's CPU if it runs elsewhere
// (see placer); another goroutine placing meanwhile makes it return.
func (pl *placer) check(cfg *Config) {
	if !pl.mu.TryLock() {
		return
	}
	defer pl.mu.Unlock()
	switch pl.state {
	case placeOff:
		return
	case placeUnknown:
		pl.state = placeOff
		var set unix.CPUSet
		if unix.SchedGetaffinity(0, &set) != nil {
			return
		}
		var cpus []int
		for c := 0; c < len(set)*64 && len(cpus) < set.Count(); c++ {
			if set.IsSet(c) {
				cpus = append(cpus, c)
			}
		}
		if len(cpus) < 2 {
			return
		}
		pl.want, pl.state = placeCPU(localIndex(cfg.Rank, cfg.NodeID), cpus), placeOn
	}
	var cpu uint32
	unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	if pl.due(int(cpu), time.Now()) {
		moveTo(pl.want)
	}
}

// due reports whether a rank found on cpu at now moves to want, and counts
// the move: not on want, and at least gap after the last move, which
// doubles the gap; the placeMoves-th move is the last (placeOff).
func (pl *placer) due(cpu int, now time.Time) bool {
	if cpu == pl.want || now.Sub(pl.moved) < pl.gap {
		return false
	}
	pl.moved, pl.gap = now, max(2*pl.gap, placeGap)
	if pl.moves++; pl.moves == placeMoves {
		pl.state = placeOff
	}
	return true
}

// moveTo migrates the calling thread to cpu: its affinity set to cpu alone,
// then back to the mask it had (the thread stays where the first call put
// it). Nothing happens when the mask no longer allows cpu.
func moveTo(cpu int) {
	runtime.LockOSThread() // both calls on the same thread
	defer runtime.UnlockOSThread()
	var old, one unix.CPUSet
	if unix.SchedGetaffinity(0, &old) != nil || !old.IsSet(cpu) {
		return
	}
	one.Set(cpu)
	if unix.SchedSetaffinity(0, &one) == nil {
		unix.SchedSetaffinity(0, &old)
	}
}

// goschedEvery: idle polls between passes through Go's scheduler (about
// 50 us of polling; far below the runtime's 10 ms preemption period), and
// goschedEveryYielding the same when each idle poll yields the core (a
// yield that switches takes ~8 us here, so about 0.5 ms). Counted over all
// the rank's waits (waitState.idleTick), not per wait: a loop of short
// waits (a message-rate window: a few idle polls each) otherwise never
// passes through the scheduler, and with GOMAXPROCS 1 the GC's mark worker
// runs only there, so each GC cycle's mark phase (write barriers on, new
// objects marked) lasted until the monitor's 10 ms preemption: 5-9 ms of
// every ~20-40 ms in osu mr.
const (
	goschedEvery         = 1024
	goschedEveryYielding = 64
)

// afterBlock sets the spin phase to continue with after a block: a wake
// that brought work starts a new spin phase; one that brought nothing (a
// timeout, another goroutine's event) goes back to sleep at once, so an idle
// rank does not spin again every SleepTimeout.
func (p *PML) afterBlock(st *idleState) {
	if p.Progress() > 0 {
		st.restart()
		return
	}
	st.spent = true
}

// block is the sleeping half of a wait. One goroutine at a time becomes the
// sleeper: it holds progMu and sleeps in the primary until a sender wakes
// it, then gives the role up (closing gen so others re-contend). The others
// block on their own completion channel (wc) or on gen. It returns
// errClosed after Close, ctx's error when ctx ends.
func (p *PML) block(ctx context.Context, done <-chan struct{}, wc func() chan struct{}) error {
	var own chan struct{}
	if wc != nil {
		if own = wc(); own == nil {
			return nil // completed meanwhile
		}
	}
	if p.closed.Load() {
		return errClosed
	}
	w := &p.wait
	if p.cfg.Yield && len(w.runners) > 0 {
		// Not polling while blocked: peers waiting for us yield at once.
		p.setRunning(false)
		defer p.setRunning(true)
	}
	if w.active.CompareAndSwap(false, true) {
		// Not while another goroutine is ready to run: sleeping in the
		// transport would hold the P from it. Poll each time it gives
		// the P back; the other waiters stay parked meanwhile.
		if !p.yieldToOthers(done, own) {
			p.sleep(ctx, done)
		}
		// Give the role up before waking the others: a waiter that reads
		// the new gen and still sees the role taken is then sure that a
		// later sleeper will close that gen.
		w.active.Store(false)
		w.genMu.Lock()
		if w.genTaken {
			close(w.gen)
			w.gen, w.genTaken = make(chan struct{}), false
		}
		w.genMu.Unlock()
		if p.closed.Load() {
			return errClosed
		}
		if done != nil {
			select {
			case <-done:
				return ctx.Err()
			default:
			}
		}
		return nil
	}
	w.genMu.Lock()
	g := w.gen
	w.genTaken = true
	w.genMu.Unlock()
	if !w.active.Load() {
		return nil // the role freed meanwhile: contend again
	}
	select {
	case <-own:
	case <-g:
	case <-done:
		return ctx.Err()
	}
	return nil
}

// yieldToOthers is the sleeper-to-be's turn while another goroutine is
// ready to run: it lets it run and polls each time it gets the P back. It
// reports true when something ended the block meanwhile (an event, its
// own completion, done, Close), false when it should sleep now.
//
// An event is any goroutine's, not only its own poll's: a goroutine that
// polls all the time (a loop of Tests) takes every arrival first and
// keeps another one ready to run, so a waiter that looked only at its own
// polls (a Probe, which has no channel of its own) kept the role, and the
// waiters parked behind it their sleep, for good (soak, 4 ranks on 2 cores
// with pml_ob1_yield_when_idle no: rounds stalled in 2 of 4 runs).
func (p *PML) yieldToOthers(done <-chan struct{}, own chan struct{}) bool {
	ev := p.wait.events.Load()
	for p.wait.othersLook() {
		runtime.Gosched()
		if p.closed.Load() || p.Progress() > 0 || p.wait.events.Load() != ev {
			return true
		}
		select {
		case <-own: // nil: never ready
			return true
		case <-done:
			return true
		default:
		}
	}
	return false
}

// sleep is the sleeper's turn: with progMu held, arm the watchers, poll
// every module once more, and sleep in the primary if nothing came.
func (p *PML) sleep(ctx context.Context, done <-chan struct{}) {
	w := &p.wait
	p.progMu.Lock()
	defer p.progMu.Unlock()
	if p.closed.Load() {
		return
	}
	for _, wt := range w.watchers {
		wt.Watch(w.wake)
	}
	if p.progressLocked() == 0 {
		var stop func() bool
		if done != nil {
			stop = context.AfterFunc(ctx, w.wake)
		}
		slept := time.Now()
		w.primary.Sleep(p.cfg.SleepTimeout)
		short := time.Since(slept) < wakeSpin
		if stop != nil {
			stop()
		}
		// A sleep that work ended within wakeSpin: spinning would have
		// cost no more, and the wake cost the partner its own spin.
		w.wakeSpin.Store(p.progressLocked() > 0 && short)
	}
	for _, wt := range w.watchers {
		wt.Watch(nil)
	}
}
