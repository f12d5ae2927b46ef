package gorun

import (
	"context"
	"errors"
	"unsafe"

	"github.com/gorun-mpi/gorun/pml"
)

// Send sends buf to rank dest with tag; it returns once buf may be reused.
// Messages up to the eager limit complete without the receiver; larger ones
// wait for it (rendezvous). buf may be nil or empty.
func (c *Comm) Send(buf []byte, dest, tag int) error {
	return fatalCheck(c.pc().Send(buf, dest, tag, false))
}

// Ssend is Send that returns only after the receiver has matched the message.
func (c *Comm) Ssend(buf []byte, dest, tag int) error {
	return fatalCheck(c.pc().Send(buf, dest, tag, true))
}

// Recv receives a message from source (or AnySource) with tag (or AnyTag)
// into buf. A longer message fills buf and returns ErrTruncate.
func (c *Comm) Recv(buf []byte, source, tag int) (Status, error) {
	st, err := c.pc().Recv(buf, source, tag)
	return status(st), fatalCheck(err)
}

// Sendrecv sends and receives at once, so that pairs of ranks can exchange
// without deadlock. If either half's arguments are bad, nothing is done.
func (c *Comm) Sendrecv(sendBuf []byte, dest, sendTag int, recvBuf []byte, source, recvTag int) (Status, error) {
	if err := c.pc().CheckSend(dest, sendTag); err != nil {
		return Status{}, fatalCheck(err)
	}
	if err := c.pc().CheckRecv(source, recvTag); err != nil {
		return Status{}, fatalCheck(err)
	}
	st, err := c.pc().Sendrecv(sendBuf, dest, sendTag, recvBuf, source, recvTag)
	return status(st), fatalCheck(err)
}

// Probe waits for a message matching (source, tag) and describes it
// without receiving it; Count is the message's full length.
func (c *Comm) Probe(source, tag int) (Status, error) {
	st, err := c.pc().Probe(source, tag)
	return status(st), fatalCheck(err)
}

// Iprobe is Probe that does not wait: ok is false when no message matches yet.
func (c *Comm) Iprobe(source, tag int) (Status, bool, error) {
	st, ok, err := c.pc().Iprobe(source, tag)
	return status(st), ok, fatalCheck(err)
}

// Request is a nonblocking operation. Its result is final: Wait and Test on
// a completed request return the same Status and error again.
type Request struct {
	// h.Claimed: WaitAny returned this request's index. Claimed with an
	// atomic, so once however many goroutines call WaitAny over it. (In
	// the handle's word: a Request is 32 bytes.)
	//
	// h is the only field: Isend and Irecv return the PML's Handle as the
	// Request (asRequest), taken from the PML's slabs, not one allocation
	// each (see pml.NewIsend).
	h pml.Handle
}

// A Request and a pml.Handle have one layout.
var _ [unsafe.Sizeof(Request{}) - unsafe.Sizeof(pml.Handle{})]byte
var _ [unsafe.Sizeof(pml.Handle{}) - unsafe.Sizeof(Request{})]byte

// asRequest is h as the Request whose only field it is.
func asRequest(h *pml.Handle) *Request { return (*Request)(unsafe.Pointer(h)) }

// Isend starts a send. The caller must not touch buf until it completes.
func (c *Comm) Isend(buf []byte, dest, tag int) (*Request, error) {
	h, err := c.pc().NewIsend(buf, dest, tag, false)
	if err != nil {
		return nil, fatalCheck(err)
	}
	return asRequest(h), nil
}

// Issend starts a synchronous send: it completes once the receiver matched.
func (c *Comm) Issend(buf []byte, dest, tag int) (*Request, error) {
	h, err := c.pc().NewIsend(buf, dest, tag, true)
	if err != nil {
		return nil, fatalCheck(err)
	}
	return asRequest(h), nil
}

// Irecv starts a receive. The caller must not touch buf until it completes.
func (c *Comm) Irecv(buf []byte, source, tag int) (*Request, error) {
	h, err := c.pc().NewIrecv(buf, source, tag)
	if err != nil {
		return nil, fatalCheck(err)
	}
	return asRequest(h), nil
}

// Wait blocks until r completes.
func (r *Request) Wait() (Status, error) {
	if st, ok := r.h.Settled(); ok {
		return status(st), nil // completed: no call into the PML's Wait
	}
	st, err := r.h.Wait(nil)
	return status(st), fatalCheck(err)
}

// WaitContext is Wait that gives up when ctx ends, returning ctx.Err(); the
// request stays valid. A completed request returns its result even if ctx
// is already done.
func (r *Request) WaitContext(ctx context.Context) (Status, error) {
	st, err := r.h.Wait(ctx)
	return status(st), fatalCheck(err)
}

// Test drives progress once and reports whether r has completed.
func (r *Request) Test() (Status, bool, error) {
	st, ok, err := r.h.Test()
	return status(st), ok, fatalCheck(err)
}

// Cancel cancels a receive that has not matched: it then completes with
// ErrCanceled and its buffer is untouched. On a completed (or matching)
// receive it does nothing. On a send request it returns an error.
func (r *Request) Cancel() error { return fatalCheck(r.h.Cancel()) }

// WaitAll waits for every request (nil entries are ignored), fills every
// Status, and returns the errors of all that failed, joined.
func WaitAll(reqs ...*Request) ([]Status, error) {
	sts := make([]Status, len(reqs))
	var errsAll []error
	for i, r := range reqs {
		if r == nil {
			continue
		}
		st, err := r.Wait()
		sts[i] = st
		if err != nil {
			errsAll = append(errsAll, err)
		}
	}
	return sts, fatalCheck(errors.Join(errsAll...))
}

// WaitAny waits until one of reqs completes and returns its index, Status
// and error. Each completed request is returned once, also to several
// goroutines calling WaitAny over the same requests: a completed request
// is claimed with a CAS, and a call that finds every request claimed
// (before or while it waits) returns -1, a zero Status and nil. After
// Finalize, with requests still pending, it returns -1 and ErrFinalized.
func WaitAny(reqs ...*Request) (int, Status, error) {
	idx := -1
	claim := func() bool {
		left := false
		for i, r := range reqs {
			switch {
			case r == nil || r.h.Claimed():
			case !r.h.Done():
				left = true
			case r.h.Claim():
				idx = i
				return true
			}
		}
		return !left // every request claimed, some by other goroutines
	}
	// The engine to wait in is a pending request's; when none is pending
	// (every one complete or claimed) there is nothing to wait for.
	var p *pml.PML
	for _, r := range reqs {
		if r != nil && !r.h.Claimed() {
			if p = r.h.PML(); p != nil {
				break
			}
		}
	}
	var err error
	if p == nil {
		claim()
	} else {
		err = p.WaitFor(claim)
	}
	if idx < 0 {
		return -1, Status{}, fatalCheck(err)
	}
	st, err := reqs[idx].h.Wait(nil) // done: returns at once
	return idx, status(st), fatalCheck(err)
}

// SendSlice sends the memory of s (native byte order) like Send.
func SendSlice[T Scalar](c *Comm, s []T, dest, tag int) error {
	return c.Send(asBytes(s), dest, tag)
}

// RecvSlice receives into the memory of s like Recv; Status.Count is in bytes.
func RecvSlice[T Scalar](c *Comm, s []T, source, tag int) (Status, error) {
	return c.Recv(asBytes(s), source, tag)
}

// Scalar is any fixed-size number type. int, uint and uintptr are this
// machine's sizes: ranks of one job run the same build, so they agree.
type Scalar interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~uintptr | ~float32 | ~float64 | ~complex64 | ~complex128
}

func asBytes[T Scalar](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}
