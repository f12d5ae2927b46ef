package coll

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml"
)

// ReduceFunc combines in into acc element-wise (acc = acc ⊕ in); both hold
// whole elements of the operation's type.
type ReduceFunc func(acc, in []byte)

// Engine runs the schedules of one PML. It is safe for concurrent use.
type Engine struct {
	p   *pml.PML
	cfg Config
	mu  sync.Mutex // guards active; held while advancing (TryLock in progress)
	// active are the operations started and not yet complete.
	active []*Op
	cache  scheds
	// running is len(active), stored under mu: progress, which runs after
	// every PML poll, returns at once without the lock when it is 0.
	running atomic.Int32
}

// opPool recycles Ops with their request slots and scratch: a collective
// in a loop allocates nothing once its schedule is cached. Scratch is not
// cleared between uses: a schedule writes every scratch element before it
// reads it (the model checks this, sim_test.go).
var opPool = sync.Pool{New: func() any { return new(Op) }}

// NewEngine makes the engine of p, choosing algorithms by cfg, and hooks
// it into p's progress.
func NewEngine(p *pml.PML, cfg Config) *Engine {
	e := &Engine{p: p, cfg: cfg}
	p.SetProgressHook(e.progress)
	return e
}

// Config is the algorithm choice the engine was made with.
func (e *Engine) Config() Config { return e.cfg }

// Op is one running collective.
type Op struct {
	s      Schedule
	c      *pml.Comm // the hidden collective communicator
	tag    int
	elem   int
	bufs   [3][]byte
	reduce ReduceFunc
	round  int // next round to start
	reqs   []pml.Request
	nreqs  int // requests of the current round
	err    error
	req    *pml.Request // the external request the user holds
	scr    []byte       // scratch for ReduceRev
	tmp    []byte       // BufTmp's backing array, kept across uses
}

// recycle returns a completed op to the pool, keeping only its slices'
// storage (no reference to the caller's buffers).
func (op *Op) recycle() {
	*op = Op{reqs: op.reqs[:0], scr: op.scr, tmp: op.tmp}
	opPool.Put(op)
}

// Start begins schedule s on c's hidden context with tag, over the
// buffers send, recv (elem bytes per element; either may be nil when s
// does not use it) and reduce (nil when s has no reduction). h, a zero
// Handle, becomes the operation's request. The first round is posted
// before Start returns.
func (e *Engine) Start(h *pml.Handle, c *pml.Comm, tag int, s Schedule, elem int, send, recv []byte, reduce ReduceFunc) {
	op := opPool.Get().(*Op)
	op.s, op.c, op.tag, op.elem, op.reduce = s, c.Coll(), tag, elem, reduce
	op.bufs[BufSend], op.bufs[BufRecv] = send, recv
	if t := s.Tmp * elem; t > 0 {
		if cap(op.tmp) < t {
			op.tmp = make([]byte, t)
		}
		op.bufs[BufTmp] = op.tmp[:t]
	}
	most := 0
	for _, rd := range s.Rounds {
		k := 0
		for _, st := range rd {
			if st.Kind == Send || st.Kind == Recv {
				k++
			}
		}
		most = max(most, k)
	}
	if cap(op.reqs) < most {
		op.reqs = make([]pml.Request, most)
	}
	op.reqs = op.reqs[:most]
	op.req = e.p.StartExternal(h)
	e.mu.Lock()
	if op.advance() {
		e.mu.Unlock()
		op.recycle()
		return
	}
	e.active = append(e.active, op)
	e.running.Store(int32(len(e.active)))
	e.mu.Unlock()
	e.p.Progress() // a round of local sends may already be complete
}

// progress advances every running operation as far as it goes; it is the
// PML's progress hook.
func (e *Engine) progress() int {
	if e.running.Load() == 0 || !e.mu.TryLock() {
		return 0
	}
	n := 0
	keep := e.active[:0]
	for _, op := range e.active {
		r := op.round
		if op.advance() {
			op.recycle()
			n++
			continue
		}
		if op.round != r {
			n++
		}
		keep = append(keep, op)
	}
	for i := len(keep); i < len(e.active); i++ {
		e.active[i] = nil
	}
	e.active = keep
	e.running.Store(int32(len(keep)))
	e.mu.Unlock()
	return n
}

// advance starts rounds while the current one is complete, and reports
// whether the operation has completed (its request is then complete).
func (op *Op) advance() bool {
	for {
		for i := 0; i < op.nreqs; i++ {
			if !op.reqs[i].Done() {
				return false
			}
		}
		for i := 0; i < op.nreqs; i++ {
			if _, err := op.reqs[i].Wait(nil); err != nil && op.err == nil {
				op.err = op.s.collErr(err)
			}
			op.reqs[i] = pml.Request{}
		}
		op.nreqs = 0
		if op.err != nil || op.round == len(op.s.Rounds) {
			op.req.Complete(op.err)
			return true
		}
		op.startRound(op.s.Rounds[op.round])
		op.round++
	}
}

// collErr is a step's error as the collective's caller sees it: a
// truncated receive names the collective and both lengths instead of the
// hidden context's tag, which means nothing to the caller. It still
// matches ErrTruncate.
func (s *Schedule) collErr(err error) error {
	var t *pml.TruncateError
	if !errors.As(err, &t) {
		return err
	}
	return fmt.Errorf("gorun: %v: rank %d sent %d bytes where this rank's receive buffer holds %d (the ranks' lengths or counts do not match): %w",
		s.Coll, t.Source, t.Size, t.Buf, errs.ErrTruncate)
}

func (op *Op) region(r Region) []byte {
	return op.bufs[r.Buf][r.Off*op.elem : (r.Off+r.Len)*op.elem]
}

// startRound runs a round's steps in order: local ones at once, sends and
// receives posted. After a failed post nothing more is started.
func (op *Op) startRound(rd []Step) {
	for _, st := range rd {
		var err error
		switch st.Kind {
		case Send:
			err = op.c.Isend(&op.reqs[op.nreqs], op.region(st.A), st.Peer, op.tag, false)
		case Recv:
			err = op.c.Irecv(&op.reqs[op.nreqs], op.region(st.A), st.Peer, op.tag)
		case Copy:
			CopyBytes(op.region(st.A), op.region(st.B))
		case Reduce:
			op.reduce(op.region(st.A), op.region(st.B))
		case ReduceRev:
			// A = B ⊕ A through scratch: s = B; s ⊕= A; A = s.
			a, b := op.region(st.A), op.region(st.B)
			if cap(op.scr) < len(a) {
				op.scr = make([]byte, len(a))
			}
			s := op.scr[:len(a)]
			CopyBytes(s, b)
			op.reduce(s, a)
			CopyBytes(a, s)
		}
		if err != nil {
			op.err = err
			return
		}
		if st.Kind == Send || st.Kind == Recv {
			op.nreqs++
		}
	}
}

// copyPiece is the most CopyBytes moves with one copy call: Go's copy switches
// to non-temporal stores from 1 MiB, which leave the data out of the cache
// the next step reads it from, and run at about half the speed here
// (shared/bench/README.md).
const copyPiece = 256 << 10

// CopyBytes is copy(dst, src) in pieces of at most copyPiece bytes.
func CopyBytes(dst, src []byte) {
	n := min(len(dst), len(src))
	for off := 0; off < n; off += copyPiece {
		end := min(off+copyPiece, n)
		copy(dst[off:end], src[off:end])
	}
}
