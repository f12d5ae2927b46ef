package pml

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/internal/hugepage"
	"github.com/gorun-mpi/gorun/internal/spinlock"
	"github.com/gorun-mpi/gorun/pml/match"
)

// Config is what the PML needs from the job and the parameters.
type Config struct {
	Rank, Size int
	// Modules are the selected BTLs. For each peer the PML uses the module
	// of highest exclusivity that reaches it.
	Modules []btl.Module
	// SpinCount is how many progress polls a waiting call makes before it
	// sleeps in the transport, and SpinUsec how many microseconds longer
	// it polls after them when the rank has a core of its own (not Yield;
	// see spun).
	SpinCount int
	SpinUsec  int
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
	// RgetAdaptive: a rendezvous beyond its first chunk offers its buffer,
	// and the receive of a serial message reads it or asks for the
	// pipeline, whichever it measured faster lately (rget.go).
	RgetAdaptive bool
	// RgetExploreMs: how old, in ms, the slower path's measurement may get
	// before one message tries it again; 0 means 20.
	RgetExploreMs int
	// RgetSplit: a single-copy read of at least this many bytes (beyond
	// the first chunk) is shared: the sender writes the second half into
	// the receiver's buffer while the receiver reads the first. 0: never.
	RgetSplit int
	// RgetSplitStream: the same from this many bytes for a message of a
	// one-way stream (Comm.streamingTo, flagStream). 0: as RgetSplit.
	RgetSplitStream int
	// StreamLimit: a rendezvous of at most this many bytes carries its
	// whole payload in its first fragment when it continues a one-way
	// stream (Comm.streamingTo, planSend). 0: never.
	StreamLimit int
	// StreamAdaptive: a one-way stream of messages that StreamLimit lets
	// carry their payload times its windows, and the next stream carries
	// it or lets the receiver read it, whichever moved that size's data
	// faster lately (rget.go's pathEst, per size class, on the clock of
	// RgetExploreMs). false: a stream always carries it.
	StreamAdaptive bool
	// StreamPipeMax: with StreamAdaptive, a one-way stream of messages
	// above StreamLimit and up to this many bytes, which would be read,
	// is timed the same way and goes by the read or by the two-copy
	// pipeline, whichever was faster lately (limits.pipeable). 0: read.
	StreamPipeMax int
	// SerialCarryMax: a rendezvous of at most this many bytes, sent when
	// it is the rank's only send in flight and not as part of a one-way
	// stream (a ping-pong's), carries its payload in its first fragment or
	// offers it for the receiver's read, whichever completed faster lately
	// (rget.go's serialChoice.way: pathEst per size class, timed by the sender
	// from its start to its answer). Needs the BTL's single copy; the
	// BTL's max send size bounds it. 0: such a send is read.
	SerialCarryMax int
	// SerialSplit: a rendezvous of RgetSplitStream bytes or more and
	// below RgetSplit, sent as a serial one is (SerialCarryMax), asks its
	// receiver to split its read as a stream's message does (flagStream),
	// or not, whichever completed faster lately (rget.go's serialChoice.way).
	SerialSplit bool
	// DirectPolls: a blocking receive from one peer over a BTL that can
	// hand it the peer's next message (btl.DirectTaker) looks for it up
	// to this many times before it posts (recvDirect). 0: always post.
	DirectPolls int
	// RgetBatchMax: the reads of rendezvous messages of at most this many
	// bytes (after the first fragment) that one poll of the BTL matches
	// while messages come in runs are made together at the end of the
	// poll, with one btl.VecReader call per peer (recv.go, queueRead).
	// 0: each is read on its own.
	RgetBatchMax int
	// RgetHugepage: after how many offers to a peer's single-copy read a
	// 2 MiB region of this rank's memory is collapsed into a huge page
	// (internal/hugepage); 0: never.
	RgetHugepage int
	// SleepTimeout bounds one sleep in the transport (peer-loss checks and
	// pending-queue retries happen at least this often while idle).
	SleepTimeout time.Duration
	Log          hclog.Logger
	// NodeID is the machine identity of each world rank (ranks with the
	// same value share memory; SplitShared groups by it). nil: one machine.
	NodeID []int
}

// splitMin is the smallest read shared with the sender (RgetSplit), or 0
// when the ranks outnumber the cores (Yield): the sender's part would then
// wait for the core the receiver's part runs on, and the receive for both.
func splitMin(cfg Config) int {
	if cfg.Yield {
		return 0
	}
	return cfg.RgetSplit
}

// carryMax is limits.carry: SerialCarryMax, at most the BTL's max send
// size and StreamLimit (planSend carries a payload only up to it: above
// it, a send chosen as carried would be read and timed as carried), with
// single copy; else 0.
func carryMax(cfg Config, a btl.Attributes) int {
	if !a.SingleCopy {
		return 0
	}
	return min(cfg.SerialCarryMax, a.MaxSendSize, cfg.StreamLimit)
}

// pipeMax is limits.pipeMax: StreamPipeMax with StreamAdaptive, else 0.
func pipeMax(cfg Config) int {
	if !cfg.StreamAdaptive {
		return 0
	}
	return cfg.StreamPipeMax
}

// splitStreamMin is splitMin for a message of a one-way stream
// (RgetSplitStream, and never above splitMin), or 0 when not split.
func splitStreamMin(cfg Config) int {
	m := splitMin(cfg)
	if m > 0 && cfg.RgetSplitStream > 0 {
		m = min(m, cfg.RgetSplitStream)
	}
	return m
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
	// sendMu orders our sends to this peer: every message's sequence
	// number (Comm.sendSeq) and eager credit are taken under it. It is the
	// BTL's own lock for the peer when the BTL is a btl.LockedSender
	// (locked), so that an eager message is numbered, credited and sent
	// in one locked section (Comm.eagerNow); else ownSendMu.
	sendMu    *spinlock.Mutex
	ownSendMu spinlock.Mutex
	locked    btl.LockedSender
	sends     sendTable       // our sends to this peer awaiting ACK or FIN (under sendMu)
	ackBuf    [ackHdrLen]byte // an ACK sent under sendMu (PML.ackDone)
	hslab     handleSlab      // the Handles of NewIsend's eager sends to this peer (under sendMu; Comm.eagerNow)
	// Eager flow control (see creditLimit; unused when it is 0): the
	// credit left is creditLimit + creditBack - creditTaken. creditTaken
	// counts the eager payload bytes we sent the peer (under sendMu),
	// creditBack those it gave back (CTL credit messages, any goroutine).
	creditTaken int64
	creditBack  atomic.Int64
	// owed: eager payload bytes from this peer we have delivered but not
	// yet returned as credit (under PML.mu). With flow control off it
	// only grows, and nothing reads it (creditQuarter is the largest
	// int64).
	owed int64
	// landing is the receive whose message from this peer a btl.Placer
	// module is reading straight into its buffer (placeMsg), until its
	// landed call; the receive is in recvs under landingID meanwhile, so
	// that a loss of the peer fails it (under progMu).
	landing   *Request
	landingID uint64

	try btl.TrySender // m, when it has TrySend (then eager sends need no Request); else nil
	// vec is m when it can read several regions at once (btl.VecReader)
	// and reads are batched (Config.RgetBatchMax); else nil.
	vec btl.VecReader
	// poller is m when it can poll for this peer's messages alone
	// (btl.SourcePoller) and the rank does not yield when idle; else nil.
	// A wait for a message from the peer then polls through it between
	// full passes (pollFor).
	poller btl.SourcePoller
	direct btl.DirectTaker // a blocking receive's take (recvDirect); set with poller

	// A one-way stream of mid-size sends to this peer (Comm.streamingTo),
	// its fields written with relaxed stores by any sending goroutine (a
	// heuristic: races only shift a decision). streamEv is 1 + the
	// progress events (waitState.events) at the last send of more than
	// lim.eager and at most lim.stream bytes, or in the band whose read
	// is split only in a stream (lim.splitsInStream) (0: none yet); streamSent
	// counts the sends of the current stream; streamBack is how many
	// messages from the peer the engine had released when it began;
	// oneWay says whether the current stream is one-way (no receive
	// posted for the peer as it began, and fewer than a quarter as many
	// messages back during the stream before).
	streamEv   atomic.Uint64
	streamSent atomic.Uint32
	streamBack atomic.Uint32
	oneWay     atomic.Uint32 // 1: one-way
	// With Config.StreamAdaptive: streamT0 is when the current one-way
	// stream began (ns on PML.streams' clock; 0: not timed), streamN0 the
	// size of its first message, streamRead 1 when its messages in the
	// stream band are read rather than carried (in the pipeline band:
	// read rather than sent through the pipeline; limits.pipeable).
	streamT0   atomic.Uint64
	streamN0   atomic.Uint64
	streamRead atomic.Uint32
}

// PML is the point-to-point engine of one rank. Lock order (a goroutine
// holding one may take those below it, never those above):
//
//	gorun's state lock (Init/Finalize), Comm.dups (one collective per comm)
//	coll.Engine.mu  the running schedules; the progress hook TryLocks it,
//	                and Progress runs the hook after releasing progMu
//	PML.progMu      the one goroutine in Progress; BTL callbacks run under it
//	  btl module locks (sm progMu, peer.mu; tcp peer.mu; self mu), taken
//	  inside Progress and Send
//	PML.mu          matching engine, request tables, free lists, credit owed
//	  Request.wmu, waitState.genMu, cidAlloc.mu,
//	  the sync.Pools    leaves: nothing is taken under them
//	(PML.reqs takes no lock: any goroutine puts with a CAS, and only a
//	holder of mu takes; see reqcache.go)
//
// Under mu the PML calls btl Send (headers and small control messages:
// ACK, CTL, FIN) and copies eager payloads (at most the eager limit), but
// never calls Progress, Sleep or a wait, nor copies a rendezvous payload:
// its copies and single-copy reads run with mu released (recv.go). Request
// completion (finish) runs with or without mu. A Handle takes no lock (its
// word is an atomic; see handle.go). A peer's sendMu (sm's peer.mu, or
// the PML's own) is a leaf to the PML: under it a send takes its credit
// and number, a send that awaits an answer is registered in the peer's
// sendTable (where the answer's handler looks it up, under it too), and
// through btl.LockedSender an eager message or a RNDV goes into the peer's
// box, and nothing else; the PML never takes it under mu.
//
// A Progress pass holds mu across a BTL's poll once it has delivered an
// eager message (batch delivery, recv.go): the BTL's own locks taken in
// that poll then nest inside mu, as they do in a Send under mu, and every
// PML entry from a poll that needs mu released (other callbacks, the
// peer-lost handler, a failed SendDone) ends the batch first.
type PML struct {
	cfg   Config
	log   hclog.Logger
	peers []peer
	mods  []btl.Module

	progMu spinlock.Mutex // serializes btl Progress; BTL callbacks run under it (TryLock, and a plain-store Unlock, on every poll)
	// sincePass counts the source polls (pollFor) since the last full
	// progress pass; under progMu.
	sincePass int
	// taken is the rendezvous a direct receive took (Request.takeRndv),
	// for recvDirect to carry out once the BTL's TakeFrom has returned;
	// under progMu.
	taken rndvJob

	// creditLimit is each peer's eager credit (0: flow control off).
	creditLimit int64
	// creditQuarter: a peer is given its credit back once it is owed this
	// much (creditLimit/4; the largest int64 when flow control is off).
	creditQuarter int64
	// creditWarned: the one-time warning that a sender ran out of eager
	// credit has been logged (takeCredit).
	creditWarned atomic.Bool

	// mu guards the fields up to the next blank line. A spinlock (a CAS to
	// lock, a plain store to unlock; after 64 spins it yields, then
	// sleeps): every Irecv and every delivery batch takes it, and
	// sync.Mutex's unlock is a locked instruction that waits for the
	// core's earlier stores, a box record's among them, to reach the other
	// core (osu bw 1-8 B +3-10%, bibw +0-24% at 1-2 B against sync.Mutex;
	// every section under mu is short, see below).
	mu     spinlock.Mutex
	eng    *match.Engine
	recvs  map[uint64]*Request // rendezvous receives awaiting FRAGs
	nextID uint64              // last request id handed out
	// unexpected-message memory
	unexpBytes  int64
	pairs       []match.Pair         // scratch for Arrive
	msgFree     []*match.Msg         // recycled Msgs
	unexpFree   []*unexp             // recycled unexpected records, with their buffers
	unexpPooled int                  // bytes of buffer capacity unexpFree holds; at most unexpPoolBytes
	reqFree     [reqFreeMax]*Request // receives recycled by their delivery (settleDirect), for the next startRecv (see recycleLocked): a stack of nFree
	nFree       int
	hslab       handleSlab          // the Handles of NewIrecv's receives
	hdrBuf      [btl.MaxHeader]byte // for sends made under mu

	rget rgetChoice // single copy or pipeline, per message (rget.go); regs under mu
	// huge collapses the regions of memory that sends offer to peers'
	// single-copy reads again and again into huge pages.
	huge *hugepage.Collapser
	// streams: carried or read, per one-way stream (Config.StreamAdaptive,
	// Comm.streamingTo); only its est and mutex are used.
	streams rgetChoice
	// serial: carried or read, per serial send up to pml_ob1_serial_carry_max
	// (Config.SerialCarryMax, serialChoice.way).
	serial serialChoice
	// serialSplit: the same for a serial send's read, split or not
	// (Config.SerialSplit).
	serialSplit serialChoice

	jobs []rndvJob // arrive's scratch, guarded by progMu (arrive runs in BTL callbacks)
	// reads are the reads this pass queued for its end (queueRead), and
	// readAddr and readDst flushReads's scratch; guarded by progMu.
	reads    []rndvJob
	readAddr []uintptr
	readDst  [][]byte
	// delivering: this Progress pass holds mu for the eager deliveries of
	// the BTL it polls (recv.go, lockDelivery); guarded by progMu.
	delivering bool
	// arrived counts the messages of the module's current pass, and
	// streaming says whether its previous pass delivered more than one:
	// only then does a pass keep mu between deliveries (recv.go).
	arrived   int
	streaming bool

	activeSends atomic.Int64 // send requests started and not finished (Finalize waits for 0)
	// bigSends counts the sends whose receiver may split their read
	// (recv.go, splitRead): while there are any, a wait says so through
	// the runner modules (waitLook), and a receiver splits only while we
	// do, so that it never waits for a rank that computes.
	bigSends   atomic.Int32
	nlost      atomic.Int32 // peers reported lost
	finalizing atomic.Bool  // Finalize has started
	closed     atomic.Bool

	// spare is a request kept for the next blocking call, which zeroes it
	// (getReq); nil while a call holds it.
	spare atomic.Pointer[Request]
	// reqs keeps recycled requests for the next receives (reqcache.go).
	reqs reqCache

	wait waitState // wait.go

	cid  cidAlloc                   // context id allocation (comm.go)
	hook atomic.Pointer[func() int] // run by Progress (SetProgressHook)

	bgStop, bgDone chan struct{} // the background poller (background.go); nil when none runs
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
		cfg.SleepTimeout = defaultSleepTimeout
	}
	p := &PML{
		cfg:   cfg,
		log:   cfg.Log,
		peers: make([]peer, cfg.Size),
		mods:  cfg.Modules,
		eng:   match.New(cfg.Size),
		recvs: make(map[uint64]*Request),
	}
	p.rget.init(time.Duration(cfg.RgetExploreMs) * time.Millisecond)
	p.huge = hugepage.New(hugepage.Config{After: cfg.RgetHugepage})
	p.streams.init(time.Duration(cfg.RgetExploreMs) * time.Millisecond)
	p.streams.warmUp = true
	p.serial.init(time.Duration(cfg.RgetExploreMs) * time.Millisecond)
	p.serial.warmUp = true
	p.serialSplit.init(time.Duration(cfg.RgetExploreMs) * time.Millisecond)
	p.serialSplit.warmUp = true
	p.serialSplit.favor = splitFavor
	p.reqs.init()
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
			rget: a.SingleCopy, rgetMin: cfg.RgetLimit, rgetMax: cfg.RgetMax, adaptive: cfg.RgetAdaptive,
			splitMin: splitMin(cfg), splitStream: splitStreamMin(cfg), stream: min(cfg.StreamLimit, a.MaxSendSize),
			pipeMax: pipeMax(cfg), carry: carryMax(cfg, a), serialSplit: cfg.SerialSplit}}
		p.peers[i].try, _ = best.(btl.TrySender)
		if vr, ok := best.(btl.VecReader); ok && a.SingleCopy && cfg.RgetBatchMax > 0 {
			p.peers[i].vec = vr
		}
		if sp, ok := best.(btl.SourcePoller); ok && !cfg.Yield {
			p.peers[i].poller = sp
			if cfg.DirectPolls > 0 {
				p.peers[i].direct, _ = best.(btl.DirectTaker)
			}
		}
		p.peers[i].sendMu = &p.peers[i].ownSendMu
		if ls, ok := best.(btl.LockedSender); ok {
			p.peers[i].locked, p.peers[i].sendMu = ls, ls.SendLock(i)
		}
		if a.MaxSendSize <= 0 || a.EagerLimit < 0 || a.EagerLimit > a.MaxSendSize {
			return nil, fmt.Errorf("pml: BTL %s has eager limit %d and max send size %d; want 0 ≤ eager ≤ max send > 0", best.Name(), a.EagerLimit, a.MaxSendSize)
		}
	}
	p.creditQuarter = math.MaxInt64
	if cfg.UnexpectedLimit > 0 {
		p.creditLimit = cfg.UnexpectedLimit / int64(max(1, cfg.Size-1))
		for i := range p.peers {
			p.creditLimit = max(p.creditLimit, 4*int64(p.peers[i].lim.eager))
		}
		p.creditQuarter = p.creditLimit / 4
	}
	if err := p.wait.init(cfg.Modules); err != nil {
		return nil, err
	}
	onMatch := p.onMatch()
	for _, m := range cfg.Modules {
		m.Register(btl.TagPMLMatch, onMatch)
		m.Register(btl.TagPMLRndv, p.onRndv)
		m.Register(btl.TagPMLAck, p.onAck)
		m.Register(btl.TagPMLFrag, p.onFrag)
		m.Register(btl.TagPMLFin, p.onFin)
		m.Register(btl.TagPMLCtl, p.onCtl)
		if pl, ok := m.(btl.Placer); ok {
			pl.RegisterPlace(btl.TagPMLFrag, p.placeFrag, p.fragLanded)
			pl.RegisterPlace(btl.TagPMLMatch, func(src int, hdr []byte, n int) []byte { return p.placeMsg(src, hdr, n, false) }, p.msgLanded)
			pl.RegisterPlace(btl.TagPMLRndv, func(src int, hdr []byte, n int) []byte { return p.placeMsg(src, hdr, n, true) }, p.msgLanded)
		}
		m.OnPeerLost(p.onPeerLost)
	}
	p.startBackground()
	return p, nil
}

// Rank and Size of the world.
func (p *PML) Rank() int { return p.cfg.Rank }
func (p *PML) Size() int { return p.cfg.Size }

// peerLost builds the error for an operation with a lost peer.
func peerLost(rank int) error {
	return fmt.Errorf("gorun: rank %d is gone: %w", rank, errs.ErrPeerLost)
}

// onPeerLost fails every pending operation with rank.
func (p *PML) onPeerLost(rank int) {
	p.endDelivery() // called from a BTL's poll, which may hold mu (recv.go)
	if rank < 0 || rank >= len(p.peers) {
		return
	}
	if p.peers[rank].lost.Swap(true) {
		return // reported before (by another module)
	}
	nlost := p.nlost.Add(1)
	err := peerLost(rank)
	p.mu.Lock()
	var dropped []*match.Recv
	dropped = p.eng.DropPostedFrom(rank, dropped)
	if p.othersLost(nlost) && !p.finalizing.Load() {
		// No rank that could send to an AnySource receive is left. (In
		// Finalize, the others leaving is expected: Finalize cancels
		// what is still posted, ErrCanceled, as it says.)
		dropped = p.eng.DropPostedAnySource(dropped)
	}
	var fail []*Request
	for _, mr := range dropped {
		fail = append(fail, mr.Data.(*Request))
	}
	p.peers[rank].landing = nil // in recvs: failed below
	for id, r := range p.recvs {
		if r.peer == rank {
			delete(p.recvs, id)
			fail = append(fail, r)
		}
	}
	p.mu.Unlock()
	pe := &p.peers[rank]
	pe.sendMu.Lock() // after lost was set: a send registered later fails in the BTL (afterSend)
	fail = pe.sends.takeAll(fail)
	pe.sendMu.Unlock()
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
		p.untrack(r)
	}
	big := r.big // r may be recycled once finished
	if r.finish(Status{}, err) && big {
		p.bigSends.Add(-1)
	}
}

// othersLost reports whether every other rank is gone, nlost of them
// being: then an AnySource receive can only wait forever (sends to self
// aside, which it does not wait for), so it fails with ErrPeerLost.
func (p *PML) othersLost(nlost int32) bool {
	return p.cfg.Size > 1 && int(nlost) >= p.cfg.Size-1
}

// errAllLost is the error of an AnySource receive or probe once every
// other rank is gone.
var errAllLost = fmt.Errorf("gorun: every other rank is gone; nothing can match an AnySource receive: %w", errs.ErrPeerLost)

// PeerLost reports whether rank is known to be gone.
func (p *PML) PeerLost(rank int) bool { return p.peers[rank].lost.Load() }

// SingleCopy reports whether the BTL that reaches rank can read its memory
// (ReadFrom); coll/sm's large collectives use it.
func (p *PML) SingleCopy(rank int) bool {
	return rank != p.cfg.Rank && p.peers[rank].m != nil && p.peers[rank].lim.rget
}

// ReadFrom copies len(dst) bytes at addr in rank's memory into dst through
// its BTL's single copy; only when SingleCopy(rank).
func (p *PML) ReadFrom(rank int, addr uintptr, dst []byte) error {
	return p.peers[rank].m.ReadFrom(rank, addr, dst)
}

// CanWrite reports whether the BTL that reaches rank can also write into
// its memory (SingleCopy and a btl.Writer).
func (p *PML) CanWrite(rank int) bool {
	_, ok := p.peers[rank].m.(btl.Writer)
	return ok && p.SingleCopy(rank)
}

// WriteTo copies src to addr in rank's memory through its BTL; only when
// CanWrite(rank).
func (p *PML) WriteTo(rank int, addr uintptr, src []byte) error {
	w, ok := p.peers[rank].m.(btl.Writer)
	if !ok {
		return fmt.Errorf("gorun: the transport to rank %d cannot write into its memory", rank)
	}
	return w.WriteTo(rank, addr, src)
}

// errClosed is returned by operations after Close.
var errClosed = fmt.Errorf("gorun: the PML is closed: %w", errs.ErrFinalized)

// Close detaches from every BTL.
func (p *PML) Close() error {
	if !p.closed.CompareAndSwap(false, true) {
		return nil
	}
	p.wait.wake() // a sleeper sees closed and gives the role up
	p.stopBackground()
	p.huge.Close()
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
