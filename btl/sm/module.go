package sm

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/internal/ring"
	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/internal/spinlock"
	"github.com/gorun-mpi/gorun/mca"
	"github.com/gorun-mpi/gorun/mpool"
)

// Job says who this rank is. All ranks are on one machine, so a rank's
// local rank equals its world rank.
type Job struct {
	Rank, Size, LocalRank int
	SessionDir, JobID     string
	Pids                  []int // per world rank, from the business cards; nil: read from the segment
}

// Module is one rank's sm transport.
type Module struct {
	rank   int
	cfg    Config
	log    hclog.Logger
	seg    *mpool.Segment
	mem    []byte
	layout mpool.Layout
	attrs  btl.Attributes

	inlineLimit int          // payloads up to this travel in consecutive FIFO slots
	nboxes      int          // fast boxes in each rank's region
	boxMsgMax   int          // hdr+payload up to this travel in a fast box
	boxSerMax   int          // a serial send's up to this (Config.BoxSerialMax): the largest box record
	boxSize     int          // bytes of a fast box ring (Config.BoxSize)
	race        raceOrder    // the race detector's view of message order (race.go)
	boxList     []*boxIn     // our boxes in use, for Sleep: entries below nBoxIn are set
	nBoxIn      atomic.Int32 // entries of boxList in use

	ctl      *ctl   // this rank's control block
	fifo     []elem // this rank's receive FIFO
	mask     uint64 // FIFO slots - 1
	peers    []peer // by world rank; peers[rank] is unused
	eager    *fragPool
	maxFrags *fragPool

	recv      [btl.NumTags]btl.RecvFunc
	onLost    func(peer int)
	progMu    spinlock.Mutex // held by the one goroutine inside Progress (or PollFrom)
	prog      progState      // guarded by progMu
	pendPeers atomic.Int32
	// recvEpoch counts polls that found messages (written under progMu
	// only; senders read it to tell a burst from a ping-pong, see publish).
	recvEpoch  atomic.Uint64
	lostUnrep  atomic.Bool // a peer was found lost and Progress has not reported it yet
	someLost   atomic.Bool // some peer was found lost (poll may then skip its abandoned slots)
	wakePend   atomic.Bool // Wake was called and no Sleep has consumed it
	arrived    atomic.Bool // Arrive was called (barrier.go)
	monitor    peerMonitor
	magic      *uint64 // the word peers read to probe single copy; kept alive here
	closed     atomic.Bool
	users      userCount // goroutines inside Send, Wake, SetRunning, PeerRunning (see enter)
	closeOnce  sync.Once
	closeError error
}

// progState is owned by the goroutine holding progMu.
type progState struct {
	tail     uint64 // next slot of our FIFO to read
	released uint64 // value last stored in ctl.tail
	ackPeers []int  // peers with acks waiting to be returned
	gather   []byte // a multi-slot inline message, reassembled
	tick     uint32 // Progress calls, for the peer-check clock
	lastChk  time.Time
	boxes    []*boxIn // our boxes in use, in the order they were announced
	nextBox  int      // index in boxes of the next box to poll
	boxOwner []int    // by box: 1 + the rank that took it, 0 while free
}

// peer is what this rank knows about one other rank.
type peer struct {
	rank       int
	ctl        *ctl
	fifo       []elem
	region     mpool.Region
	cachedTail atomic.Uint64 // our last view of ctl.tail (a lower bound)
	sendEpoch  atomic.Uint64 // recvEpoch+1 at our last send to this peer (a hint; races are harmless)
	lost       atomic.Bool
	npending   atomic.Int32 // mu.q.Len(), readable without the lock
	mu         struct {
		spinlock.Mutex                      // short sections on every send; see internal/spinlock
		q              ring.Ring[pendingOp] // sends waiting for a FIFO slot or a fragment, in Send order
		// refs counts by-reference ops in q. While it is non-zero, later
		// large sends also go by reference rather than take a fragment: a
		// fragment held behind a by-reference op could starve it forever.
		refs int
	}
	acks     []int64 // fragments to return to this peer (made at the first; see queueAck); progMu
	reported bool    // OnPeerLost called; progMu
	pid      int
	self     *ctl // our own control block, where claimN announces its claims (gone.go)

	// Fast box to p (sender side), guarded by mu. seq is the pair sequence
	// number of the last data message sent since the box was announced.
	sends  int     // data messages sent to p, counted up to btl_sm_fbox_threshold
	noBox  bool    // p's region had no box left for us: never ask again
	boxIdx uint64  // 1 + the box of p's region we took (0: none yet)
	out    *boxOut // our box in p's region, once announced
	seq    uint32

	in *boxIn // p's box in our region, once announced (receiver side); progMu
	// inPub is in for Waiting, which takes no lock: stored once, after in.
	inPub atomic.Pointer[boxIn]
}

var _ btl.Module = (*Module)(nil)

// New builds the module from the btl_sm_* parameters of p.
func New(job Job, p *mca.Set, log hclog.Logger) (btl.Module, error) {
	cfg, err := ConfigFrom(p)
	if err != nil {
		return nil, err
	}
	return NewWithConfig(job, cfg, log)
}

// NewWithConfig builds the module: it joins (or creates) the job's segment,
// lays this rank's view of it out, attaches and waits until every local
// rank has attached, then probes single copy. It blocks until the other
// ranks call it too.
func NewWithConfig(job Job, cfg Config, log hclog.Logger) (*Module, error) {
	if err := checkJob(job, &cfg); err != nil {
		return nil, err
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if cfg.AttachTimeout == 0 {
		cfg.AttachTimeout = 60 * time.Second
	}
	layout, err := mpool.Plan(job.Size, cfg.LayoutParams(job.Size))
	if err != nil {
		return nil, fmt.Errorf("btl/sm: %w", err)
	}
	seg, err := mpool.Join(mpool.JoinOptions{
		Dir: cfg.BackingDir, SessionDir: job.SessionDir, JobID: job.JobID, LocalRank: job.LocalRank,
		Timeout: cfg.AttachTimeout, Rendezvous: cfg.Rendezvous, Log: log,
	}, layout)
	if err != nil {
		return nil, err
	}
	m := newModule(job, cfg, log, seg, layout)
	if err := m.attach(job.Pids); err != nil {
		seg.Remove()
		seg.Close()
		return nil, err
	}
	m.attrs = btl.Attributes{
		EagerLimit: cfg.EagerLimit, MaxSendSize: cfg.MaxSendSize,
		Latency: 1, Bandwidth: 20000, Exclusivity: Exclusivity,
		SingleCopy: cfg.SingleCopy == "auto" && m.probeSingleCopy(),
	}
	log.Debug("sm ready", "rank", m.rank, "ranks", job.Size, "segment", seg.Path, "bytes", layout.Size, "single_copy", m.attrs.SingleCopy)
	return m, nil
}

// checkJob checks cfg and that job is one this module can serve.
func checkJob(job Job, cfg *Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if job.Size < 1 || job.Rank < 0 || job.Rank >= job.Size || job.LocalRank != job.Rank {
		return fmt.Errorf("btl/sm: rank %d (local rank %d) of %d: want 0 ≤ rank < size and local rank == rank (one machine)", job.Rank, job.LocalRank, job.Size)
	}
	if job.Pids != nil && len(job.Pids) != job.Size {
		return fmt.Errorf("btl/sm: %d pids for %d ranks", len(job.Pids), job.Size)
	}
	return nil
}

// newModule lays out this rank's view of the joined segment: every peer's
// control block and FIFO, this rank's fragment pools, the progress
// scratch space. It touches nothing another rank reads.
func newModule(job Job, cfg Config, log hclog.Logger, seg *mpool.Segment, layout mpool.Layout) *Module {
	m := &Module{rank: job.Rank, cfg: cfg, log: log, seg: seg, mem: seg.Bytes(), layout: layout}
	m.mask = uint64(cfg.FIFOSize - 1)
	m.peers = make([]peer, job.Size)
	for i := range m.peers {
		r := layout.Rank(i)
		p := &m.peers[i]
		p.rank, p.region = i, r
		p.ctl = (*ctl)(seg.At(r.Ctl))
		p.fifo = fifoAt(seg, r.FIFO, cfg.FIFOSize)
	}
	self := &m.peers[m.rank]
	m.ctl, m.fifo = self.ctl, self.fifo
	for i := range m.peers {
		m.peers[i].self = m.ctl
	}
	m.eager = newFragPool(self.region.Eager, cfg.EagerFragSize(), cfg.FreeListNum, cfg.FreeListMax, cfg.FreeListInc)
	m.maxFrags = newFragPool(self.region.Max, cfg.MaxFragSize(), cfg.FreeListNum, cfg.MaxFragCount(job.Size), cfg.FreeListInc)
	m.prog.ackPeers = make([]int, 0, job.Size)
	m.inlineLimit = cfg.InlineLimit
	m.prog.gather = make([]byte, m.inlineLimit+btl.MaxHeader)
	m.nboxes = cfg.Boxes(job.Size)
	m.boxMsgMax = cfg.BoxMsgMax(job.Size)
	m.boxSerMax = cfg.BoxSerialMax(job.Size)
	m.boxSize = cfg.BoxSize(job.Size)
	m.raceInit(job.SessionDir+"/"+job.JobID, job.Rank, job.Size)
	m.boxList = make([]*boxIn, m.nboxes)
	m.prog.boxOwner = make([]int, m.nboxes)
	m.prog.lastChk = time.Now()
	return m
}

// attach publishes this rank's identity in its control block, attaches,
// and waits for every local rank, watching pids (nil: the pids the ranks
// publish, known once all have attached) for a rank that dies meanwhile.
func (m *Module) attach(pids []int) error {
	// Our identity, then Attach: the attach counter publishes it to the
	// ranks that wait for the count (atomic Add, then their atomic Load).
	m.magic = new(uint64)
	*m.magic = probeMagic ^ uint64(m.rank)
	m.ctl.pid = uint64(os.Getpid())
	m.ctl.magicAddr = uint64(addrOf(m.magic))
	if _, err := m.seg.Attach(); err != nil {
		return err
	}
	for i := range m.peers {
		if pids != nil {
			m.peers[i].pid = pids[i]
		}
	}
	m.monitor.init(m, pids != nil)
	m.seg.AttachCheck = m.monitor.sleepNap() // the attach wait sleeps like Sleep
	if err := m.seg.WaitAttached(m.cfg.AttachTimeout, m.monitor.firstLost); err != nil {
		m.monitor.close()
		return fmt.Errorf("btl/sm: rank %d: %w", m.rank, err)
	}
	if pids == nil {
		for i := range m.peers {
			m.peers[i].pid = int(m.peers[i].ctl.pid)
		}
		m.monitor.init(m, true)
	}
	return nil
}

// Exclusivity of sm: below self (loopback wins its one peer), above anything
// that reaches other machines.
const Exclusivity = 1<<16 - 1

// Config is the configuration the module was built with.
func (m *Module) Config() Config { return m.cfg }

// SegmentPath is the file the segment was created as (unlinked once every
// rank attached).
func (m *Module) SegmentPath() string { return m.seg.Path }

func (m *Module) Name() string                       { return "sm" }
func (m *Module) Attributes() btl.Attributes         { return m.attrs }
func (m *Module) Register(t btl.Tag, f btl.RecvFunc) { m.recv[t] = f }
func (m *Module) OnPeerLost(fn func(peer int))       { m.onLost = fn }

// Reachable: every other rank of the job (this rank goes through self).
func (m *Module) Reachable(peer int) bool {
	return peer >= 0 && peer < len(m.peers) && peer != m.rank
}

// Close unmaps the segment. Sends still pending are dropped without
// completion; fragments in flight are abandoned with the segment.
func (m *Module) Close() error {
	m.closeOnce.Do(func() {
		m.closed.Store(true)
		m.drainUsers()
		m.drainPeerLocks()
		m.progMu.Lock()
		m.monitor.close()
		m.closeError = m.seg.Close()
		m.progMu.Unlock()
	})
	return m.closeError
}

var errClosed = fmt.Errorf("btl/sm: module closed: %w", errs.ErrFinalized)

func errPeerLost(rank int) error {
	return fmt.Errorf("btl/sm: rank %d has ended: %w", rank, errs.ErrPeerLost)
}
