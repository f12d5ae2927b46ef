package coll

import "github.com/gorun-mpi/gorun/mca"

// Params declares the coll/tuned parameters, each bound to its Config
// field: each forces one algorithm (Open MPI's
// coll_tuned_<op>_algorithm); "auto" lets the engine choose by message
// size and communicator size (see tuned.go).
var Params = mca.Declare("coll_tuned", []mca.Field[Config]{
	mca.Enum("coll_tuned_barrier_algorithm", "auto", []string{"auto", "dissemination"},
		func(c *Config) *string { return &c.Barrier },
		"Barrier algorithm: auto or dissemination"),
	mca.Enum("coll_tuned_bcast_algorithm", "auto", []string{"auto", "binomial", "scatter_allgather"},
		func(c *Config) *string { return &c.Bcast },
		"Bcast algorithm: auto, binomial, or scatter_allgather (binomial scatter then ring allgather, for large messages)"),
	mca.Enum("coll_tuned_reduce_algorithm", "auto", []string{"auto", "binomial", "reduce_scatter_gather", "rabenseifner"},
		func(c *Config) *string { return &c.Reduce },
		"Reduce algorithm: auto, binomial (in rank order for user ops), reduce_scatter_gather (ring reduce-scatter then a gather at the root), or rabenseifner (recursive halving reduce-scatter then a gather at the root); the last two for built-in ops only"),
	mca.Enum("coll_tuned_allreduce_algorithm", "auto", []string{"auto", "recursive_doubling", "ring", "rabenseifner"},
		func(c *Config) *string { return &c.Allreduce },
		"Allreduce algorithm: auto, recursive_doubling, ring (ring reduce-scatter + ring allgather), or rabenseifner (recursive halving reduce-scatter + recursive doubling allgather); ring and rabenseifner for built-in ops only, user ops always use recursive_doubling"),
	mca.Enum("coll_tuned_allgather_algorithm", "auto", []string{"auto", "recursive_doubling", "bruck", "ring"},
		func(c *Config) *string { return &c.Allgather },
		"Allgather algorithm: auto, recursive_doubling (power-of-two sizes; others use bruck), bruck, or ring"),
	mca.Enum("coll_tuned_alltoall_algorithm", "auto", []string{"auto", "linear", "pairwise", "bruck"},
		func(c *Config) *string { return &c.Alltoall },
		"Alltoall algorithm: auto, linear (every exchange posted at once), pairwise (one peer per step), or bruck (log2 n steps of packed blocks; small blocks)"),
	mca.Enum("coll_tuned_reduce_scatter_block_algorithm", "auto", []string{"auto", "ring", "recursive_doubling"},
		func(c *Config) *string { return &c.ReduceScatterBlock },
		"ReduceScatterBlock algorithm: auto, ring (built-in ops; user ops use recursive_doubling), or recursive_doubling (allreduce, then keep one block)"),
	mca.Enum("coll_tuned_gather_algorithm", "auto", []string{"auto", "binomial", "linear"},
		func(c *Config) *string { return &c.Gather },
		"Gather algorithm: auto, binomial (subtrees gathered in one message each; small messages), or linear (every rank sends to the root)"),
	mca.Enum("coll_tuned_scatter_algorithm", "auto", []string{"auto", "binomial", "linear"},
		func(c *Config) *string { return &c.Scatter },
		"Scatter algorithm: auto, binomial (each child gets its subtree's blocks in one message; small messages), or linear (the root sends to every rank)"),
})

// Config forces algorithms; the zero value (every field "" or "auto")
// lets the engine choose.
type Config struct {
	Barrier, Bcast, Reduce, Allreduce, Allgather, Alltoall, ReduceScatterBlock, Gather, Scatter string
}
