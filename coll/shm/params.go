package shm

import "github.com/gorun-mpi/gorun/mca"

// Params declares coll/sm's parameters.
var Params = mca.Declare("coll_sm", []mca.Field[Config]{
	mca.Bool("coll_sm_enable", "true", func(c *Config) *bool { return &c.Enable },
		"Run small blocking Barrier, Bcast, Reduce, Allreduce, Allgather and Alltoall of a communicator whose ranks all share this machine through a shared segment of its own (made at its first such call) instead of point-to-point messages"),
	mca.Size("coll_sm_max_size", "4k", 8, 1<<20, func(c *Config) *int { return &c.MaxSize },
		"Largest message coll/sm takes (bytes per rank; Allgather: per block; Alltoall: all blocks of a rank together); larger ones, and every nonblocking collective, go through the point-to-point schedules (rounded down to a multiple of 8)"),
})

// Config is coll/sm's configuration.
type Config struct {
	Enable  bool
	MaxSize int
}
