package pml

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Handle is a user's reference to a nonblocking operation: what
// gorun.Isend and gorun.Irecv hand out. It is small (the user may keep it
// forever, so every Isend and Irecv allocates one) and the operation's
// Request, which is not, comes from a pool and goes back to it once the
// operation has completed and no goroutine can reach it any more.
//
// Protocol (word = the settled and writing flags + a count of holders; the
// claimed flag, Claim's, is independent of it). A
// Handle whose operation completed inside its start has h.r == nil and its
// result in st and err from the start: it needs none of this. Otherwise:
//   - a goroutine that wants the Request (hold) increments the count, then
//     looks at the flags: unsettled, it is a holder and may use h.r until
//     it drops its count; settled, it uses st and err and never touches
//     h.r, nor drops the count it added (a late hold, harmless: it only
//     keeps the Request from being recycled, so the GC takes it);
//   - a holder that finds the Request complete settles: it claims writing
//     with a CAS, copies the result into st and err, then in one atomic add
//     sets settled, clears writing and drops its own count; a holder that
//     finds writing or settled already set reads the result from the
//     Request it still holds and just drops its count;
//   - the drop that leaves the word at exactly settled (no holder, nobody
//     writing) recycles the Request. It happens at most once: at that
//     point every counted holder has dropped, and later holds are all
//     late ones, which never drop.
//
// A Wait on a pending operation so costs three atomic operations on the
// word (hold, claim, settle) and none on a mutex.
type Handle struct {
	p    *PML
	r    *Request // the operation; immutable once the handle is handed out
	word atomic.Uint32
	send bool
	st   Status
	err  error
}

const (
	hSettled = 1 << 31 // the result is in st and err
	hWriting = 1 << 30 // a holder is copying the result into st and err
	// hClaimed is Claim's flag; the bits below it count holders. It shares
	// the word so that a gorun.Request (a Handle) fits 64 bytes, the size
	// class below 80: one is allocated per Isend and Irecv.
	hClaimed = 1 << 29
)

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
// to the pool.
func recycle(r *Request) {
	if reset(r) {
		reqPool.Put(r)
	}
}

// reset zeroes a completed Request that no goroutine can reach any more,
// for reuse. One whose completion may still be touching it (finish waking
// a waiter, stWoken not yet set) is not reset and goes to the GC instead:
// reset reports false. A Request that had a waiter is reused once finish
// is done with it, so a Recv that blocks allocates no Request.
func reset(r *Request) bool {
	if !r.early {
		if s := r.state.Load(); s != stDone && s != stDone|stWaiter|stWoken {
			return false
		}
	}
	*r = Request{}
	return true
}

// StartIsend starts a send of buf to dest into h, a zero Handle.
func (c *Comm) StartIsend(h *Handle, buf []byte, dest, tag int, sync bool) error {
	r := reqPool.Get().(*Request)
	if err := c.Isend(r, buf, dest, tag, sync); err != nil {
		return err // r may still be known to the PML: the GC takes it
	}
	h.p, h.send = c.p, true
	h.adopt(r)
	return nil
}

// StartIrecv posts a receive into h, a zero Handle.
func (c *Comm) StartIrecv(h *Handle, buf []byte, src, tag int) error {
	r := reqPool.Get().(*Request)
	if err := c.Irecv(r, buf, src, tag); err != nil {
		return err
	}
	h.p = c.p
	h.adopt(r)
	return nil
}

// adopt makes r h's operation. A Request that completed inside the call
// that started it (an eager send the BTL copied at once, a receive that
// found its message waiting) is known to nobody else: its result moves
// into h and it goes back to the pool at once.
func (h *Handle) adopt(r *Request) {
	if r.early || r.state.Load() == stDone {
		// h is not shared yet: its result goes into plain fields and h.r
		// stays nil, which says "settled" to every later reader without
		// an atomic store (an XCHG would wait for the FIFO slot just
		// written to leave the core, see Request.doneUnshared; it was 40%
		// of an Isend's time).
		h.st, h.err = r.status, r.err
		recycle(r)
		return
	}
	h.r = r
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
	h.st, h.err = st, err
	if h.word.Add(hSettled-hWriting-1)&^hClaimed == hSettled {
		recycle(r)
	}
	return st, err
}

// result reads the settled result. Reading it without a lock is safe: it
// was written before the settled flag, which the caller has seen.
func (h *Handle) result() (Status, error) { return h.st, h.err }

// Wait blocks until the operation completes or ctx ends (ctx may be nil);
// on ctx's end the request stays valid.
func (h *Handle) Wait(ctx context.Context) (Status, error) {
	if h.r != nil && h.word.CompareAndSwap(0, hWriting+1) {
		return h.waitSole(ctx)
	}
	r := h.hold()
	if r == nil {
		return h.result()
	}
	if err := h.p.Wait(ctx, r); err != nil {
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
	if err := h.p.Wait(ctx, r); err != nil {
		h.word.Add(^uint32(hWriting)) // -(hWriting+1): not settled: a later Wait or Test settles
		return Status{}, err
	}
	st, err := r.status, r.err
	h.st, h.err = st, err
	if h.word.Add(hSettled-hWriting-1)&^hClaimed == hSettled {
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
		h.p.Progress()
		if !r.Done() {
			closed := h.p.closed.Load()
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

// PML returns the engine h belongs to.
func (h *Handle) PML() *PML { return h.p }
