package pml

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml/match"
)

// MaxTag is the largest valid send tag.
const MaxTag = 1<<30 - 1

// collBit marks a communicator's hidden collective context: Barrier and Dup
// traffic never matches user receives.
const collBit = 1 << 31

// Comm is a communicator: a matching context over all ranks of the world.
type Comm struct {
	p       *PML
	ctx     uint32
	sendSeq []atomic.Uint32 // next sequence number per destination
	coll    *Comm           // hidden context for Barrier and Dup; nil on itself
	dups    sync.Mutex      // serializes collectives started on this comm
}

func (p *PML) newComm(ctx uint32) *Comm {
	c := &Comm{p: p, ctx: ctx, sendSeq: make([]atomic.Uint32, p.cfg.Size)}
	c.coll = &Comm{p: p, ctx: ctx | collBit, sendSeq: make([]atomic.Uint32, p.cfg.Size)}
	return c
}

// World returns the world communicator (context 0). Call it once.
func (p *PML) World() *Comm { return p.newComm(0) }

func (c *Comm) Rank() int { return c.p.cfg.Rank }
func (c *Comm) Size() int { return c.p.cfg.Size }

// PML returns the engine c belongs to.
func (c *Comm) PML() *PML { return c.p }

func (c *Comm) checkSend(dest, tag int) error {
	if c.p.closed.Load() {
		return errClosed
	}
	if dest < 0 || dest >= c.p.cfg.Size {
		return fmt.Errorf("gorun: destination rank %d is outside 0..%d: %w", dest, c.p.cfg.Size-1, errs.ErrInvalidRank)
	}
	if tag < 0 || tag > MaxTag {
		return fmt.Errorf("gorun: send tag %d is outside 0..%d: %w", tag, MaxTag, errs.ErrInvalidTag)
	}
	return nil
}

func (c *Comm) checkRecv(src, tag int) error {
	if c.p.closed.Load() {
		return errClosed
	}
	if src != match.AnySource && (src < 0 || src >= c.p.cfg.Size) {
		return fmt.Errorf("gorun: source rank %d is outside 0..%d and is not AnySource: %w", src, c.p.cfg.Size-1, errs.ErrInvalidRank)
	}
	if tag != match.AnyTag && (tag < 0 || tag > MaxTag) {
		return fmt.Errorf("gorun: receive tag %d is outside 0..%d and is not AnyTag: %w", tag, MaxTag, errs.ErrInvalidTag)
	}
	return nil
}

// CheckSend and CheckRecv validate arguments without doing anything.
func (c *Comm) CheckSend(dest, tag int) error { return c.checkSend(dest, tag) }
func (c *Comm) CheckRecv(src, tag int) error  { return c.checkRecv(src, tag) }

// Isend starts a send into r, a zero Request (new, or recycled and zeroed:
// only the fields the send uses are set, which saves rewriting all of it),
// which the caller owns and must not reuse until it completes. sync makes
// it a synchronous send (Ssend).
func (c *Comm) Isend(r *Request, buf []byte, dest, tag int, sync bool) error {
	plan, err := c.planSend(buf, dest, tag)
	if err != nil {
		return err
	}
	if plan.proto == protoEager && !sync {
		return c.isendEager(r, buf, dest, tag)
	}
	return c.startSend(r, buf, dest, tag, sync, plan)
}

// planSend checks a send's arguments and decides its protocol with
// planSend's rule, taking the eager credit the plan needs: every send,
// blocking or not, eager or not, is decided here.
func (c *Comm) planSend(buf []byte, dest, tag int) (sendPlan, error) {
	if err := c.checkSend(dest, tag); err != nil {
		return sendPlan{}, err
	}
	p := c.p
	pe := &p.peers[dest]
	if pe.lost.Load() {
		return sendPlan{}, peerLost(dest)
	}
	plan := planSend(len(buf), pe.lim, true)
	if plan.credit > 0 && !p.takeCredit(pe, plan.credit) {
		plan = planSend(len(buf), pe.lim, false)
	}
	return plan, nil
}

// isendEager is Isend for a message planned eager (not synchronous): when
// the BTL copies it at once the request is complete before anyone else can
// see it, so it needs no tokens, no table and no counters (4 atomic
// operations in all: credit, sequence number, FIFO claim, completion).
func (c *Comm) isendEager(r *Request, buf []byte, dest, tag int) error {
	p := c.p
	pe := &p.peers[dest]
	r.p, r.kind, r.buf, r.peer, r.fast = p, kindSend, buf, dest, true
	h := matchHdr{ctx: c.ctx, tag: int32(tag), seq: c.sendSeq[dest].Add(1) - 1}
	copied, err := pe.m.Send(dest, btl.TagPMLMatch, h.encodeMatch(r.hdr[:]), buf, r)
	switch {
	case err != nil:
		return err
	case copied:
		// Nobody else holds r: complete it without finish's bookkeeping.
		r.doneUnshared()
	default:
		// The BTL holds buf; its SendDone finishes r, and finish counts
		// the send out of activeSends (a transient -1 is harmless: only
		// Finalize, which cannot overlap this call, looks for 0).
		p.activeSends.Add(1)
	}
	p.sentTo(dest)
	return nil
}

// Irecv posts a receive into r, a zero Request (as for Isend).
func (c *Comm) Irecv(r *Request, buf []byte, src, tag int) error {
	if err := c.checkRecv(src, tag); err != nil {
		return err
	}
	return c.startRecv(r, buf, src, tag)
}

func (c *Comm) startRecv(r *Request, buf []byte, src, tag int) error {
	p := c.p
	r.p, r.kind, r.buf, r.userTag = p, kindRecv, buf, tag
	r.recv = match.Recv{Ctx: c.ctx, Src: src, Tag: tag, Data: r}
	p.mu.Lock()
	if src >= 0 && p.peers[src].lost.Load() {
		// Messages already here can still be received.
		if _, ok := p.eng.Probe(c.ctx, src, tag); !ok {
			p.mu.Unlock()
			return peerLost(src)
		}
	}
	var j rndvJob
	if m, ok := p.eng.Post(&r.recv); ok {
		j = p.deliverUnexpLocked(r, m)
		p.freeMsgLocked(m)
	}
	p.mu.Unlock()
	if j.r != nil {
		p.runRndv(&j)
	}
	return nil
}

// Send is a blocking send.
func (c *Comm) Send(buf []byte, dest, tag int, sync bool) error {
	plan, err := c.planSend(buf, dest, tag)
	if err != nil {
		return err
	}
	if plan.proto == protoEager && !sync {
		return c.sendEager(buf, dest, tag)
	}
	r := c.p.getReq()
	if err = c.startSend(r, buf, dest, tag, sync, plan); err == nil {
		if err = c.p.Wait(nil, r); err == nil {
			err = r.err
		}
	}
	c.p.putReq(r)
	return err
}

// eagerWait is the Completion of a blocking eager send whose payload the
// BTL kept by reference: the BTL calls SendDone at most once per Send, so a
// flag is all the bookkeeping needed.
type eagerWait struct {
	done atomic.Bool
	err  error
	hdr  [btl.MaxHeader]byte // header scratch: a local array would escape through the interface call
}

func (w *eagerWait) SendDone(err error) {
	w.err = err
	w.done.Store(true)
}

var eagerWaitPool = sync.Pool{New: func() any { return new(eagerWait) }}

// sendEager is Send for a message planned eager (not synchronous): it
// needs no Request, no request table and no counters.
func (c *Comm) sendEager(buf []byte, dest, tag int) error {
	p := c.p
	pe := &p.peers[dest]
	h := matchHdr{ctx: c.ctx, tag: int32(tag), seq: c.sendSeq[dest].Add(1) - 1}
	w := eagerWaitPool.Get().(*eagerWait)
	copied, err := pe.m.Send(dest, btl.TagPMLMatch, h.encodeMatch(w.hdr[:]), buf, w)
	if err == nil && !copied {
		if err = p.WaitFor(w.done.Load); err != nil {
			// Closed with the payload still queued: the BTL dropped it
			// and w with it (never put back: a late SendDone is harmless).
			return err
		}
		err = w.err
		w.done.Store(false)
		w.err = nil
	}
	eagerWaitPool.Put(w)
	if err != nil {
		return err
	}
	p.sentTo(dest)
	return nil
}

// Recv is a blocking receive.
func (c *Comm) Recv(buf []byte, src, tag int) (Status, error) {
	if err := c.checkRecv(src, tag); err != nil {
		return Status{}, err
	}
	r := c.p.getReq()
	err := c.startRecv(r, buf, src, tag)
	var st Status
	if err == nil {
		c.p.Wait(nil, r)
		st, err = r.status, r.err
	}
	c.p.putReq(r)
	return st, err
}

// getReq takes a zero request for a blocking call: the PML's spare one
// when it is free (a single-threaded rank always gets the same, cache-hot
// request; unlike the pool, which drops items under -race, it keeps the
// blocking path at exactly zero allocations), else one from the pool.
func (p *PML) getReq() *Request {
	if r := p.spare.Swap(nil); r != nil {
		return r
	}
	return reqPool.Get().(*Request)
}

// putReq keeps a request no one else can reach any more as the spare.
func (p *PML) putReq(r *Request) {
	if reset(r) {
		p.spare.Store(r)
	}
}

// Iprobe reports whether a message matching (src, tag) is waiting.
func (c *Comm) Iprobe(src, tag int) (Status, bool, error) {
	if err := c.checkRecv(src, tag); err != nil {
		return Status{}, false, err
	}
	c.p.Progress()
	return c.probe(src, tag)
}

func (c *Comm) probe(src, tag int) (Status, bool, error) {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.eng.Probe(c.ctx, src, tag)
	if !ok {
		if src >= 0 && p.peers[src].lost.Load() {
			return Status{}, false, peerLost(src)
		}
		return Status{}, false, nil
	}
	u := m.Data.(*unexp)
	n := len(u.payload)
	if u.rndv {
		n = int(u.h.size)
	}
	return Status{Source: m.Src, Tag: m.Tag, Count: n}, true, nil
}

// Probe waits for a message matching (src, tag) and describes it.
func (c *Comm) Probe(src, tag int) (Status, error) {
	if err := c.checkRecv(src, tag); err != nil {
		return Status{}, err
	}
	var st Status
	var err error
	if werr := c.p.WaitFor(func() bool {
		var ok bool
		st, ok, err = c.probe(src, tag)
		return ok || err != nil
	}); werr != nil {
		return Status{}, werr
	}
	return st, err
}

// Wait blocks until r completes (ctx may be nil).
func (r *Request) Wait(ctx context.Context) (Status, error) {
	if err := r.p.Wait(ctx, r); err != nil {
		return Status{}, err
	}
	return r.status, r.err
}

// Cancel cancels a receive that has not matched yet.
func (r *Request) Cancel() error {
	if r.kind != kindRecv {
		return errCancelSend
	}
	p := r.p
	p.mu.Lock()
	ok := !r.Done() && p.eng.Cancel(&r.recv)
	p.mu.Unlock()
	if ok {
		r.finish(Status{}, fmt.Errorf("gorun: receive from %s with tag %s canceled: %w", rankStr(r.recv.Src), tagStr(r.recv.Tag), errs.ErrCanceled))
		p.kick()
	}
	return nil
}

func rankStr(r int) string {
	if r == match.AnySource {
		return "AnySource"
	}
	return fmt.Sprint("rank ", r)
}

func tagStr(t int) string {
	if t == match.AnyTag {
		return "AnyTag"
	}
	return fmt.Sprint(t)
}

// Barrier blocks until every rank has entered it (dissemination algorithm
// over the hidden collective context, zero-byte messages).
func (c *Comm) Barrier() error {
	if c.p.closed.Load() {
		return errClosed
	}
	c.dups.Lock()
	defer c.dups.Unlock()
	return c.barrierLocked()
}

const (
	tagBarrier = 1
	tagDup     = 2
)

func (c *Comm) barrierLocked() error {
	n, me := c.Size(), c.Rank()
	cc := c.coll
	for k := 1; k < n; k <<= 1 {
		var rr Request
		if err := cc.startRecv(&rr, nil, (me-k+n)%n, tagBarrier); err != nil {
			return err
		}
		if err := cc.Send(nil, (me+k)%n, tagBarrier, false); err != nil {
			return err
		}
		if _, err := rr.Wait(nil); err != nil {
			return err
		}
	}
	return nil
}

// Dup creates a communicator with a new context id agreed by all ranks: every
// rank proposes its next free id, rank 0 takes the maximum and tells all.
func (c *Comm) Dup() (*Comm, error) {
	if c.p.closed.Load() {
		return nil, errClosed
	}
	c.dups.Lock()
	defer c.dups.Unlock()
	p := c.p
	p.mu.Lock()
	prop := p.nextCtx
	p.mu.Unlock()
	var b [4]byte
	cc := c.coll
	if c.Rank() == 0 {
		for i := 1; i < c.Size(); i++ {
			if _, err := cc.Recv(b[:], match.AnySource, tagDup); err != nil {
				return nil, err
			}
			prop = max(prop, binary.LittleEndian.Uint32(b[:]))
		}
		binary.LittleEndian.PutUint32(b[:], prop)
		for i := 1; i < c.Size(); i++ {
			if err := cc.Send(b[:], i, tagDup, false); err != nil {
				return nil, err
			}
		}
	} else {
		binary.LittleEndian.PutUint32(b[:], prop)
		if err := cc.Send(b[:], 0, tagDup, false); err != nil {
			return nil, err
		}
		if _, err := cc.Recv(b[:], 0, tagDup); err != nil {
			return nil, err
		}
		prop = binary.LittleEndian.Uint32(b[:])
	}
	if prop >= collBit-1 {
		return nil, fmt.Errorf("gorun: out of communicator context ids (%d used)", prop)
	}
	p.mu.Lock()
	p.nextCtx = max(p.nextCtx, prop+1)
	p.mu.Unlock()
	return p.newComm(prop), nil
}

// Finalize completes outstanding sends, synchronizes all ranks, cancels
// the receives still posted, and closes the BTLs.
func (p *PML) Finalize(world *Comm) error {
	p.WaitFor(func() bool { return p.activeSends.Load() == 0 })
	err := world.Barrier()
	p.mu.Lock()
	posted := p.eng.DropAllPosted(nil)
	p.mu.Unlock()
	for _, mr := range posted {
		mr.Data.(*Request).finish(Status{}, fmt.Errorf("gorun: receive canceled by Finalize: %w", errs.ErrCanceled))
	}
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	return err
}

// Sendrecv posts the receive, then sends (blocking), then waits for the
// receive: the receive is posted first, so two ranks that exchange with
// each other never wait on each other's send. The caller has validated both
// halves.
func (c *Comm) Sendrecv(sbuf []byte, dest, stag int, rbuf []byte, src, rtag int) (Status, error) {
	r := c.p.getReq()
	if err := c.startRecv(r, rbuf, src, rtag); err != nil {
		return Status{}, err
	}
	serr := c.Send(sbuf, dest, stag, false)
	c.p.Wait(nil, r)
	st, rerr := r.status, r.err
	c.p.putReq(r)
	if serr != nil || rerr != nil {
		return st, errors.Join(serr, rerr)
	}
	return st, nil
}
