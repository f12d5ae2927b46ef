package pml

import (
	"fmt"
	"sync/atomic"

	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml/match"
)

// Message is a message taken out of matching by a matched probe (MPI's
// Mprobe): no receive or probe can see it any more, and only StartRecv or
// Recv on the Message delivers it, once. Until then it stays where the
// unexpected message was: an eager payload in its unexpected record (and in
// the unexpected-memory count), a rendezvous as its header, the sender
// waiting for the ACK that the delivery sends.
type Message struct {
	p   *PML
	grp *group // the probing communicator's (Status.Source translation)
	st  Status
	// msg is the engine's record, nil once a receive took it (Swap makes
	// that happen once however many goroutines try).
	msg atomic.Pointer[match.Msg]
}

// Improbe is a matched Iprobe: it takes the message that a receive (src,
// tag) would match now out of matching and returns it, or ok=false.
func (c *Comm) Improbe(src, tag int) (*Message, Status, bool, error) {
	if err := c.checkRecv(src, tag); err != nil {
		return nil, Status{}, false, err
	}
	c.p.Progress()
	return c.mprobe(c.worldSrc(src), tag)
}

// Mprobe waits for a message matching (src, tag) and takes it out of
// matching, like Improbe.
func (c *Comm) Mprobe(src, tag int) (*Message, Status, error) {
	if err := c.checkRecv(src, tag); err != nil {
		return nil, Status{}, err
	}
	var msg *Message
	var st Status
	var err error
	wsrc := c.worldSrc(src)
	c.p.waitFrom(wsrc, func() bool {
		var ok bool
		msg, st, ok, err = c.mprobe(wsrc, tag)
		return ok || err != nil || c.p.closed.Load()
	})
	if msg == nil && err == nil {
		err = errClosed
	}
	return msg, st, err
}

// mprobe takes a message from world rank src (or AnySource).
func (c *Comm) mprobe(src, tag int) (*Message, Status, bool, error) {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.eng.Mprobe(c.ctx, src, tag)
	if !ok {
		if src >= 0 && p.peers[src].lost.Load() {
			return nil, Status{}, false, peerLost(src)
		}
		if src == match.AnySource && p.othersLost(p.nlost.Load()) {
			return nil, Status{}, false, errAllLost
		}
		return nil, Status{}, false, nil
	}
	u := m.Data.(*unexp)
	n := len(u.payload)
	if u.rndv {
		n = int(u.h.size)
	}
	msg := &Message{p: p, grp: c.grp, st: Status{Source: c.LocalRank(m.Src), Tag: m.Tag, Count: n}}
	msg.msg.Store(m)
	return msg, msg.st, true, nil
}

// errReceived is the answer for a Message received before.
var errReceived = fmt.Errorf("gorun: the probed message was already received (a Message is received once): %w", errs.ErrInvalidArg)

// startRecv delivers the message into r, a zero Request (as for Irecv).
// A rendezvous message from a rank that is gone completes r with
// ErrPeerLost: the rest of its bytes cannot come.
func (m *Message) startRecv(r *Request, buf []byte) error {
	p := m.p
	if p.closed.Load() {
		return errClosed
	}
	msg := m.msg.Swap(nil)
	if msg == nil {
		return errReceived
	}
	r.p, r.kind, r.buf, r.userTag, r.grp = p, kindRecv, buf, msg.Tag, m.grp
	// Never posted: Cancel finds nothing to cancel, as for a matched receive.
	r.recv = match.Recv{Ctx: msg.Ctx, Src: msg.Src, Tag: msg.Tag, Data: r}
	p.mu.Lock()
	if u := msg.Data.(*unexp); u.rndv && p.peers[msg.Src].lost.Load() {
		p.freeMsgLocked(msg)
		p.mu.Unlock()
		r.finish(Status{}, peerLost(r.recv.Src))
		return nil
	}
	j := p.deliverUnexpLocked(r, msg)
	p.freeMsgLocked(msg)
	p.mu.Unlock()
	if j.r != nil {
		p.runRndv(&j) // a rendezvous's bulk runs without mu
	}
	return nil
}

// StartRecv receives the message into h, a zero Handle: an eager message
// completes at once, a rendezvous one when its bytes are in. A second
// receive of the same Message returns an error wrapping ErrInvalidArg.
func (m *Message) StartRecv(h *Handle, buf []byte) error {
	r := reqPool.Get().(*Request)
	if err := m.startRecv(r, buf); err != nil {
		reqPool.Put(r) // untouched: nobody else has seen it
		return err
	}
	h.adopt(r)
	return nil
}

// Recv receives the message into buf and waits for it (see StartRecv).
func (m *Message) Recv(buf []byte) (Status, error) {
	p := m.p
	r := p.getReq()
	if err := m.startRecv(r, buf); err != nil {
		p.putReq(r)
		return Status{}, err
	}
	var st Status
	err := p.Wait(nil, r)
	if err == nil {
		st, err = r.status, r.err
	}
	p.putReq(r)
	return st, err
}
