package pml

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml/match"
)

// Config is what the PML needs from the job and the parameters.
type Config struct {
	Rank, Size int
	// Modules are the selected BTLs. For each peer the PML uses the module
	// of highest exclusivity that reaches it.
	Modules []btl.Module
	// SpinCount is how many progress polls a waiting call makes before it
	// sleeps in the transport.
	SpinCount int
	// Yield makes a waiting call yield its core between polls (set when the
	// ranks outnumber the cores). YieldWhenIdle is pml_ob1_yield_when_idle,
	// from which SetYield computes it.
	Yield         bool
	YieldWhenIdle string
	// UnexpectedLimit bounds the bytes of unexpected eager payload this rank
	// can be sent: each peer gets an equal share as eager credit (at least
	// four eager messages' worth); a sender out of credit sends by
	// rendezvous, whose unexpected part is a header only. 0: no limit.
	UnexpectedLimit int64
	// RgetLimit: messages of at least this many bytes use the single-copy
	// read when the BTL supports it; 0 disables it.
	RgetLimit int
	// RgetMax: ... and of at most this many bytes; 0: no upper bound.
	RgetMax int
	// SleepTimeout bounds one sleep in the transport (peer-loss checks and
	// pending-queue retries happen at least this often while idle).
	SleepTimeout time.Duration
	Log          hclog.Logger
}

// peer is what the PML knows about one world rank.
type peer struct {
	m btl.Module
	// lim are the protocol limits towards this peer. The first chunk of a
	// rendezvous is a whole max-size fragment (Open MPI vader's "phase 1"
	// fragment, btl_vader_rndv_eager_limit), so the receiver starts
	// copying while the ACK travels.
	lim  limits
	lost atomic.Bool
	// credit: payload bytes we may still send eagerly to this peer before
	// it has matched them (flow control; see creditLimit). Unused when
	// creditLimit is 0.
	credit atomic.Int64
	// owed: eager payload bytes from this peer we have delivered but not
	// yet returned as credit (under PML.mu).
	owed int64
}

// PML is the point-to-point engine of one rank.
type PML struct {
	cfg   Config
	log   hclog.Logger
	peers []peer
	mods  []btl.Module

	progMu sync.Mutex // serializes btl Progress; BTL callbacks run under it

	// creditLimit is each peer's eager credit (0: flow control off).
	creditLimit int64

	mu         sync.Mutex // guards everything below
	eng        *match.Engine
	sends      map[uint64]*Request // awaiting ACK or FIN
	recvs      map[uint64]*Request // rendezvous receives awaiting FRAGs
	nextID     uint64
	unexpBytes int64
	nextCtx    uint32
	pairs      []match.Pair
	msgFree    []*match.Msg        // recycled Msgs
	unexpFree  []*unexp            // recycled unexpected records, with their buffers
	hdrBuf     [btl.MaxHeader]byte // for sends made under mu
	finalized  bool

	activeSends atomic.Int64

	// spare is a zeroed request kept for the next blocking call.
	spare atomic.Pointer[Request]

	// sleeping (see block)
	sleeper       btl.Module
	runner        runner // the sleeper, when it shows which ranks are on a core
	sleeperActive atomic.Bool
	genMu         sync.Mutex
	gen           chan struct{} // closed when the sleeper role is given up
	closed        atomic.Bool

	// idleTick counts idle polls (see idle). An atomic add is no extra
	// cost there: each poll already takes and drops two locks.
	idleTick atomic.Uint32
}

// New builds the PML over cfg.Modules and registers its BTL callbacks.
func New(cfg Config) (*PML, error) {
	if cfg.Log == nil {
		cfg.Log = hclog.NewNullLogger()
	}
	if cfg.SpinCount <= 0 {
		cfg.SpinCount = 1
	}
	if cfg.SleepTimeout <= 0 {
		cfg.SleepTimeout = 50 * time.Millisecond
	}
	p := &PML{
		cfg:     cfg,
		log:     cfg.Log,
		peers:   make([]peer, cfg.Size),
		mods:    cfg.Modules,
		eng:     match.New(cfg.Size),
		sends:   make(map[uint64]*Request),
		recvs:   make(map[uint64]*Request),
		nextCtx: 1,
		gen:     make(chan struct{}),
	}
	for i := range p.peers {
		var best btl.Module
		for _, m := range cfg.Modules {
			if m.Reachable(i) && (best == nil || m.Attributes().Exclusivity > best.Attributes().Exclusivity) {
				best = m
			}
		}
		if best == nil {
			names := make([]string, 0, len(cfg.Modules))
			for _, m := range cfg.Modules {
				names = append(names, m.Name())
			}
			return nil, fmt.Errorf("pml: no BTL reaches rank %d (selected: %v); check the btl parameter", i, names)
		}
		a := best.Attributes()
		p.peers[i] = peer{m: best, lim: limits{eager: a.EagerLimit, firstChunk: a.MaxSendSize, maxSend: a.MaxSendSize,
			rget: a.SingleCopy, rgetMin: cfg.RgetLimit, rgetMax: cfg.RgetMax}}
		if a.MaxSendSize <= 0 || a.EagerLimit < 0 || a.EagerLimit > a.MaxSendSize {
			return nil, fmt.Errorf("pml: BTL %s has eager limit %d and max send size %d; want 0 ≤ eager ≤ max send > 0", best.Name(), a.EagerLimit, a.MaxSendSize)
		}
	}
	if cfg.UnexpectedLimit > 0 {
		p.creditLimit = cfg.UnexpectedLimit / int64(max(1, cfg.Size-1))
		for i := range p.peers {
			p.creditLimit = max(p.creditLimit, 4*int64(p.peers[i].lim.eager))
		}
		for i := range p.peers {
			p.peers[i].credit.Store(p.creditLimit)
		}
	}
	for _, m := range cfg.Modules {
		m.Register(btl.TagPMLMatch, p.onMatch)
		m.Register(btl.TagPMLRndv, p.onRndv)
		m.Register(btl.TagPMLAck, p.onAck)
		m.Register(btl.TagPMLFrag, p.onFrag)
		m.Register(btl.TagPMLFin, p.onFin)
		m.Register(btl.TagPMLCtl, p.onCtl)
		m.OnPeerLost(p.onPeerLost)
		if p.sleeper == nil || m.Name() == "sm" {
			p.sleeper = m
		}
	}
	p.runner, _ = p.sleeper.(runner)
	return p, nil
}

// Rank and Size of the world.
func (p *PML) Rank() int { return p.cfg.Rank }
func (p *PML) Size() int { return p.cfg.Size }

// Progress polls every BTL once. It returns the number of events handled,
// or 0 at once when another goroutine is progressing.
func (p *PML) Progress() int {
	if p.closed.Load() || !p.progMu.TryLock() {
		return 0
	}
	n := 0
	for _, m := range p.mods {
		n += m.Progress()
	}
	p.progMu.Unlock()
	return n
}

// kick wakes the sleeper after a local event that no remote sender will
// announce (a send to self, a cancel).
func (p *PML) kick() {
	if p.sleeperActive.Load() {
		p.sleeper.Wake()
	}
}

// Wait blocks until r completes or ctx ends (ctx may be nil).
func (p *PML) Wait(ctx context.Context, r *Request) error {
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	spins, peerSpins := 0, 0
	for !r.Done() {
		if p.Progress() > 0 {
			spins = 0
			continue
		}
		p.idleFor(r.awaited(), &peerSpins)
		spins++
		if spins&63 == 0 && done != nil {
			select {
			case <-done:
				if r.Done() {
					return nil
				}
				return ctx.Err()
			default:
			}
		}
		if spins < p.cfg.SpinCount {
			continue
		}
		if err := p.block(ctx, done, r.waitChan); err != nil && !r.Done() {
			return err
		}
		spins = p.afterBlock()
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

// runner is implemented by a BTL that shows which ranks are on a core.
type runner interface {
	SetRunning(on bool)
	PeerRunning(rank int) bool
}

// peerSpinMax bounds the polls a waiting rank makes without yielding while
// the rank it waits for is on a core (a few microseconds; a yield that
// switches costs ~8 us here).
const peerSpinMax = 100

// idleFor is idle for a wait on a message from rank src (-1: any source).
// Oversubscribed, it does not yield while src is polling on another core
// (up to peerSpinMax polls, counted in *peerSpins): src's message may be
// a microsecond away, and a yield would hand our core to a rank that most
// likely has nothing to do. This cut shift's time per round by ~6% (8 ranks,
// 2 cores, 6 runs each way).
func (p *PML) idleFor(src int, peerSpins *int) {
	if p.cfg.Yield {
		rn := p.runner
		if rn != nil && src >= 0 && peerSpins != nil && *peerSpins < peerSpinMax && rn.PeerRunning(src) {
			*peerSpins++
		} else {
			if peerSpins != nil {
				*peerSpins = 0
			}
			if rn != nil {
				rn.SetRunning(false)
			}
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			if rn != nil {
				rn.SetRunning(true)
			}
		}
	}
	every := uint32(goschedEvery)
	if p.cfg.Yield {
		every = goschedEveryYielding
	}
	if p.idleTick.Add(1)%every == 0 {
		runtime.Gosched()
	}
}

// goschedEvery: idle polls between passes through Go's scheduler (about
// 50 us of polling; far below the runtime's 10 ms preemption period), and
// goschedEveryYielding the same when each idle poll yields the core (a
// yield that switches takes ~8 us here, so about 0.5 ms).
const (
	goschedEvery         = 1024
	goschedEveryYielding = 64
)

// afterBlock returns the spin count to continue with after a block: a wake
// that brought work starts a new spin phase; one that brought nothing (a
// timeout, another goroutine's event) goes back to sleep at once, so an idle
// rank does not spin again every SleepTimeout.
func (p *PML) afterBlock() int {
	if p.Progress() > 0 {
		return 0
	}
	return p.cfg.SpinCount
}

// WaitFor is Wait for a condition that is not a request (probe, finalize):
// it polls cond between progress calls and sleeps like Wait.
func (p *PML) WaitFor(cond func() bool) {
	spins := 0
	for !cond() {
		if p.Progress() > 0 {
			spins = 0
			continue
		}
		p.idle()
		spins++
		if spins < p.cfg.SpinCount {
			continue
		}
		p.block(nil, nil, nil)
		spins = p.afterBlock()
	}
}

// block is the sleeping half of a wait. One goroutine at a time becomes the
// sleeper: it holds progMu and sleeps in the transport until a sender wakes
// it, then gives the role up (closing gen so others re-contend). The others
// block on their own completion channel (wc) or on gen.
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
	if p.runner != nil && p.cfg.Yield {
		// Not polling while blocked: peers waiting for us yield at once.
		p.runner.SetRunning(false)
		defer p.runner.SetRunning(true)
	}
	if p.sleeperActive.CompareAndSwap(false, true) {
		p.progMu.Lock()
		n := 0
		for _, m := range p.mods {
			n += m.Progress()
		}
		if n == 0 {
			var stop func() bool
			if done != nil {
				stop = context.AfterFunc(ctx, p.sleeper.Wake)
			}
			p.sleeper.Sleep(p.cfg.SleepTimeout)
			if stop != nil {
				stop()
			}
			for _, m := range p.mods {
				m.Progress()
			}
		}
		p.progMu.Unlock()
		// Give the role up before waking the others: a waiter that reads
		// the new gen and still sees the role taken is then sure that a
		// later sleeper will close that gen.
		p.sleeperActive.Store(false)
		p.genMu.Lock()
		close(p.gen)
		p.gen = make(chan struct{})
		p.genMu.Unlock()
		if done != nil {
			select {
			case <-done:
				return ctx.Err()
			default:
			}
		}
		return nil
	}
	p.genMu.Lock()
	g := p.gen
	p.genMu.Unlock()
	if !p.sleeperActive.Load() {
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

// peerLost builds the error for an operation with a lost peer.
func peerLost(rank int) error {
	return fmt.Errorf("gorun: rank %d is gone: %w", rank, errs.ErrPeerLost)
}

// onPeerLost fails every pending operation with rank.
func (p *PML) onPeerLost(rank int) {
	if rank < 0 || rank >= len(p.peers) {
		return
	}
	p.peers[rank].lost.Store(true)
	err := peerLost(rank)
	p.mu.Lock()
	var dropped []*match.Recv
	dropped = p.eng.DropPostedFrom(rank, dropped)
	var fail []*Request
	for _, mr := range dropped {
		fail = append(fail, mr.Data.(*Request))
	}
	for id, r := range p.recvs {
		if r.peer == rank {
			delete(p.recvs, id)
			fail = append(fail, r)
		}
	}
	for id, r := range p.sends {
		if r.peer == rank {
			delete(p.sends, id)
			fail = append(fail, r)
		}
	}
	p.mu.Unlock()
	p.log.Debug("peer lost", "rank", rank, "failed", len(fail))
	for _, r := range fail {
		if r.kind == kindSend {
			p.finishSend(r, err)
		} else {
			r.finish(Status{}, err)
		}
	}
	p.kick()
}

// finishSend completes a send request (zero Status, as the contract says).
func (p *PML) finishSend(r *Request, err error) {
	if r.tracked && err != nil {
		p.mu.Lock()
		delete(p.sends, r.id)
		p.mu.Unlock()
	}
	r.finish(Status{}, err)
}

// PeerLost reports whether rank is known to be gone.
func (p *PML) PeerLost(rank int) bool { return p.peers[rank].lost.Load() }

// errClosed is returned by operations after Close.
var errClosed = fmt.Errorf("gorun: the PML is closed: %w", errs.ErrFinalized)

// Close detaches from every BTL.
func (p *PML) Close() error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	p.progMu.Lock()
	defer p.progMu.Unlock()
	var all []error
	for _, m := range p.mods {
		if err := m.Close(); err != nil {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}
