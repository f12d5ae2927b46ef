package main

// Constants of the method, as in bench.c (and OSU 5.x/7.x).
const (
	window        = 64      // nonblocking operations in flight per bw/bibw/mr round
	largeSize     = 8192    // above this, fewer iterations (OSU's LARGE_MESSAGE_SIZE)
	hugeSize      = 4 << 20 // above this (beyond OSU's default range), fewer still
	defaultMax    = 4 << 20 // default largest message of a size sweep
	defaultRounds = 10000   // default rounds of ring and shift
	// defaultBlockMax is allgather's and alltoall's largest block (bench.c).
	defaultBlockMax = 1 << 20
)

// collCounts is the schedule of the collectives (osu_allreduce and its
// siblings): 1000 + 100 calls up to 8 KiB, 100 + 10 above.
func collCounts(size int) counts {
	if size > largeSize {
		return counts{100, 10}
	}
	return counts{1000, 100}
}

// counts is how many timed iterations a size gets, after how many untimed
// warm-up ones.
type counts struct{ iters, warmup int }

// latCounts is the schedule of lat and multi_lat (OSU's osu_latency):
// 10000 + 100 ping-pongs up to 8 KiB, 1000 + 10 up to 4 MiB, 100 + 2 above.
func latCounts(size int) counts {
	switch {
	case size > hugeSize:
		return counts{100, 2}
	case size > largeSize:
		return counts{1000, 10}
	}
	return counts{10000, 100}
}

// bwCounts is the schedule of bw, bibw and mr, in windows. OSU's own counts
// (exact) are 100 + 10 up to 8 KiB and 20 + 2 above; like bench.c the default
// is 10x and 5x more (1000 + 100, 100 + 10), because OSU's counts last well
// under a millisecond for small sizes here, which is too noisy. Above 4 MiB
// both use 10 + 1.
func bwCounts(size int, exact bool) counts {
	switch {
	case size > hugeSize:
		return counts{10, 1}
	case size > largeSize && exact:
		return counts{20, 2}
	case size > largeSize:
		return counts{100, 10}
	case exact:
		return counts{100, 10}
	}
	return counts{1000, 100}
}

// sizes lists the message sizes of a sweep from lo to hi: lo, then doubling
// (0 is followed by 1), as long as the size is at most hi. lat sweeps from 0,
// bandwidth modes from 1, so the defaults give 0, 1, 2, 4 .. 4 MiB and
// 1, 2, 4 .. 4 MiB.
func sizes(lo, hi int) []int {
	var out []int
	for s := lo; s <= hi; {
		out = append(out, s)
		if s == 0 {
			s = 1
		} else {
			s *= 2
		}
	}
	return out
}
