package shm

import "github.com/gorun-mpi/gorun/mca"

// Params declares coll/sm's parameters.
var Params = mca.Declare("coll_sm", []mca.Field[Config]{
	mca.Bool("coll_sm_enable", "true", func(c *Config) *bool { return &c.Enable },
		"Run small blocking Barrier, Bcast, Reduce, Allreduce, Allgather and Alltoall of a communicator whose ranks all share this machine through a shared segment of its own (made at its first such call) instead of point-to-point messages"),
	// 16k: same run, np 2, coll/sm against the schedules: 8–16 KiB
	// Allreduce 0.7–1.9 µs against 1.7–2.8, Allgather and Bcast likewise;
	// from 32 KiB the schedules win on 2 ranks (64 KiB Allreduce 4.7–5
	// against 8). Oversubscribed (np 4 on 2 cores) coll/sm wins to 64 KiB.
	mca.Size("coll_sm_max_size", "16k", 8, 1<<20, func(c *Config) *int { return &c.MaxSize },
		"Largest message coll/sm takes (bytes per rank; Allgather: per block; Alltoall: all blocks of a rank together); larger ones, and every nonblocking collective, go through the point-to-point schedules (rounded down to a multiple of 8)"),
})

// Config is coll/sm's configuration.
type Config struct {
	Enable  bool
	MaxSize int
}
