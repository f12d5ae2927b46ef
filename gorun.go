// Package gorun is the user API of the gorun message-passing runtime:
// MPI-style point-to-point messaging, collectives (Bcast, Allreduce and the
// rest, blocking and nonblocking; coll.go) and communicators (Dup, Split,
// SplitShared, Free) for the ranks of a job started by the gorun launcher
// (`gorun -np N ./prog`), over shared memory (and TCP across machines).
//
// # Life of a rank
//
// Init joins the job and returns the world communicator; without gorun it
// returns a world of one rank. A second Init returns the same *Comm.
// Finalize synchronizes every rank of the world, lets outstanding sends
// complete, cancels receives still pending, and detaches; afterwards every
// call returns ErrFinalized, Init included. Finalize may be called more
// than once. Abort(code) ends the whole job: gorun exits with code when it
// is 1..255, with 1 otherwise (outside gorun the process exits by the same
// rule).
//
// # Matching and order
//
// A message is matched by communicator, source and tag; AnySource and
// AnyTag are wildcards for receives and probes. A message that arrives
// before its receive is posted waits in an unexpected queue. Two messages
// from one sender to one receiver on one communicator that could both match
// a receive are received in the order they were sent, whatever their sizes
// and protocols. Dup gives a communicator whose messages never match those
// of any other communicator.
//
// # Completion
//
// Send returns as soon as buf may be reused: messages up to the BTL's eager
// limit (payload bytes, headers do not count) complete without the
// receiver; larger ones wait for it (rendezvous). Ssend returns only once
// the receiver has matched. A nonblocking call returns a *Request; the
// caller must not touch its buffer until the request completes. A request's
// result is final: Wait and Test return the same Status and error every
// time. Every blocking call, Wait and Test drive the progress of every
// pending operation of the rank, so a loop of Test calls completes what can
// complete.
//
// # Errors
//
// Errors are matched with errors.Is against the Err variables. A call with
// an invalid argument (rank, tag, after Finalize) fails by itself, sends and
// posts nothing, and a nonblocking call then returns a nil *Request. A
// message longer than the receive buffer fills the buffer and returns
// ErrTruncate, naming both lengths. An operation that needs a peer whose
// process has ended returns ErrPeerLost instead of waiting forever. A
// cancelled receive returns ErrCanceled and leaves its buffer untouched.
//
// # Concurrency
//
// A Comm and its Requests are safe for concurrent use by many goroutines.
// The ordering rule applies to the sends one goroutine makes one after
// another; messages sent at the same time by different goroutines have no
// order between them (as with threads in MPI).
package gorun

import (
	"sync/atomic"

	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml"
)

// Wildcards and limits.
const (
	AnySource = -1
	AnyTag    = -1
	MaxTag    = 1<<30 - 1 // valid send tags are 0..MaxTag
)

// Errors, matched with errors.Is.
var (
	// ErrTruncate: the message is longer than the receive buffer; the buffer
	// holds its first len(buf) bytes.
	ErrTruncate = errs.ErrTruncate
	// ErrInvalidRank: a rank outside 0..Size()-1 (AnySource only for receives).
	ErrInvalidRank = errs.ErrInvalidRank
	// ErrInvalidTag: a send tag outside 0..MaxTag, or a receive tag < AnyTag or > MaxTag.
	ErrInvalidTag = errs.ErrInvalidTag
	// ErrFinalized: the call came after Finalize.
	ErrFinalized = errs.ErrFinalized
	// ErrCanceled: the receive was cancelled.
	ErrCanceled = errs.ErrCanceled
	// ErrPeerLost: the peer process is gone.
	ErrPeerLost = errs.ErrPeerLost
	// ErrInvalidArg: an argument that does not fit the call's rules (for
	// example a Message received a second time).
	ErrInvalidArg = errs.ErrInvalidArg
	// ErrInvalidComm: a nil or freed communicator (and Free of the world).
	ErrInvalidComm = errs.ErrInvalidComm
)

// Status describes a received (or probed) message.
type Status struct {
	Source int // rank of the sender, in the receiving communicator
	Tag    int
	Count  int // bytes actually received (or, for a probe, bytes pending)
}

func status(s pml.Status) Status { return Status{Source: s.Source, Tag: s.Tag, Count: s.Count} }

// Comm is a communicator: a group of ranks (all of the job's) and a
// matching context of its own.
type Comm struct {
	c *pml.Comm
	// collSeq numbers the collectives started on c: each gets its own tag
	// on the hidden context (every rank starts them in the same order).
	collSeq atomic.Uint32
	shm     commShm // coll/sm's state on c (coll_shm.go)
}

// Rank is this process's rank in c.
func (c *Comm) Rank() int { return c.c.Rank() }

// Size is the number of ranks in c.
func (c *Comm) Size() int { return c.c.Size() }

// Dup returns a new communicator over the same ranks with its own matching
// context. It is collective: every rank of c must call it.
func (c *Comm) Dup() (*Comm, error) {
	if c == nil {
		return nil, fatalCheck(errNilComm)
	}
	d, err := c.c.Dup()
	if err != nil {
		return nil, fatalCheck(err)
	}
	return &Comm{c: d}, nil
}
