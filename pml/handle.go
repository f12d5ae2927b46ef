package pml

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gorun-mpi/gorun/btl"
)

// Handle is a user's reference to a nonblocking operation: what
// gorun.Isend and gorun.Irecv hand out. It is small (the user may keep it
// forever, so every Isend and Irecv allocates one: 32 bytes, half the
// garbage, and so half the GC cycles, of the 64 it took with its own PML
// pointer and error) and the operation's Request, which is not, comes from
// the PML's cache (reqcache.go; receives) or a pool and goes back to the
// cache once the operation has completed and no goroutine can reach it
// any more.
//
// Protocol (word = the settled, writing and failed flags + a count of
// holders; the claimed flag, Claim's, is independent of it). A Handle
// whose operation completed inside its start without an error has h.r ==
// nil and its Status in src, tag and count from the start: it needs none
// of this. Otherwise:
//   - a goroutine that wants the Request (hold) increments the count, then
//     looks at the flags: unsettled, it is a holder and may use h.r until
//     it drops its count; settled, it uses the settled result and never
//     touches h.r, nor drops the count it added (a late hold, harmless: it
//     only keeps the Request from being recycled, so the GC takes it);
//   - a holder that finds the Request complete settles: it claims writing
//     with a CAS, copies the Status into h, then in one atomic add sets
//     settled (and failed when the result is an error), clears writing
//     and drops its own count; a holder that finds writing or settled
//     already set reads the result from the Request it still holds and
//     just drops its count;
//   - the drop that leaves the word at exactly settled (no holder, nobody
//     writing, no error) recycles the Request. It happens at most once: at
//     that point every counted holder has dropped, and later holds are all
//     late ones, which never drop;
//   - a receive posted by StartIrecv knows its handle (r.h), and its eager
//     delivery settles h itself when nobody holds it (settleDirect: one CAS
//     from a word without holders to settled), recycling r at once under
//     PML.mu; a receive completed while somebody holds h, or with an
//     error, completes r as usual for the holders to settle. h.r then
//     points to a recycled Request, which nothing reads: every hold sees
//     settled first, and only a failed result (never settled so) reads h.r.
//
// An error has no room in h: a failed operation (hFailed, set with
// settled, or at the start when it failed inside it) keeps its Request,
// which is never recycled and holds the error in r.err (the GC takes it
// with h). Errors are rare; the common case allocates 32 bytes.
//
// The PML is reached through the Request (r.p) while the operation is
// pending, the only time it is needed.
//
// A Wait on a pending operation so costs two atomic operations on the
// word (waitSole) and none on a mutex; a Wait on a receive its delivery
// settled (the common case in a window of receives: all but the first
// arrive while the program waits for an earlier one) costs one load.
type Handle struct {
	r     *Request // the operation; immutable once the handle is handed out
	word  atomic.Uint32
	src   int32 // the settled Status: Source, Tag, Count
	tag   int32
	send  bool
	count int64
}

const (
	hSettled = 1 << 31 // the result is in h (its error, if any, in r.err: hFailed)
	hWriting = 1 << 30 // a holder is copying the result into h
	// hClaimed is Claim's flag; the bits below hFailed count holders. It
	// shares the word so that a gorun.Request (a Handle) fits 32 bytes.
	hClaimed = 1 << 29
	// hFailed: the result is an error, kept in h.r.err; h.r is never
	// recycled.
	hFailed = 1 << 28
)

// setStatus stores st in h's own fields (a settled or unshared handle).
func (h *Handle) setStatus(st Status) {
	h.src, h.tag, h.count = int32(st.Source), int32(st.Tag), int64(st.Count)
}

// Claim marks h as consumed (gorun.WaitAny returns each completed request
// once) and reports whether this call did it.
func (h *Handle) Claim() bool { return h.word.Or(hClaimed)&hClaimed == 0 }

// Claimed reports whether Claim has been called on h.
func (h *Handle) Claimed() bool { return h.word.Load()&hClaimed != 0 }

var (
	reqPool = sync.Pool{New: func() any { reqsMade.Add(1); return new(Request) }}
	// reqsMade counts the Requests the pool had to make (a test's measure
	// of recycling).
	reqsMade atomic.Int64
)

// errCancelSend is Cancel's answer for a send request or an external one
// (a collective, which cannot be cancelled).
var errCancelSend = fmt.Errorf("gorun: Cancel is only for receives; this request is a send or a collective")

// recycle returns a completed Request that no goroutine can reach any more
// to its PML's cache (reqcache.go), or to the pool when that is full.
func recycle(r *Request) {
	p := r.p
	if reset(r) && (p == nil || !p.reqs.put(r)) {
		reqPool.Put(r)
	}
}

// reset zeroes a completed Request that no goroutine can reach any more,
// for reuse. One whose completion may still be touching it (finish waking
// a waiter, stWoken not yet set) is not reset and goes to the GC instead:
// reset reports false. A Request that had a waiter is reused once finish
// is done with it, so a Recv that blocks allocates no Request.
func reset(r *Request) bool {
	if !reusable(r) {
		return false
	}
	*r = Request{}
	return true
}

// reusable reports whether r, completed and unreachable, may be reused:
// not while its completion may still be touching it (see reset).
func reusable(r *Request) bool {
	if r.early {
		return true
	}
	s := r.state.Load()
	return s == stDone || s == stDone|stWaiter|stWoken
}

// StartIsend starts a send of buf to dest into h, a zero Handle. An eager
// send that the BTL copies at once (btl.TrySender) takes no Request: h is
// settled from the start (h.r nil; a send's Status is the zero one).
func (c *Comm) StartIsend(h *Handle, buf []byte, dest, tag int, sync bool) error {
	_, err := c.startIsend(h, buf, dest, tag, sync)
	return err
}

// NewIsend is StartIsend into a Handle of its own, which it returns: an
// eager send's from the slab of its destination (sendHandle), any other
// send's allocated alone.
func (c *Comm) NewIsend(buf []byte, dest, tag int, sync bool) (*Handle, error) {
	return c.startIsend(nil, buf, dest, tag, sync)
}

// startIsend is StartIsend; with h nil it takes a Handle as NewIsend says
// and returns it.
func (c *Comm) startIsend(h *Handle, buf []byte, dest, tag int, sync bool) (*Handle, error) {
	var plan sendPlan
	w, eager := c.eagerFirst(len(buf), dest, tag, sync)
	if !eager {
		var err error
		if plan, err = c.planSend(buf, dest, tag, sync); err != nil {
			return nil, err
		}
		w = c.WorldRank(dest) // not eager: eagerFirst takes every eager send that is not synchronous
	}
	dest = w
	var r *Request
	var err error
	if eager {
		pe := &c.p.peers[dest]
		nh, seq, sent, ok := c.eagerNow(pe, dest, tag, buf, h == nil)
		if ok {
			if h == nil {
				h = nh
			}
			h.send = true
			if !sent && pe.try != nil {
				mh := matchHdr{ctx: c.ctx, tag: int32(tag), seq: seq}
				if sent, err = pe.try.TrySend(dest, btl.TagPMLMatch, mh.matchWords(), buf); err != nil {
					return nil, err
				}
			}
			if sent {
				c.p.sentTo(dest)
				return h, nil
			}
			r = reqPool.Get().(*Request)
			if err = c.isendEager(r, buf, dest, tag, seq, false); err != nil {
				return nil, err // r may still be known to the PML: the GC takes it
			}
			h.adopt(r)
			return h, nil
		}
		plan = planSend(len(buf), &pe.lim, false, false, false) // out of credit
	}
	if h == nil {
		h = new(Handle)
	}
	r = reqPool.Get().(*Request)
	err = c.startSend(r, buf, dest, tag, sync, plan)
	if r.big {
		c.p.setRunning(false) // back to the caller (see startSend)
	}
	if err != nil {
		return nil, err // r may still be known to the PML: the GC takes it
	}
	h.send = true
	h.adopt(r)
	return h, nil
}

// StartIrecv posts a receive into h, a zero Handle.
func (c *Comm) StartIrecv(h *Handle, buf []byte, src, tag int) error {
	if !c.recvOK(src, tag) {
		return c.recvError(src, tag)
	}
	r, _, err := c.startRecvH(nil, buf, c.worldSrc(src), tag, h, false)
	if err != nil {
		return err
	}
	if r != nil {
		h.adopt(r)
	}
	return nil
}

// NewIrecv is StartIrecv into a Handle of its own, taken from the PML's
// slab (PML.hslab), which it returns.
func (c *Comm) NewIrecv(buf []byte, src, tag int) (*Handle, error) {
	if !c.recvOK(src, tag) {
		return nil, c.recvError(src, tag)
	}
	r, h, err := c.startRecvH(nil, buf, c.worldSrc(src), tag, nil, true)
	if err != nil {
		return nil, err
	}
	if r != nil {
		h.adopt(r)
	}
	return h, nil
}

// Slabs of Handles. Isend and Irecv return a Handle (a gorun.Request) that
// the program may keep and Wait on again, so none is ever recycled; each
// allocated alone (a 32-byte mallocgc, 34-39 ns with one P) was about a
// quarter of an osu bw sender's time at 8 B. They are taken instead from
// slabs of slabLen, one allocation each, under a lock the operation takes
// anyway and without a locked instruction of their own: a receive's from
// the PML's slab, under the mu its post takes (PML.hslab), an eager
// send's from its destination's, under the peer's send lock that numbers
// and sends it (peer.hslab, Comm.eagerNow). Each Handle of a slab goes to
// one operation. A Handle the program keeps keeps its slab (8 KiB) alive.
//
// Why 8 KiB: slabs of 32 (1 KiB) took one allocation per 32 operations,
// and an eager send's, one per communicator and destination and taken by
// its sequence number, also a CAS to publish it. A program that sends
// millions of messages a second spends most of its allocations on these,
// and fewer, larger ones of the same bytes, each under a lock already
// held, cost less per Handle (osu at np 2, 1-32 B, 8-10 interleaved
// rounds against Open MPI in the near placement: mr 0.93-0.96x ->
// 0.99-1.01x, bw 0.93-0.96x -> 0.99-1.01x, bibw 0.86-0.90x ->
// 0.92-0.99x).
const slabLen = 255 // 8,160 bytes and the 8-byte header Go puts before an object of more than 512 bytes that holds pointers: the 8 KiB size class (256 took 9.25 KiB)

// handleSlab hands out the Handles of a slab, a new one each slabLen,
// under its owner's lock.
type handleSlab struct {
	s    *[slabLen]Handle
	next int
}

// take is a zero Handle that nobody else has (the owner's lock held).
func (hs *handleSlab) take() *Handle {
	if hs.s == nil || hs.next == slabLen {
		hs.s, hs.next = new([slabLen]Handle), 0
	}
	h := &hs.s[hs.next]
	hs.next++ // an index, not a resliced slice: no pointer store (nor its write-barrier check) per Handle
	return h
}

// adopt makes r h's operation. A Request that completed inside the call
// that started it (an eager send the BTL copied at once, a receive that
// found its message waiting) is known to nobody else: its result moves
// into h and it goes back to the pool at once, unless the result is an
// error, which stays in r (hFailed).
func (h *Handle) adopt(r *Request) {
	if r.early || r.state.Load() == stDone {
		// h is not shared yet: its result goes into plain fields and h.r
		// stays nil, which says "settled" to every later reader without
		// an atomic store (an XCHG would wait for the FIFO slot just
		// written to leave the core, see Request.doneUnshared; it was 40%
		// of an Isend's time).
		h.setStatus(r.status)
		if r.err != nil {
			h.r = r
			h.word.Store(hSettled | hFailed) // rare: a truncated receive
			return
		}
		h.r = nil // startRecvH may have set it
		recycle(r)
		return
	}
	h.r = r
}

// settleDirect is the eager delivery of a posted receive settling its
// handle with st (the receive succeeded) in place of completing the
// Request (PML.mu held, called only by deliverEagerLocked for r.h == h).
// It reports false when a goroutine holds h (it waits, tests or cancels
// through the Request): then the delivery completes r as usual and that
// holder settles. On true, h is settled (the same word as settle leaves,
// with no holder) and nobody holds or will hold the Request: every later
// hold sees settled first and never touches h.r, which goes on pointing
// to the recycled Request (harmless: only a failed result, never settled
// here, reads it). So a receive that completes while nobody waits for it
// costs this one CAS instead of completion's, the waiter's two and the
// recycle's.
//
// The Status is stored before the CAS that publishes it; when the CAS
// fails, the holder that settles later writes the same values, after it
// saw the Request complete (which orders the two writes).
func (h *Handle) settleDirect(st Status) bool {
	h.setStatus(st)
	for {
		w := h.word.Load()
		if w&^hClaimed != 0 {
			return false
		}
		if h.word.CompareAndSwap(w, w|hSettled) {
			return true
		}
	}
}

// hold counts the caller as a holder. It returns the Request to use, or
// nil when the result is already in h (then the caller does not release).
func (h *Handle) hold() *Request {
	if h.r == nil || h.word.Load()&hSettled != 0 || h.word.Add(1)&hSettled != 0 {
		return nil
	}
	return h.r
}

// release ends a hold that did not settle; the last one once the result
// is settled recycles the Request.
func (h *Handle) release() {
	if h.word.Add(^uint32(0))&^hClaimed == hSettled {
		recycle(h.r)
	}
}

// settledWord is what settling adds to a word whose holder has claimed
// writing: settled (and failed with err), writing cleared, its count
// dropped.
func settledWord(err error) uint32 {
	if err != nil {
		return hSettled | hFailed - hWriting - 1
	}
	return hSettled - hWriting - 1
}

// settle ends a hold on the completed r: it moves r's result into h (once)
// and returns it; the last holder recycles r.
func (h *Handle) settle(r *Request) (Status, error) {
	st, err := r.status, r.err // final, and r is ours until we drop our count
	for {
		w := h.word.Load()
		if w&(hSettled|hWriting) != 0 {
			h.release() // another holder settles (or did)
			return st, err
		}
		if h.word.CompareAndSwap(w, w|hWriting) {
			break
		}
	}
	h.setStatus(st)
	if h.word.Add(settledWord(err))&^hClaimed == hSettled {
		recycle(r)
	}
	return st, err
}

// result reads the settled result. Reading it without a lock is safe: it
// was written before the settled flag, which the caller has seen (or by
// the start, before h was shared). A failed result's error is in h.r,
// which is never recycled.
func (h *Handle) result() (Status, error) {
	st := h.status()
	if h.r != nil && h.word.Load()&hFailed != 0 {
		return st, h.r.err
	}
	return st, nil
}

// Settled returns h's result when it is settled without an error, the
// common case of a Wait on a request that has completed, in few enough
// steps to inline into the caller (no locked instruction, no call).
func (h *Handle) Settled() (Status, bool) {
	if h.r == nil || h.word.Load()&(hSettled|hFailed) == hSettled {
		return h.status(), true
	}
	return Status{}, false
}

// status is the Status stored in h (setStatus's inverse).
func (h *Handle) status() Status {
	return Status{Source: int(h.src), Tag: int(h.tag), Count: int(h.count)}
}

// Wait blocks until the operation completes or ctx ends (ctx may be nil);
// on ctx's end the request stays valid.
func (h *Handle) Wait(ctx context.Context) (Status, error) {
	if w := h.word.Load(); w&hSettled != 0 {
		return h.result() // settled by its delivery or an earlier Wait: no locked instruction
	} else if h.r != nil && w == 0 && h.word.CompareAndSwap(0, hWriting+1) {
		return h.waitSole(ctx)
	}
	r := h.hold()
	if r == nil {
		return h.result()
	}
	if err := r.p.Wait(ctx, r); err != nil {
		h.release()
		return Status{}, err
	}
	return h.settle(r)
}

// waitSole is Wait for the common case, a goroutine that found h with no
// holder and unsettled: its CAS both held h and claimed writing, so it
// settles with one more atomic add (two locked instructions per Wait
// instead of hold, claim and settle's three). Holding writing while it
// waits is harmless: another holder looks at writing only once the
// Request is complete, and then reads the result from the Request it
// holds (settle), never from h.
func (h *Handle) waitSole(ctx context.Context) (Status, error) {
	r := h.r
	if err := r.p.Wait(ctx, r); err != nil {
		h.word.Add(^uint32(hWriting)) // -(hWriting+1): not settled: a later Wait or Test settles
		return Status{}, err
	}
	st, err := r.status, r.err
	h.setStatus(st)
	if h.word.Add(settledWord(err))&^hClaimed == hSettled {
		recycle(r)
	}
	return st, err
}

// Test drives progress once and reports whether the operation completed.
func (h *Handle) Test() (Status, bool, error) {
	r := h.hold()
	if r == nil {
		st, err := h.result()
		return st, true, err
	}
	if !r.Done() {
		p := r.p
		p.Progress()
		if !r.Done() {
			closed := p.closed.Load()
			h.release()
			if closed {
				// Nothing can complete it any more: a loop of Tests
				// must end, with the error a Wait would return.
				return Status{}, true, errClosed
			}
			return Status{}, false, nil
		}
	}
	st, err := h.settle(r)
	return st, true, err
}

// Cancel cancels a receive that has not matched yet (see Request.Cancel).
func (h *Handle) Cancel() error {
	if h.send {
		return errCancelSend
	}
	r := h.hold()
	if r == nil {
		return nil
	}
	err := r.Cancel()
	h.release()
	return err
}

// Done reports whether the operation has completed.
func (h *Handle) Done() bool {
	r := h.hold()
	if r == nil {
		return true
	}
	d := r.Done()
	h.release()
	return d
}

// PML returns the engine h's operation runs in while it is pending, or
// nil once its result is settled in h (then nothing needs the engine).
func (h *Handle) PML() *PML {
	r := h.hold()
	if r == nil {
		return nil
	}
	p := r.p
	h.release()
	return p
}
