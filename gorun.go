// Package gorun is the user API of the gorun message-passing runtime: MPI-style
// point-to-point messaging between the ranks of a job started by the gorun
// launcher, over shared memory.
//
// A Comm and its Requests are safe for concurrent use by many goroutines.
package gorun

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"

	"github.com/gorun-mpi/gorun/launcher"

	"github.com/gorun-mpi/gorun/internal/errs"
)

// Wildcards and limits.
const (
	AnySource = -1
	AnyTag    = -1
	MaxTag    = 1<<30 - 1 // valid send tags are 0..MaxTag
)

// Errors, matched with errors.Is.
var (
	ErrTruncate    = errs.ErrTruncate
	ErrInvalidRank = errs.ErrInvalidRank
	ErrInvalidTag  = errs.ErrInvalidTag
	ErrFinalized   = errs.ErrFinalized
	ErrCanceled    = errs.ErrCanceled
	ErrPeerLost    = errs.ErrPeerLost
)

// Status describes a received (or probed) message.
type Status struct {
	Source int // rank of the sender, in the receiving communicator
	Tag    int
	Count  int // bytes actually received (or, for a probe, bytes pending)
}

var errTODO = errors.New("gorun: not implemented yet")

// Comm is a communicator.
type Comm struct{ rank, size int }

// Request is a nonblocking operation.
type Request struct{}

func Finalize() error                                            { return errTODO }
func (c *Comm) Rank() int                                        { return c.rank }
func (c *Comm) Size() int                                        { return c.size }
func (c *Comm) Dup() (*Comm, error)                              { return nil, errTODO }
func (c *Comm) Barrier() error                                   { return errTODO }
func (c *Comm) Abort(code int)                                   { launcher.Abort(code) }
func (c *Comm) Send(buf []byte, dest, tag int) error             { return errTODO }
func (c *Comm) Ssend(buf []byte, dest, tag int) error            { return errTODO }
func (c *Comm) Recv(buf []byte, source, tag int) (Status, error) { return Status{}, errTODO }
func (c *Comm) Sendrecv(sendBuf []byte, dest, sendTag int, recvBuf []byte, source, recvTag int) (Status, error) {
	return Status{}, errTODO
}
func (c *Comm) Probe(source, tag int) (Status, error)              { return Status{}, errTODO }
func (c *Comm) Iprobe(source, tag int) (Status, bool, error)       { return Status{}, false, errTODO }
func (c *Comm) Isend(buf []byte, dest, tag int) (*Request, error)  { return nil, errTODO }
func (c *Comm) Issend(buf []byte, dest, tag int) (*Request, error) { return nil, errTODO }
func (c *Comm) Irecv(buf []byte, source, tag int) (*Request, error) {
	return nil, errTODO
}
func (r *Request) Wait() (Status, error)                           { return Status{}, errTODO }
func (r *Request) WaitContext(ctx context.Context) (Status, error) { return Status{}, errTODO }
func (r *Request) Test() (Status, bool, error)                     { return Status{}, false, errTODO }
func (r *Request) Cancel() error                                   { return errTODO }
func WaitAll(reqs ...*Request) ([]Status, error)                   { return nil, errTODO }
func WaitAny(reqs ...*Request) (int, Status, error)                { return -1, Status{}, errTODO }

// Scalar is any fixed-size number type.
type Scalar interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~float32 | ~float64 | ~complex64 | ~complex128
}

func SendSlice[T Scalar](c *Comm, s []T, dest, tag int) error             { return errTODO }
func RecvSlice[T Scalar](c *Comm, s []T, source, tag int) (Status, error) { return Status{}, errTODO }

var initOnce struct {
	sync.Mutex
	world *Comm
}

// Init joins the job started by gorun and returns the world communicator.
// (Temporary minimal version: rank and size from the environment.)
func Init() (*Comm, error) {
	initOnce.Lock()
	defer initOnce.Unlock()
	if initOnce.world != nil {
		return initOnce.world, nil
	}
	c := &Comm{rank: 0, size: 1}
	if r := os.Getenv("GORUN_RANK"); r != "" {
		c.rank, _ = strconv.Atoi(r)
		c.size, _ = strconv.Atoi(os.Getenv("GORUN_SIZE"))
		if err := launcher.RankInit(); err != nil {
			return nil, err
		}
	}
	initOnce.world = c
	return c, nil
}
