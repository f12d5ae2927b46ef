package main

import (
	"slices"
	"testing"
)

// The counts are bench.c's; the boundaries are where they change.
func TestLatCounts(t *testing.T) {
	tests := []struct {
		size int
		want counts
	}{
		{0, counts{10000, 100}},
		{8192, counts{10000, 100}},
		{8193, counts{1000, 10}},
		{4 << 20, counts{1000, 10}},
		{4<<20 + 1, counts{100, 2}},
		{64 << 20, counts{100, 2}},
	}
	for _, tt := range tests {
		if got := latCounts(tt.size); got != tt.want {
			t.Errorf("latCounts(%d) = %+v, want %+v", tt.size, got, tt.want)
		}
	}
}

func TestBWCounts(t *testing.T) {
	tests := []struct {
		size  int
		exact bool
		want  counts
	}{
		{1, false, counts{1000, 100}},
		{8192, false, counts{1000, 100}},
		{8193, false, counts{100, 10}},
		{4 << 20, false, counts{100, 10}},
		{4<<20 + 1, false, counts{10, 1}},
		{1, true, counts{100, 10}},
		{8192, true, counts{100, 10}},
		{8193, true, counts{20, 2}},
		{4 << 20, true, counts{20, 2}},
		{4<<20 + 1, true, counts{10, 1}},
	}
	for _, tt := range tests {
		if got := bwCounts(tt.size, tt.exact); got != tt.want {
			t.Errorf("bwCounts(%d, %v) = %+v, want %+v", tt.size, tt.exact, got, tt.want)
		}
	}
}

func TestSizes(t *testing.T) {
	tests := []struct {
		lo, hi int
		want   []int
	}{
		{0, 8, []int{0, 1, 2, 4, 8}},
		{1, 8, []int{1, 2, 4, 8}},
		{0, 0, []int{0}},
		{0, 100, []int{0, 1, 2, 4, 8, 16, 32, 64}},
		{3, 24, []int{3, 6, 12, 24}},
		{16, 8, nil},
	}
	for _, tt := range tests {
		if got := sizes(tt.lo, tt.hi); !slices.Equal(got, tt.want) {
			t.Errorf("sizes(%d, %d) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
	// The default sweeps: 0, 1, 2, 4 .. 4 MiB is 24 sizes; from 1, 23.
	if got := sizes(ModeLat.minSize(), defaultMax); len(got) != 24 || got[23] != 4<<20 {
		t.Errorf("default lat sweep = %v, want 24 sizes ending at 4 MiB", got)
	}
	if got := sizes(ModeBW.minSize(), defaultMax); len(got) != 23 || got[0] != 1 {
		t.Errorf("default bw sweep = %v, want 23 sizes from 1 B", got)
	}
}
