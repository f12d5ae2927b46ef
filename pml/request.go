package pml

import (
	"sync"
	"sync/atomic"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/pml/match"
)

// Status describes a completed receive or a probed message.
type Status struct {
	Source, Tag, Count int
}

const (
	kindSend = 1 + iota
	kindRecv
	kindExternal // completed by its owner (a collective's schedule): Complete
)

// Request is one point-to-point operation. A Request is completed exactly
// once (finish); its Status and error are final after that.
//
// A send request counts the events still owed to it in pending: one token
// held by the code starting or advancing it, one per payload copy the BTL
// owes (copied=false), one for an awaited ACK or FIN. The last release
// completes it. This makes completion independent of which goroutine's
// Progress delivers which event.
type Request struct {
	p    *PML
	kind uint8
	// state: stDone is set by finish after status and err; stWaiter by a
	// goroutine about to block on waitCh. finish touches nothing of r after
	// setting stDone unless stWaiter was set; then it wakes the waiter and
	// sets stWoken, after which it touches nothing either. So a request
	// may be recycled once it shows stDone alone or all three (reset).
	state atomic.Uint32
	// finished guards finish against a second completion (peer loss racing
	// a normal completion).
	finished atomic.Bool
	// early: completed inside the call that started it, before any other
	// goroutine could see r (doneUnshared); then state and finished stay
	// zero. Written only then, so a plain field.
	early  bool
	status Status
	err    error

	wmu    sync.Mutex // guards waitCh
	waitCh chan struct{}

	buf  []byte
	peer int // send: destination; recv (after match): source
	id   uint64

	// send side
	hdr     [btl.MaxHeader]byte // header scratch (a local array would escape); a receive uses it for its ACK or FIN
	pending atomic.Int32
	chunk   int   // bytes sent with the RNDV header
	fast    bool  // eager Isend: SendDone completes it directly (no tokens)
	sync    bool  // Ssend
	tracked bool  // in its peer's sendTable
	big     bool  // counted in PML.bigSends until it finishes (a read its receiver may split)
	carried bool  // a serial send (Config.SerialCarryMax) that carries its payload rather than offering it
	split   bool  // a serial send (Config.SerialSplit) that asks for its read to be split
	wrote   bool  // its receiver did split the read: we wrote our part (onSplitAck)
	st0     int64 // a timed serial send's start on its choice's clock, PML.serial's or serialSplit's (0: not timed)

	// receive side
	recv     match.Recv // Data points back to the request
	want     int        // bytes this receive takes (≤ len(buf))
	received int        // bytes copied so far (rendezvous)
	size     int        // full message length
	tag      int
	userTag  int      // as posted, for errors
	rg       rgetMark // timing of an adaptive rendezvous (rget.go)
	grp      *group   // the receiving communicator's group (nil: the world's ranks)
	// h is the Handle of a receive posted by StartIrecv, set under PML.mu
	// as it is posted: its eager delivery settles h directly when no
	// goroutine holds h (Handle.settleDirect), and recycles r at once.
	h *Handle
}

// source translates the world rank of a matched sender into the receiving
// communicator's rank.
func (r *Request) source(world int) int {
	if r.grp == nil {
		return world
	}
	return int(r.grp.local[world])
}

const (
	stDone = 1 << iota
	stWaiter
	stWoken // finish has woken the waiter and is done with r
)

// Done reports whether the request has completed.
func (r *Request) Done() bool { return r.early || r.state.Load()&stDone != 0 }

// finish completes r once with st and err and wakes its waiter. It may run
// with PML.mu held or not, from any goroutine.
func (r *Request) finish(st Status, err error) bool {
	if !r.finished.CompareAndSwap(false, true) {
		return false
	}
	r.complete(st, err)
	return true
}

// complete is finish for a request that nothing else can complete: a
// receive the matching engine has just handed out (deliverLocked), which
// is in no queue or table any more, so the claim on finished that guards
// against a second completion is not needed (one locked instruction less
// per message).
func (r *Request) complete(st Status, err error) {
	r.status, r.err = st, err
	if r.kind == kindSend {
		if r.st0 != 0 && err == nil {
			r.p.serialDone(r)
		}
		r.p.activeSends.Add(-1)
	}
	if r.state.Or(stDone)&stWaiter != 0 {
		r.wmu.Lock()
		if r.waitCh != nil {
			close(r.waitCh)
			r.waitCh = nil
		}
		r.wmu.Unlock()
		r.state.Or(stWoken) // the last touch of r
	}
}

// doneUnshared completes r, with a zero Status and no error, while no other
// goroutine can see it (a send that finished inside the call that started
// it): a plain field, read by Done, and no atomic store. An atomic store is
// an XCHG, which on amd64 waits until every earlier store has left the
// core, here the FIFO slot just written to a line that lives in the
// receiver's cache (about 300 ns per Isend). Whoever receives r later does
// so through a synchronizing hand-off, which orders the plain store before
// its reads.
func (r *Request) doneUnshared() { r.early = true }

// release drops one pending token of a send request; the last one completes it.
func (r *Request) release() {
	if r.pending.Add(-1) == 0 {
		r.p.finishSend(r, nil)
	}
}

// SendDone implements btl.Completion: a payload copy the BTL owed is done.
func (r *Request) SendDone(err error) {
	if r.fast {
		r.p.finishSend(r, err) // not tracked: takes no lock
		return
	}
	if err != nil {
		r.p.endDelivery() // called from a BTL's poll; finishSend may take mu
		r.p.finishSend(r, err)
		return
	}
	r.release()
}

// waitChan returns a channel closed when r completes (nil if it already has).
func (r *Request) waitChan() chan struct{} {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if r.state.Or(stWaiter)&stDone != 0 {
		return nil
	}
	if r.waitCh == nil {
		r.waitCh = make(chan struct{})
	}
	return r.waitCh
}

// awaited is the rank a wait on r waits for, or -1 (any, or a send).
func (r *Request) awaited() int {
	if r.kind == kindRecv && r.recv.Src >= 0 {
		return r.recv.Src
	}
	return -1
}

// polledFrom is the world rank whose messages complete r (a receive's
// source; the destination of a send, whose answer, ACK or FIN, comes from
// it), or -1 (a receive from any source). Its wait polls for them alone
// between full passes (pollFor).
func (r *Request) polledFrom() int {
	switch {
	case r.kind == kindSend:
		return r.peer
	case r.kind == kindRecv && r.recv.Src >= 0:
		return r.recv.Src
	}
	return -1
}
