package coll

import (
	"reflect"
	"testing"
)

// Auto selection for Allreduce (built-in ops, 4-byte elements) by size and
// communicator size; a user op always takes recursive doubling.
func TestAllreduceSelection(t *testing.T) {
	const e = 4
	cases := []struct {
		n, bytes int
		ordered  bool
		want     func(n, r, count int) Schedule
		name     string
	}{
		{4, 32 << 10, false, AllreduceRecursiveDoubling, "recursive_doubling"},
		{4, 64 << 10, false, AllreduceRabenseifner, "rabenseifner"},
		{5, 512 << 10, false, AllreduceRabenseifner, "rabenseifner"},
		{4, 1 << 20, false, AllreduceRing, "ring"},
		{2, 64 << 10, false, AllreduceRing, "ring"},
		{2, 4 << 20, false, AllreduceRing, "ring"},
		{4, 256 << 10, true, AllreduceRecursiveDoubling, "recursive_doubling"},
	}
	for _, c := range cases {
		count := c.bytes / e
		for r := 0; r < c.n; r++ {
			got := Config{}.AllreduceSchedule(c.n, r, count, e, c.ordered)
			if !reflect.DeepEqual(got, c.want(c.n, r, count)) {
				t.Errorf("n %d, %d bytes, ordered %v: rank %d's schedule is not %s", c.n, c.bytes, c.ordered, r, c.name)
			}
		}
	}
}

// Auto selection for Bcast: binomial below 4 MiB or on fewer than 4 ranks.
func TestBcastSelection(t *testing.T) {
	cases := []struct {
		n, bytes int
		want     func(n, r, root, count int) Schedule
		name     string
	}{
		{4, 1 << 20, BcastBinomial, "binomial"},
		{4, 2 << 20, BcastBinomial, "binomial"},
		{4, 4 << 20, BcastScatterAllgather, "scatter_allgather"},
		{3, 8 << 20, BcastBinomial, "binomial"},
	}
	for _, c := range cases {
		for r := 0; r < c.n; r++ {
			got := Config{}.BcastSchedule(c.n, r, 1, c.bytes, 1)
			if !reflect.DeepEqual(got, c.want(c.n, r, 1, c.bytes)) {
				t.Errorf("n %d, %d bytes: rank %d's schedule is not %s", c.n, c.bytes, r, c.name)
			}
		}
	}
}

// Auto selection for Alltoall above 256 KiB per rank: pairwise, or linear
// for ranks that share cores; a forced algorithm stays.
func TestAlltoallSelectionOver(t *testing.T) {
	const n, count = 4, 128 << 10 // 512 KiB per rank in bytes
	for r := 0; r < n; r++ {
		for _, c := range []struct {
			cfg  Config
			over bool
			want Schedule
			name string
		}{
			{Config{}, false, AlltoallPairwise(n, r, count, false), "pairwise"},
			{Config{}, true, AlltoallLinear(n, r, count, false), "linear"},
			{Config{Alltoall: "pairwise"}, true, AlltoallPairwise(n, r, count, false), "forced pairwise"},
		} {
			if got := c.cfg.AlltoallScheduleOver(n, r, count, 1, false, c.over); !reflect.DeepEqual(got, c.want) {
				t.Errorf("rank %d, over %v: the schedule is not %s", r, c.over, c.name)
			}
		}
	}
}
