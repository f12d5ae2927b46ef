package gorun

import (
	"fmt"

	"github.com/gorun-mpi/gorun/pml"
)

// errNilComm is what calls on a nil *Comm return.
var errNilComm = fmt.Errorf("gorun: nil communicator: %w", ErrInvalidComm)

// pc is c's PML communicator, nil for a nil c: every pml.Comm call that
// checks its arguments answers a nil receiver with ErrInvalidComm.
func (c *Comm) pc() *pml.Comm {
	if c == nil {
		return nil
	}
	return c.c
}

// Split partitions c by color: ranks passing the same color form a new
// communicator, ordered by key, then by rank in c. Ranks passing Undefined
// get a nil *Comm and a nil error. It is collective over c.
func (c *Comm) Split(color, key int) (*Comm, error) {
	if c == nil {
		return nil, fatalCheck(errNilComm)
	}
	if color < 0 && color != Undefined {
		return nil, fatalCheck(fmt.Errorf("gorun: Split color %d; want >= 0 or Undefined: %w", color, ErrInvalidArg))
	}
	s, err := c.c.Split(color, key)
	if err != nil || s == nil {
		return nil, fatalCheck(err)
	}
	return &Comm{c: s}, nil
}

// SplitShared groups the ranks of c that share a machine (and so shared
// memory), ordered by key, then by rank in c. It is collective over c.
func (c *Comm) SplitShared(key int) (*Comm, error) {
	if c == nil {
		return nil, fatalCheck(errNilComm)
	}
	return c.Split(c.c.NodeID(c.c.Rank()), key)
}

// Free releases a communicator other than the world; later calls on it
// return ErrInvalidComm. Operations still pending on it complete normally.
func (c *Comm) Free() error {
	if c == nil {
		return fatalCheck(errNilComm)
	}
	if err := c.c.Free(); err != nil {
		return fatalCheck(err)
	}
	c.shmClose()
	return nil
}
