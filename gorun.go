// Package gorun is the user API of the gorun message-passing runtime:
// MPI-style point-to-point messaging between the ranks of a job started by
// the gorun launcher (`gorun -np N ./prog`), over shared memory.
//
// A Comm and its Requests are safe for concurrent use by many goroutines.
// The rules of matching, ordering, progress and errors are those of MPI's
// point-to-point chapter; see CONTRACT.md in the project for the exact ones.
package gorun

import (
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
}

// Rank is this process's rank in c.
func (c *Comm) Rank() int { return c.c.Rank() }

// Size is the number of ranks in c.
func (c *Comm) Size() int { return c.c.Size() }

// Dup returns a new communicator over the same ranks with its own matching
// context. It is collective: every rank of c must call it.
func (c *Comm) Dup() (*Comm, error) {
	d, err := c.c.Dup()
	if err != nil {
		return nil, fatalCheck(err)
	}
	return &Comm{c: d}, nil
}

// Barrier returns once every rank of c has called it.
func (c *Comm) Barrier() error { return fatalCheck(c.c.Barrier()) }
