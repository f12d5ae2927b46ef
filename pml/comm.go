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
	"github.com/gorun-mpi/gorun/internal/relaxed"
	"github.com/gorun-mpi/gorun/pml/match"
)

// MaxTag is the largest valid send tag.
const MaxTag = 1<<30 - 1

// collBit marks a communicator's hidden collective context: Barrier, Dup,
// Split and the coll package's traffic never match user receives.
const collBit = 1 << 31

// Comm is a communicator: a group of world ranks and a matching context.
// Ranks given to and returned by its methods are ranks in the group; the
// matching engine and the BTLs work in world ranks (envelopes carry the
// sender's world rank), so a communicator translates at its edges.
type Comm struct {
	p    *PML
	ctx  uint32
	rank int // this process's rank in the group
	size int // Size(), kept for the argument checks, which inline
	grp  *group
	// sendSeq: next sequence number per destination world rank, taken
	// under that peer's send lock (peer.sendMu; nextSeq, eagerNow).
	sendSeq []uint32
	coll    *Comm      // hidden context for collectives; nil on itself
	dups    sync.Mutex // serializes the collectives of this package on c
	freed   atomic.Bool
	parent  *Comm // the user-visible Comm of a hidden one
}

// group maps a communicator's ranks to world ranks and back. A nil *group
// is the identity (the world and its Dups).
type group struct {
	world []int   // comm rank -> world rank
	local []int32 // world rank -> comm rank, or -1
}

func newGroup(worldRanks []int, worldSize int) *group {
	g := &group{world: worldRanks, local: make([]int32, worldSize)}
	for i := range g.local {
		g.local[i] = -1
	}
	for r, w := range worldRanks {
		g.local[w] = int32(r)
	}
	return g
}

func (p *PML) newComm(ctx uint32, g *group, rank int) *Comm {
	size := p.cfg.Size
	if g != nil {
		size = len(g.world)
	}
	c := &Comm{p: p, ctx: ctx, grp: g, rank: rank, size: size, sendSeq: make([]uint32, p.cfg.Size)}
	c.coll = &Comm{p: p, ctx: ctx | collBit, grp: g, rank: rank, size: size, sendSeq: make([]uint32, p.cfg.Size), parent: c}
	return c
}

// World returns the world communicator (context 0). Call it once.
func (p *PML) World() *Comm { return p.newComm(0, nil, p.cfg.Rank) }

// Rank is this process's rank in c; Size the number of ranks in c.
func (c *Comm) Rank() int { return c.rank }
func (c *Comm) Size() int {
	if c.grp == nil {
		return c.p.cfg.Size
	}
	return len(c.grp.world)
}

// WorldRank translates a rank of c to its world rank.
func (c *Comm) WorldRank(r int) int {
	if c.grp == nil {
		return r
	}
	return c.grp.world[r]
}

// LocalRank translates a world rank to its rank in c, or -1 if it is not in c.
func (c *Comm) LocalRank(world int) int {
	if c.grp == nil {
		return world
	}
	return int(c.grp.local[world])
}

// worldSrc translates a receive's source (a rank of c or AnySource).
func (c *Comm) worldSrc(src int) int {
	if src < 0 {
		return src
	}
	return c.WorldRank(src)
}

// Context is c's context id (the hidden one has collBit set).
func (c *Comm) Context() uint32 { return c.ctx }

// Coll returns c's hidden collective communicator: the same group, a
// context that user receives never match.
func (c *Comm) Coll() *Comm { return c.coll }

// NodeID returns the machine identity of rank r of c (see Config.NodeID).
func (c *Comm) NodeID(r int) int {
	if c.p.cfg.NodeID == nil {
		return 0
	}
	return c.p.cfg.NodeID[c.WorldRank(r)]
}

// errInvalidComm is returned by every call on a freed communicator.
var errInvalidComm = fmt.Errorf("gorun: the communicator was freed: %w", errs.ErrInvalidComm)

// errNilComm answers calls on a nil *Comm.
var errNilComm = fmt.Errorf("gorun: nil communicator: %w", errs.ErrInvalidComm)

// usable reports why c cannot be used (nil, after Close or Free), or nil.
func (c *Comm) usable() error {
	switch {
	case c.fine():
		return nil
	case c == nil:
		return errNilComm
	case c.p.closed.Load():
		return errClosed
	default: // c or its parent freed
		return errInvalidComm
	}
}

// fine reports whether c can be used (usable() == nil, which it decides):
// the argument checks' common case, in few enough steps that they inline.
func (c *Comm) fine() bool {
	return c != nil && !c.p.closed.Load() && !c.freed.Load() && (c.parent == nil || !c.parent.freed.Load())
}

// Usable reports why c cannot be used (ErrFinalized, ErrInvalidComm), or nil.
func (c *Comm) Usable() error { return c.usable() }

// PML returns the engine c belongs to.
func (c *Comm) PML() *PML { return c.p }

// checkSend validates a send's arguments: nil, or what sendError says is
// wrong. The hot paths call sendOK, which inlines, and sendError only when
// it fails.
func (c *Comm) checkSend(dest, tag int) error {
	if c.sendOK(dest, tag) {
		return nil
	}
	return c.sendError(dest, tag)
}

// sendOK reports whether a send's arguments are valid (checkSend's nil),
// in few enough steps to inline.
func (c *Comm) sendOK(dest, tag int) bool {
	return c.fine() && uint(dest) < uint(c.size) && uint(tag) <= MaxTag
}

func (c *Comm) sendError(dest, tag int) error {
	if err := c.usable(); err != nil {
		return err
	}
	if dest < 0 || dest >= c.Size() {
		return fmt.Errorf("gorun: destination rank %d is outside 0..%d: %w", dest, c.Size()-1, errs.ErrInvalidRank)
	}
	if tag < 0 || tag > MaxTag {
		return fmt.Errorf("gorun: send tag %d is outside 0..%d: %w", tag, MaxTag, errs.ErrInvalidTag)
	}
	return nil
}

// checkRecv validates a receive's arguments, like checkSend.
func (c *Comm) checkRecv(src, tag int) error {
	if c.recvOK(src, tag) {
		return nil
	}
	return c.recvError(src, tag)
}

// recvOK is checkRecv's common case, inlined like sendOK: src in
// AnySource (-1)..size-1, tag in AnyTag (-1)..MaxTag.
func (c *Comm) recvOK(src, tag int) bool {
	return c.fine() && uint(src+1) <= uint(c.size) && uint(tag+1) <= MaxTag+1
}

func (c *Comm) recvError(src, tag int) error {
	if err := c.usable(); err != nil {
		return err
	}
	if src != match.AnySource && (src < 0 || src >= c.Size()) {
		return fmt.Errorf("gorun: source rank %d is outside 0..%d and is not AnySource: %w", src, c.Size()-1, errs.ErrInvalidRank)
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
	plan, err := c.planSend(buf, dest, tag, sync)
	if err != nil {
		return err
	}
	dest = c.WorldRank(dest)
	if plan.proto == protoEager && !sync {
		pe := &c.p.peers[dest]
		if _, seq, sent, ok := c.eagerNow(pe, dest, tag, buf, false); ok {
			return c.isendEager(r, buf, dest, tag, seq, sent)
		}
		plan = planSend(len(buf), &pe.lim, false, false, false) // out of credit
	}
	return c.startSend(r, buf, dest, tag, sync, plan)
}

// eagerFirst is planSend's most common answer without its call and its
// plan: a send that is not synchronous, with valid arguments, to a peer
// not lost, within its eager limit, is eager (its credit is eagerNow's to
// take). It returns dest's world rank and true then; false leaves the
// send to planSend. (A plan returned from planSend is a struct stored
// field by field and loaded whole, a store-forwarding stall on every
// send.)
func (c *Comm) eagerFirst(n, dest, tag int, sync bool) (int, bool) {
	if sync || !c.sendOK(dest, tag) {
		return 0, false
	}
	w := c.WorldRank(dest)
	pe := &c.p.peers[w]
	return w, n <= pe.lim.eager && !pe.lost.Load()
}

// planSend checks a send's arguments and decides its protocol with
// planSend's rule, taking the eager credit the plan needs: every send,
// blocking or not, eager or not, is decided here. An eager send that is
// not synchronous is planned eager with its credit not yet taken: eagerNow
// takes it, under the lock it numbers and sends the message in.
func (c *Comm) planSend(buf []byte, dest, tag int, sync bool) (sendPlan, error) {
	if !c.sendOK(dest, tag) {
		return sendPlan{}, c.sendError(dest, tag)
	}
	dest = c.WorldRank(dest)
	p := c.p
	pe := &p.peers[dest]
	if pe.lost.Load() {
		return sendPlan{}, peerLost(dest)
	}
	n := len(buf)
	if n <= pe.lim.eager {
		// planSend's first case, without copying the limits.
		if !sync || p.takeCredit(pe, n) {
			return sendPlan{proto: protoEager, chunk: n, credit: n}, nil
		}
		return planSend(n, &pe.lim, false, false, false), nil
	}
	inStream := (pe.lim.streamable(n) || pe.lim.splitsInStream(n) || pe.lim.pipeable(n)) && c.streamingTo(pe, dest, n)
	stream := inStream
	if stream && pe.streamRead.Load() != 0 && pe.lim.streamable(n) {
		stream = false // this stream's messages are read (timeStream)
	}
	// A pipeable stream goes by the pipeline only when timeStream chose it
	// (streamRead is 0 in a stream it does not time, too).
	pipe := stream && pe.lim.pipeable(n) && pe.streamT0.Load() != 0 && pe.streamRead.Load() == 0
	var carried, split bool
	var t0 int64
	if !inStream && p.activeSends.Load() == 0 {
		if pe.lim.carriable(n) {
			carried, t0 = p.serial.way(n)
		} else if pe.lim.splittable(n) {
			split, t0 = p.serialSplit.way(n)
		}
	}
	// A carried serial send skips the rget band as a stream's does, and
	// one that asks for a split read is flagged as a stream's.
	plan := planSend(n, &pe.lim, true, stream || carried || split, pipe)
	if plan.credit > 0 && !p.takeCredit(pe, plan.credit) {
		// Out of credit: a stream's message is read too, and a serial
		// send is read untimed.
		return planSend(n, &pe.lim, false, false, false), nil
	}
	plan.carried, plan.split, plan.t0 = carried, split, t0
	return plan, nil
}

// isendEager is Isend for a message planned eager (not synchronous),
// numbered seq by eagerNow, and already sent by it when sent: when the BTL
// copies it at once the request is complete before anyone else can see
// it, so it needs no tokens, no table and no counters.
func (c *Comm) isendEager(r *Request, buf []byte, dest, tag int, seq uint32, sent bool) error {
	p := c.p
	pe := &p.peers[dest]
	r.p, r.kind, r.buf, r.peer, r.fast = p, kindSend, buf, dest, true
	copied := sent
	if !sent {
		h := matchHdr{ctx: c.ctx, tag: int32(tag), seq: seq}
		var err error
		if copied, err = pe.m.Send(dest, btl.TagPMLMatch, h.encodeMatch(r.hdr[:]), buf, r); err != nil {
			return err
		}
	}
	if copied {
		// Nobody else holds r: complete it without finish's bookkeeping.
		r.doneUnshared()
	} else {
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
	_, err := c.startRecv(r, buf, c.worldSrc(src), tag)
	return err
}

// startRecv posts r, or when r is nil a request of its own (which it
// returns), for a message from world rank src (or AnySource).
func (c *Comm) startRecv(r *Request, buf []byte, src, tag int) (*Request, error) {
	r, _, err := c.startRecvH(r, buf, src, tag, nil, false)
	return r, err
}

// startRecvH is startRecv for a receive whose result goes to h
// (StartIrecv; nil for the others). With h, a receive that is posted (no
// message waiting) belongs to h from then on: h.r and r.h are set under
// mu before any delivery can see r, and startRecvH returns nil, since its
// delivery may settle h and recycle r (deliverEagerLocked) before the
// caller could look at it. A receive that found its eager message is
// settled in h the same way (h.r nil: h is not shared yet), and returns
// nil too. Otherwise (a rendezvous found waiting, an error) it returns r
// for the caller to adopt. With fresh, h is nil and startRecvH takes a
// zero Handle from the PML's slab (PML.hslab) and returns it.
func (c *Comm) startRecvH(r *Request, buf []byte, src, tag int, h *Handle, fresh bool) (*Request, *Handle, error) {
	p := c.p
	p.mu.Lock()
	// nlost first: one load while no peer is lost. A peer reported lost
	// after it is 0 drops this receive when it takes mu (onPeerLost).
	if nlost := p.nlost.Load(); nlost != 0 && (src >= 0 && p.peers[src].lost.Load() || src == match.AnySource && p.othersLost(nlost)) {
		// Messages already here can still be received.
		if _, ok := p.eng.Probe(c.ctx, src, tag); !ok {
			p.mu.Unlock()
			if src < 0 {
				return nil, nil, errAllLost
			}
			return nil, nil, peerLost(src)
		}
	}
	if fresh {
		h = p.hslab.take()
	}
	if r == nil {
		r = p.newReqLocked()
	}
	r.p, r.kind, r.buf, r.userTag, r.grp, r.h = p, kindRecv, buf, tag, c.grp, h
	// Field by field into r (zero, or a receive recycled by its delivery
	// whose other fields are: see recycleLocked): a composite literal here
	// is built and copied with a write-barrier check per pointer field (~8
	// ns, 5% of an Isend+Irecv pair).
	r.recv.Ctx, r.recv.Src, r.recv.Tag, r.recv.Data = c.ctx, src, tag, r
	if h != nil {
		h.r = r
	}
	m, ok := p.eng.Post(&r.recv)
	if !ok {
		p.mu.Unlock()
		if h != nil {
			r = nil // posted: h's from now on
		}
		return r, h, nil
	}
	j := p.deliverUnexpLocked(r, m)
	p.freeMsgLocked(m)
	if h != nil && h.word.Load()&hSettled != 0 {
		h.r = nil // settled and r recycled (settleDirect); h is not shared yet
		r = nil
	}
	p.mu.Unlock()
	if j.r != nil {
		p.runRndv(&j)
	}
	return r, h, nil
}

// Send is a blocking send.
func (c *Comm) Send(buf []byte, dest, tag int, sync bool) error {
	var plan sendPlan
	w, eager := c.eagerFirst(len(buf), dest, tag, sync)
	if !eager {
		var err error
		if plan, err = c.planSend(buf, dest, tag, sync); err != nil {
			return err
		}
		w = c.WorldRank(dest) // not eager: eagerFirst takes every eager send that is not synchronous
	}
	dest = w
	var err error
	if eager {
		pe := &c.p.peers[dest]
		_, seq, sent, ok := c.eagerNow(pe, dest, tag, buf, false)
		if sent {
			c.p.sentTo(dest)
			return nil
		}
		if ok {
			return c.sendEager(buf, dest, tag, seq)
		}
		plan = planSend(len(buf), &pe.lim, false, false, false) // out of credit
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

// sendEager is Send for a message planned eager (not synchronous),
// numbered seq by eagerNow but not sent by it: it needs no Request, no
// request table and no counters.
func (c *Comm) sendEager(buf []byte, dest, tag int, seq uint32) error {
	p := c.p
	pe := &p.peers[dest]
	h := matchHdr{ctx: c.ctx, tag: int32(tag), seq: seq}
	if ts := pe.try; ts != nil {
		// The common case: the BTL copies the message at once, and the
		// header goes by value (no scratch, no completion).
		sent, err := ts.TrySend(dest, btl.TagPMLMatch, h.matchWords(), buf)
		if err != nil {
			return err
		}
		if sent {
			p.sentTo(dest)
			return nil
		}
	}
	return c.sendEagerWait(buf, dest, h)
}

// sendEagerWait is sendEager through btl.Send, with a Completion to wait
// for when the BTL keeps buf by reference.
func (c *Comm) sendEagerWait(buf []byte, dest int, h matchHdr) error {
	p := c.p
	pe := &p.peers[dest]
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
	if !c.recvOK(src, tag) {
		return Status{}, c.recvError(src, tag)
	}
	c.p.othersFirst()
	r := c.p.getReq()
	wsrc := c.worldSrc(src)
	if wsrc >= 0 && c.p.peers[wsrc].direct != nil && c.p.bigSends.Load() == 0 {
		if st, err, ok := c.recvDirect(r, buf, wsrc, tag); ok {
			c.p.putReq(r)
			return st, err
		}
	}
	_, err := c.startRecv(r, buf, wsrc, tag)
	var st Status
	if err == nil {
		if err = c.p.waitLook(nil, r, false); err == nil {
			st, err = r.status, r.err
		}
	}
	c.p.putReq(r)
	return st, err
}

// getReq takes a zero request for a blocking call: the PML's spare one
// when it is free (a single-threaded rank always gets the same, cache-hot
// request; unlike the pool, which drops items under -race, it keeps the
// blocking path at exactly zero allocations), else one from the pool. The
// spare is zeroed here, as the call begins, not when the previous call put
// it back (putReq).
func (p *PML) getReq() *Request {
	if r := p.spare.Swap(nil); r != nil {
		*r = Request{}
		return r
	}
	return reqPool.Get().(*Request)
}

// putReq keeps a request no one else can reach any more as the spare. A
// release store (internal/relaxed), not an XCHG: a blocking Recv ends
// here between its message's arrival and the program's reply, where a
// locked instruction costs the ping-pong (osu lat 0-256 B 0-7% faster,
// 2x11 interleaved runs). For the same reason the request is not zeroed
// here but when it is taken again (getReq): the 368-byte clear was ~45
// instructions on that path (osu lat near 0-16 B 2-4% faster at the
// medians over four code layouts each). Only the caller's buffer is
// dropped at once, so that the spare does not keep it alive.
func (p *PML) putReq(r *Request) {
	if reusable(r) {
		r.buf = nil
		relaxed.StorePointer(&p.spare, r)
	}
}

// Iprobe reports whether a message matching (src, tag) is waiting.
func (c *Comm) Iprobe(src, tag int) (Status, bool, error) {
	if err := c.checkRecv(src, tag); err != nil {
		return Status{}, false, err
	}
	c.p.Progress()
	return c.probe(c.worldSrc(src), tag)
}

// probe looks for a message from world rank src (or AnySource).
func (c *Comm) probe(src, tag int) (Status, bool, error) {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.eng.Probe(c.ctx, src, tag)
	if !ok {
		if src >= 0 && p.peers[src].lost.Load() {
			return Status{}, false, peerLost(src)
		}
		if src == match.AnySource && p.othersLost(p.nlost.Load()) {
			return Status{}, false, errAllLost
		}
		return Status{}, false, nil
	}
	u := m.Data.(*unexp)
	n := len(u.payload)
	if u.rndv {
		n = int(u.h.size)
	}
	return Status{Source: c.LocalRank(m.Src), Tag: m.Tag, Count: n}, true, nil
}

// Probe waits for a message matching (src, tag) and describes it.
func (c *Comm) Probe(src, tag int) (Status, error) {
	if err := c.checkRecv(src, tag); err != nil {
		return Status{}, err
	}
	var st Status
	var err error
	wsrc := c.worldSrc(src)
	if werr := c.p.waitFrom(wsrc, func() bool {
		var ok bool
		st, ok, err = c.probe(wsrc, tag)
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
	if err := c.usable(); err != nil {
		return err
	}
	c.dups.Lock()
	defer c.dups.Unlock()
	return c.barrierLocked()
}

// Tags of this package's traffic on the hidden context. The coll package
// uses tags from FirstCollTag up.
const (
	tagBarrier = 1
	tagDup     = 2
	tagSplit   = 3
	// FirstCollTag is the first hidden-context tag free for the coll package.
	FirstCollTag = 16
)

func (c *Comm) barrierLocked() error {
	n, me := c.Size(), c.Rank()
	cc := c.coll
	for k := 1; k < n; k <<= 1 {
		var rr Request
		if _, err := cc.startRecv(&rr, nil, cc.WorldRank((me-k+n)%n), tagBarrier); err != nil {
			return err
		}
		if err := cc.Send(nil, (me+k)%n, tagBarrier, false); err != nil {
			return err
		}
		if _, err := c.p.waitBarrier(&rr); err != nil {
			return err
		}
	}
	return nil
}

// Dup creates a communicator over c's group with a new context id agreed
// by all ranks of c (see allocContext). It is collective over c.
func (c *Comm) Dup() (*Comm, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	c.dups.Lock()
	defer c.dups.Unlock()
	ctx, err := c.allocContextLocked()
	if err != nil {
		return nil, err
	}
	return c.p.newComm(ctx, c.grp, c.rank), nil
}

// Split partitions c by color: the ranks passing the same color >= 0 form a
// communicator, ordered by key, then by rank in c. A negative color
// (Undefined) gives nil. It is collective over c.
func (c *Comm) Split(color, key int) (*Comm, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	if color < -1 {
		return nil, fmt.Errorf("gorun: Split color %d; want >= 0 or Undefined (-1): %w", color, errs.ErrInvalidArg)
	}
	c.dups.Lock()
	defer c.dups.Unlock()
	// Everyone learns everyone's (color, key): gather at 0, then broadcast.
	n := c.Size()
	all := make([]byte, 16*n)
	le.PutUint64(all[16*c.rank:], uint64(int64(color)))
	le.PutUint64(all[16*c.rank+8:], uint64(int64(key)))
	if err := c.coll.gatherBcastLocked(all, 16, tagSplit); err != nil {
		return nil, err
	}
	ctx, err := c.allocContextLocked()
	if err != nil {
		return nil, err
	}
	if color < 0 {
		return nil, nil
	}
	type member struct{ key, rank int }
	var ms []member
	for r := 0; r < n; r++ {
		if int(int64(le.Uint64(all[16*r:]))) == color {
			ms = append(ms, member{int(int64(le.Uint64(all[16*r+8:]))), r})
		}
	}
	sortMembers(ms, func(a, b member) bool { return a.key < b.key || a.key == b.key && a.rank < b.rank })
	world := make([]int, len(ms))
	me := -1
	for i, m := range ms {
		world[i] = c.WorldRank(m.rank)
		if m.rank == c.rank {
			me = i
		}
	}
	var g *group
	if !isIdentity(world, c.p.cfg.Size) {
		g = newGroup(world, c.p.cfg.Size)
	}
	return c.p.newComm(ctx, g, me), nil
}

// sortMembers is an insertion sort (communicators are small, and it keeps
// the package free of a sort import for one call).
func sortMembers[T any](s []T, less func(a, b T) bool) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && less(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func isIdentity(world []int, size int) bool {
	if len(world) != size {
		return false
	}
	for i, w := range world {
		if w != i {
			return false
		}
	}
	return true
}

// Free releases c: later calls on it return ErrInvalidComm, and its
// matching state is dropped once nothing is pending on it. Freeing the
// world is an error.
func (c *Comm) Free() error {
	if c.parent != nil {
		return fmt.Errorf("gorun: Free of a hidden communicator: %w", errs.ErrInvalidComm)
	}
	if c.ctx == 0 {
		return fmt.Errorf("gorun: Free of the world communicator: %w", errs.ErrInvalidComm)
	}
	if c.p.closed.Load() {
		return errClosed
	}
	if !c.freed.CompareAndSwap(false, true) {
		return errInvalidComm
	}
	p := c.p
	p.mu.Lock()
	p.eng.DropContext(c.ctx)
	p.eng.DropContext(c.coll.ctx)
	p.mu.Unlock()
	return nil
}

// gatherBcastLocked gives every rank of c (a hidden comm) the whole of buf,
// of which rank r contributes buf[r*w:(r+1)*w]: gather at rank 0, then
// rank 0 sends the whole to all.
func (c *Comm) gatherBcastLocked(buf []byte, w, tag int) error {
	n := c.Size()
	if n == 1 {
		return nil
	}
	if c.rank != 0 {
		if err := c.Send(buf[c.rank*w:(c.rank+1)*w], 0, tag, false); err != nil {
			return err
		}
		_, err := c.Recv(buf, 0, tag)
		return err
	}
	for r := 1; r < n; r++ {
		if _, err := c.Recv(buf[r*w:(r+1)*w], r, tag); err != nil {
			return err
		}
	}
	for r := 1; r < n; r++ {
		if err := c.Send(buf, r, tag, false); err != nil {
			return err
		}
	}
	return nil
}

// Context ids (Open MPI's nextcid model, with its rule for concurrency).
//
// A context id must be unused by every member of the new communicator, and
// never reused (a freed id's messages could still be in flight elsewhere:
// ids are not recycled, and 2^31 of them are enough for any job). Each
// process keeps next, the lowest id above every id it has taken. An
// allocation over c is rounds of an allreduce over c's hidden context of
// (proposal, refused): a rank proposes its next only while it holds the
// process's allocation right, else it refuses; when no rank refused, the
// maximum proposal is the new id and every rank raises next above it.
//
// The right: at most one allocation per process proposes at a time (it
// holds the right from its proposal to the end of its round, so a
// concurrent allocation cannot take the same next), and only the waiting
// allocation whose parent has the lowest context id may take it: the lowest
// one always wins eventually, so concurrent Dups and Splits of different
// communicators, whatever their order on each rank, always finish.
type cidAlloc struct {
	mu     sync.Mutex
	next   uint32
	active map[*Comm]bool // allocations under way, by parent
	owner  *Comm          // the allocation holding the right, or nil
}

// lowestLocked reports whether parent has the lowest context id among the
// active allocations.
func (a *cidAlloc) lowestLocked(parent *Comm) bool {
	for o := range a.active {
		if o.ctx < parent.ctx {
			return false
		}
	}
	return true
}

// maxContext bounds context ids: the hidden contexts set collBit.
const maxContext = collBit - 1

func (c *Comm) allocContextLocked() (uint32, error) {
	p := c.p
	a := &p.cid
	a.mu.Lock()
	if a.active == nil {
		a.active = make(map[*Comm]bool)
	}
	a.active[c] = true
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.active, c)
		if a.owner == c {
			a.owner = nil
		}
		a.mu.Unlock()
	}()
	for round := 0; ; round++ {
		a.mu.Lock()
		var prop, refused uint32
		if a.owner == nil && a.lowestLocked(c) {
			a.owner = c
			prop = max(a.next, 1)
		} else {
			refused = 1
		}
		a.mu.Unlock()
		got, anyRefused, err := c.coll.allreduceMax2Locked(prop, refused, tagDup)
		a.mu.Lock()
		if a.owner == c {
			a.owner = nil
			if err == nil && anyRefused == 0 {
				a.next = max(a.next, got+1)
			}
		}
		a.mu.Unlock()
		if err != nil {
			return 0, err
		}
		if anyRefused == 0 {
			if got >= maxContext {
				return 0, fmt.Errorf("gorun: out of communicator context ids (%d used)", got)
			}
			return got, nil
		}
		if round > 0 && round%64 == 0 {
			p.idle() // another allocation holds the right here or elsewhere
		}
	}
}

// allreduceMax2Locked returns the maximum of a and of b over the ranks of
// c (a hidden comm): gather at rank 0, which answers everyone.
func (c *Comm) allreduceMax2Locked(a, b uint32, tag int) (uint32, uint32, error) {
	n := c.Size()
	var m [8]byte
	if c.rank != 0 {
		binary.LittleEndian.PutUint32(m[0:], a)
		binary.LittleEndian.PutUint32(m[4:], b)
		if err := c.Send(m[:], 0, tag, false); err != nil {
			return 0, 0, err
		}
		if _, err := c.Recv(m[:], 0, tag); err != nil {
			return 0, 0, err
		}
		return binary.LittleEndian.Uint32(m[0:]), binary.LittleEndian.Uint32(m[4:]), nil
	}
	for i := 1; i < n; i++ {
		if _, err := c.Recv(m[:], i, tag); err != nil {
			return 0, 0, err
		}
		a = max(a, binary.LittleEndian.Uint32(m[0:]))
		b = max(b, binary.LittleEndian.Uint32(m[4:]))
	}
	binary.LittleEndian.PutUint32(m[0:], a)
	binary.LittleEndian.PutUint32(m[4:], b)
	for i := 1; i < n; i++ {
		if err := c.Send(m[:], i, tag, false); err != nil {
			return 0, 0, err
		}
	}
	return a, b, nil
}

// Finalize completes outstanding sends, synchronizes all ranks, cancels
// the receives still posted, and closes the BTLs.
func (p *PML) Finalize(world *Comm) error {
	p.finalizing.Store(true)
	err := p.WaitFor(func() bool { return p.activeSends.Load() == 0 })
	if err == nil {
		err = p.finalBarrier(world)
	}
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

// flushBarrier waits until the BTLs have handed over every message that
// Finalize's message barrier sent. Each went to a rank that cannot leave its own
// barrier without it, but Send may have queued it (a full FIFO) after
// returning: closing now would drop it, and its rank would see us gone
// instead (ErrPeerLost). The ranks it went to are still polling, so their
// queues drain up to it; what other goroutines queue behind it does not
// count. The targets are those of barrierLocked's dissemination.
func (p *PML) flushBarrier() error {
	n, me := p.cfg.Size, p.cfg.Rank
	type target struct {
		f    btl.Flusher
		rank int
		mark uint64
	}
	var ts []target
	for k := 1; k < n; k <<= 1 {
		dest := (me + k) % n
		if f, ok := p.peers[dest].m.(btl.Flusher); ok {
			ts = append(ts, target{f, dest, f.QueueMark(dest)})
		}
	}
	return p.WaitFor(func() bool {
		for _, t := range ts {
			if !t.f.Flushed(t.rank, t.mark) {
				return false
			}
		}
		return true
	})
}

// Sendrecv posts the receive, then sends (blocking), then waits for the
// receive: the receive is posted first, so two ranks that exchange with
// each other never wait on each other's send. The caller has validated both
// halves.
func (c *Comm) Sendrecv(sbuf []byte, dest, stag int, rbuf []byte, src, rtag int) (Status, error) {
	r := c.p.getReq()
	if _, err := c.startRecv(r, rbuf, c.worldSrc(src), rtag); err != nil {
		return Status{}, err
	}
	serr := c.Send(sbuf, dest, stag, false)
	var st Status
	rerr := c.p.Wait(nil, r)
	if rerr == nil {
		st, rerr = r.status, r.err
	}
	c.p.putReq(r)
	if serr != nil || rerr != nil {
		return st, errors.Join(serr, rerr)
	}
	return st, nil
}
