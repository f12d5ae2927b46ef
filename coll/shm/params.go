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
	// 256k: same run, np 4 on 2 cores, base (16k) against 256k, µs: Bcast
	// 32 KiB 19.9 -> 1.8, 256 KiB 52.6 -> 15.9; Reduce 32 KiB 16.5 -> 4.7,
	// 256 KiB 74.8 -> 21.3; Allreduce 32 KiB 27.5 -> 15.7; Allgather
	// 64 KiB 73.7 -> 22.1. A ring of copies through the PML needs every
	// rank on a core in turn; the segment needs each rank once. Above 256
	// KiB Allreduce and Alltoall lose or tie.
	mca.Size("coll_sm_oversubscribed_max_size", "256k", 8, 1<<20, func(c *Config) *int { return &c.OverMaxSize },
		"coll_sm_max_size for a job with more ranks than this machine has cores (as rank 0 of the communicator sees it when it makes the segment)"),
	// 4m: same take, np 8 on 2 cores, Bcast through the schedules against
	// a 1 MiB slot, µs: 512 KiB 166 -> 48, 1 MiB 294 -> 94; a 1 MiB slot
	// against 4 MiB: Bcast 4 MiB 4748 -> 258, Reduce 4 MiB 3307 -> 849 (np
	// 4: 2106 -> 167, 1389 -> 503). The root writes once and leaves, every
	// reader copies once. Allreduce and Alltoall lost at 1 MiB through it
	// (np 4: 1.46x). Cells are only touched as far as calls fill them.
	mca.Size("coll_sm_oversubscribed_rooted_max_size", "4m", 8, 16<<20, func(c *Config) *int { return &c.OverRootedMaxSize },
		"coll_sm_oversubscribed_max_size for Bcast and Reduce (the segment's slot is the larger of the two)"),
	// 512k: same take, 5 rounds, Allreduce with coll_sm_oversubscribed_max_size
	// 256k against 64k, µs: np 8 64 KiB 198 -> 184, 128 KiB 207 -> 346,
	// 256 KiB 297 -> 507; np 4 128 KiB 83 -> 83, 256 KiB 114 -> 177:
	// every rank folds all n inputs, n times the work of the schedules'
	// reduce-scatter, which with more ranks than cores is what counts.
	mca.Size("coll_sm_oversubscribed_allreduce_max_size", "512k", 8, 1<<30, func(c *Config) *int { return &c.OverAllreduceMax },
		"With more ranks than cores (as rank 0 of the communicator sees it), the largest Allreduce coll/sm takes, counted as bytes per rank times the number of ranks (every rank folds every rank's input); within coll_sm_oversubscribed_max_size"),
	// Same take, np 4 on 2 cores, Reduce through the schedules against in
	// pieces, µs: 512 KiB 283 -> 107, 1 MiB 532 -> 339, 4 MiB 3742 ->
	// 1446 (each rank but the root writes and leaves; the schedules need
	// every rank on a core for each round). On 2 ranks, not oversubscribed,
	// they tie. Bcast in pieces lost (1 MiB 176 -> 295).
	mca.Bool("coll_sm_reduce_pipeline", "true", func(c *Config) *bool { return &c.ReducePipeline },
		"With more ranks than cores (as rank 0 of the communicator sees it), a blocking Reduce larger than coll_sm_oversubscribed_rooted_max_size goes through the segment in pieces of that size, one after the other, instead of through the point-to-point schedules"),
})

// Config is coll/sm's configuration.
type Config struct {
	Enable      bool
	MaxSize     int
	OverMaxSize int // MaxSize when oversubscribed
	// OverRootedMaxSize: OverMaxSize for Bcast and Reduce.
	OverRootedMaxSize int
	// OverAllreduceMax: oversubscribed, the largest Allreduce, in bytes
	// per rank times ranks.
	OverAllreduceMax int
	// ReducePipeline: oversubscribed, a Reduce larger than the slot goes
	// through the segment in slot-sized pieces.
	ReducePipeline bool
}
