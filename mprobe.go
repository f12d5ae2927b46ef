package gorun

import (
	"fmt"

	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml"
)

// Message is a message found by a matched probe (Mprobe, Improbe). It has
// been removed from matching: no receive or probe sees it any more, and
// only its Recv or Irecv receives it, once. So a probe followed by a
// receive of what it found is safe with several receiving goroutines,
// which Probe-then-Recv is not (another goroutine's Recv may take the
// message in between).
type Message struct {
	m *pml.Message
}

// Mprobe waits for a message matching (source, tag), removes it from
// matching and returns it, with its Status (Count: its full length).
func (c *Comm) Mprobe(source, tag int) (*Message, Status, error) {
	m, st, err := c.pc().Mprobe(source, tag)
	if err != nil {
		return nil, Status{}, fatalCheck(err)
	}
	return &Message{m: m}, status(st), nil
}

// Improbe is Mprobe that does not wait: ok is false (and the Message nil)
// when no message matches yet.
func (c *Comm) Improbe(source, tag int) (*Message, Status, bool, error) {
	m, st, ok, err := c.pc().Improbe(source, tag)
	if err != nil || !ok {
		return nil, Status{}, false, fatalCheck(err)
	}
	return &Message{m: m}, status(st), true, nil
}

// errNilMessage is the answer for a nil *Message.
var errNilMessage = fmt.Errorf("gorun: nil *Message (Improbe returns nil when ok is false): %w", errs.ErrInvalidArg)

// Recv receives m into buf, as Recv would have. A Message is received
// once: a second Recv or Irecv returns ErrInvalidArg.
func (m *Message) Recv(buf []byte) (Status, error) {
	if m == nil {
		return Status{}, fatalCheck(errNilMessage)
	}
	st, err := m.m.Recv(buf)
	return status(st), fatalCheck(err)
}

// Irecv starts receiving m into buf, as Irecv would have. The caller must
// not touch buf until the request completes. A Message is received once:
// a second Recv or Irecv returns a nil Request and ErrInvalidArg.
func (m *Message) Irecv(buf []byte) (*Request, error) {
	if m == nil {
		return nil, fatalCheck(errNilMessage)
	}
	r := new(Request)
	if err := m.m.StartRecv(&r.h, buf); err != nil {
		return nil, fatalCheck(err)
	}
	return r, nil
}
