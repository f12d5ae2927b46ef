package coll

// Algorithm selection (Open MPI's coll/tuned decision functions are the
// model; the thresholds are this machine's, see docs/PERFORMANCE.md).
// Sizes are in bytes; "auto" or "" chooses, anything else forces.
//
//	Barrier             dissemination
//	Bcast               binomial; scatter_allgather from 4 MiB on ≥ 4 ranks
//	Reduce              binomial (in rank order for user ops);
//	                    reduce_scatter_gather from 256 KiB on > 2 ranks;
//	                    rabenseifner only when forced
//	Allreduce           recursive_doubling; from 64 KiB (built-in ops):
//	                    rabenseifner below 1 MiB on > 2 ranks, ring
//	                    otherwise
//	Allgather           recursive_doubling (power of two) or bruck up to
//	                    64 KiB gathered; ring above
//	Alltoall            bruck for blocks up to 256 B on ≥ 8 ranks; linear up
//	                    to 256 KiB sent per rank; pairwise above (linear
//	                    when the ranks share cores)
//	ReduceScatterBlock  ring (built-in ops); recursive_doubling (user ops)
//	Gather, Scatter     binomial up to 64 KiB in all; linear above
//	the v-variants: linear, at most maxOutstanding requests posted at
//	once; Scan, Exscan: recursive doubling
//
// The small blocking Barrier, Bcast, Reduce, Allreduce, Allgather and
// Alltoall of a communicator on one machine do not come here: coll/shm runs
// them (up to coll_sm_max_size bytes per rank; with more ranks than cores
// coll_sm_oversubscribed_max_size, and for Bcast and Reduce
// coll_sm_oversubscribed_rooted_max_size, Reduce in pieces above it,
// Allreduce within coll_sm_oversubscribed_allreduce_max_size in all;
// Alltoall: all of a rank's blocks together). From 8 KiB per rank, on
// ranks with a core each whose memory they can read (btl/sm's single
// copy), blocking Bcast, and Reduce, Allreduce, Allgather and Alltoall that
// are not in place, go through single-copy reads of each other's buffers instead
// (coll/shm's *Read operations), whatever their size. With more ranks than
// cores (blocking calls): an Allreduce not in place that the segment does
// not take goes through coll/shm's AllreduceSplitRead (each rank folds 1/n
// of it, then reads the others' parts); an Allgather not in place of
// blocks the segment does not take, and an Alltoall not in place of 64-128
// KiB blocks (32-128 KiB on up to 4 ranks), through single-copy reads; a
// Bcast through the segment in 8 KiB pieces up to its slot, through reads
// above; an Alltoall above 256 KiB per rank takes linear instead of
// pairwise (AlltoallScheduleOver).

// Barrier returns the barrier schedule.
func (c Config) BarrierSchedule(n, r int) Schedule { return BarrierDissemination(n, r) }

// BcastSchedule chooses for count elements of elem bytes.
func (c Config) BcastSchedule(n, r, root, count, elem int) Schedule {
	alg := c.Bcast
	if alg == "" || alg == "auto" {
		alg = "binomial"
		// np 4 on 2 cores, same run: binomial 48–50 µs at 256 KiB against
		// 83–98, 124–172 at 1 MiB against 209–244, 302–370 at 2 MiB
		// against 431–547; scatter_allgather's 2(n-1) extra steps pay
		// only from 4 MiB (720–774 against 811–831).
		if n >= 4 && count*elem >= 4<<20 && count >= n {
			alg = "scatter_allgather"
		}
	}
	if alg == "scatter_allgather" {
		return BcastScatterAllgather(n, r, root, count)
	}
	return BcastBinomial(n, r, root, count)
}

// ReduceSchedule: ordered for a user Op (rank-order combination), which
// always takes the binomial tree.
func (c Config) ReduceSchedule(n, r, root, count, elem int, in Region, ordered bool) Schedule {
	alg := c.Reduce
	if alg == "" || alg == "auto" {
		alg = "binomial"
		if count*elem >= 256<<10 && count >= n && n > 2 {
			alg = "reduce_scatter_gather"
		}
	}
	switch {
	case ordered:
	case alg == "reduce_scatter_gather":
		return ReduceScatterGather(n, r, root, count, in)
	case alg == "rabenseifner":
		return ReduceRabenseifner(n, r, root, count, in)
	}
	return ReduceBinomial(n, r, root, count, in, ordered)
}

// AllreduceSchedule chooses; ordered (a user Op) always takes recursive
// doubling, the one that combines in rank order.
func (c Config) AllreduceSchedule(n, r, count, elem int, ordered bool) Schedule {
	alg := c.Allreduce
	if alg == "" || alg == "auto" {
		alg = "recursive_doubling"
		if count*elem >= 64<<10 && count >= n {
			// Rabenseifner's 2 log2 n steps beat the ring's 2(n-1) up to
			// 512 KiB on 4 ranks (np 4 on 2 cores, same run: 64 KiB 45–68
			// µs against 76–91, 256 KiB 130–151 against 161–174); from 1
			// MiB the ring's neighbour-only traffic wins or ties. On 2
			// ranks they are the same exchange.
			alg = "ring"
			if n > 2 && count*elem < 1<<20 {
				alg = "rabenseifner"
			}
		}
	}
	switch {
	case ordered:
	case alg == "ring":
		return AllreduceRing(n, r, count)
	case alg == "rabenseifner":
		return AllreduceRabenseifner(n, r, count)
	}
	return AllreduceRecursiveDoubling(n, r, count)
}

// AllgatherSchedule chooses for blocks of count elements.
func (c Config) AllgatherSchedule(n, r, count, elem int) Schedule {
	alg := c.Allgather
	pow2 := n&(n-1) == 0
	if alg == "" || alg == "auto" {
		switch {
		case n*count*elem > 64<<10:
			alg = "ring"
		case pow2:
			alg = "recursive_doubling"
		default:
			alg = "bruck"
		}
	}
	switch {
	case alg == "recursive_doubling" && pow2:
		return AllgatherRecursiveDoubling(n, r, count)
	case alg == "ring":
		return AllgatherRing(n, r, count)
	}
	return AllgatherBruck(n, r, count)
}

// AlltoallSchedule chooses for blocks of count elements.
func (c Config) AlltoallSchedule(n, r, count, elem int, inPlace bool) Schedule {
	return c.AlltoallScheduleOver(n, r, count, elem, inPlace, false)
}

// AlltoallScheduleOver is AlltoallSchedule for ranks that share cores
// when over: then auto keeps linear where it would take pairwise, whose
// steps each need both ranks of a pair on a core at once, where linear
// lets every rank move whatever has come (np 4 on 2 cores, Alltoall/Open
// MPI, median of 15 per-round ratios, 2 takes: 256 KiB-1 MiB blocks
// 0.88-1.13 -> 0.84-1.09; np 8 1.19-1.40 -> 1.04-1.10).
func (c Config) AlltoallScheduleOver(n, r, count, elem int, inPlace, over bool) Schedule {
	alg := c.Alltoall
	if alg == "" || alg == "auto" {
		switch {
		case n >= 8 && count*elem <= 256:
			alg = "bruck"
		case n*count*elem > 256<<10 && !over:
			alg = "pairwise"
		default:
			alg = "linear"
		}
	}
	switch alg {
	case "pairwise":
		return AlltoallPairwise(n, r, count, inPlace)
	case "bruck":
		return AlltoallBruck(n, r, count, inPlace)
	}
	return AlltoallLinear(n, r, count, inPlace)
}

// GatherSchedule chooses for blocks of count elements: binomial while the
// whole gathered buffer is at most 64 KiB (its copies through scratch cost
// less than n-1 arrivals at the root), linear above.
func (c Config) GatherSchedule(n, r, root, count, elem int, in Region) Schedule {
	if c.Gather == "binomial" || (c.Gather == "" || c.Gather == "auto") && n*count*elem <= 64<<10 {
		return GatherBinomial(n, r, root, count, in)
	}
	return GatherLinear(n, r, root, count, in)
}

// ScatterSchedule chooses like GatherSchedule.
func (c Config) ScatterSchedule(n, r, root, count, elem int) Schedule {
	if c.Scatter == "binomial" || (c.Scatter == "" || c.Scatter == "auto") && n*count*elem <= 64<<10 {
		return ScatterBinomial(n, r, root, count)
	}
	return ScatterLinear(n, r, root, count)
}

// ReduceScatterBlockSchedule chooses for blocks of rcount elements.
func (c Config) ReduceScatterBlockSchedule(n, r, rcount int, ordered bool) Schedule {
	if ordered || c.ReduceScatterBlock == "recursive_doubling" {
		return ReduceScatterBlockOrdered(n, r, rcount)
	}
	return ReduceScatterBlockRing(n, r, rcount)
}
