package main

import (
	"math"
	"strings"
	"testing"
)

func TestRowRange(t *testing.T) {
	tests := []struct {
		n, p, r int
		lo, hi  int
	}{
		{256, 4, 0, 0, 64},
		{256, 4, 3, 192, 256},
		{10, 3, 0, 0, 4}, // the first n%p ranks get one more row
		{10, 3, 1, 4, 7},
		{10, 3, 2, 7, 10},
		{5, 5, 4, 4, 5},
		{7, 1, 0, 0, 7},
	}
	for _, tt := range tests {
		if lo, hi := rowRange(tt.n, tt.p, tt.r); lo != tt.lo || hi != tt.hi {
			t.Errorf("rowRange(%d, %d, %d) = [%d, %d), want [%d, %d)", tt.n, tt.p, tt.r, lo, hi, tt.lo, tt.hi)
		}
	}
	// Every row is owned by exactly one rank, in order, and no two ranks'
	// shares differ by more than one row.
	for n := 1; n <= 40; n++ {
		for p := 1; p <= n; p++ {
			next, least, most := 0, n, 0
			for r := range p {
				lo, hi := rowRange(n, p, r)
				if lo != next || hi <= lo {
					t.Fatalf("rowRange(%d, %d, %d) = [%d, %d), want to start at %d and be non-empty", n, p, r, lo, hi, next)
				}
				next = hi
				least, most = min(least, hi-lo), max(most, hi-lo)
			}
			if next != n || most-least > 1 {
				t.Fatalf("n=%d p=%d: rows end at %d (want %d), shares %d..%d", n, p, next, n, least, most)
			}
		}
	}
}

// reference is an independent, plain 2-D Jacobi solver: the oracle for step.
func reference(n, iters int) [][]float64 {
	u, v := make([][]float64, n), make([][]float64, n)
	for i := range n {
		u[i], v[i] = make([]float64, n), make([]float64, n)
		for j := range n {
			u[i][j] = initial(i, j)
			v[i][j] = initial(i, j)
		}
	}
	for range iters {
		for i := 1; i < n-1; i++ {
			for j := 1; j < n-1; j++ {
				v[i][j] = 0.25 * ((u[i-1][j] + u[i+1][j]) + (u[i][j-1] + u[i][j+1]))
			}
		}
		u, v = v, u
	}
	return u
}

func TestSerialMatchesReference(t *testing.T) {
	for _, tt := range []struct{ n, iters int }{{3, 1}, {5, 0}, {8, 3}, {17, 40}} {
		got, want := serial(tt.n, tt.iters), reference(tt.n, tt.iters)
		for i := range tt.n {
			for j := range tt.n {
				if g := got[i*tt.n+j]; g != want[i][j] {
					t.Fatalf("serial(%d, %d) cell (%d,%d) = %v, want %v", tt.n, tt.iters, i, j, g, want[i][j])
				}
			}
		}
	}
	// The grid does evolve: after some iterations it is not the start.
	if maxAbsDiff(serial(17, 10), serial(17, 0)) == 0 {
		t.Error("10 iterations left the grid unchanged")
	}
}

// decomposed runs the decomposition of main in one process: p blocks whose
// halos are copied from the neighbours' edge rows before each step, as
// exchange does with messages. It returns the gathered grid.
func decomposed(n, iters, p int) []float64 {
	blocks := make([]*block, p)
	for r := range p {
		lo, hi := rowRange(n, p, r)
		blocks[r] = newBlock(n, lo, hi)
	}
	for range iters {
		for r := range p {
			if r > 0 {
				copy(blocks[r].haloAbove(), blocks[r-1].lastOwned())
			}
			if r < p-1 {
				copy(blocks[r].haloBelow(), blocks[r+1].firstOwned())
			}
		}
		for _, b := range blocks {
			b.step()
		}
	}
	var grid []float64
	for _, b := range blocks {
		grid = append(grid, b.owned()...)
	}
	return grid
}

// Any decomposition gives a grid bit-identical to the serial run, which is
// what main checks with real messages.
func TestDecompositionIsBitIdentical(t *testing.T) {
	for _, tt := range []struct{ n, iters, p int }{
		{3, 5, 1}, {3, 5, 3}, {10, 25, 3}, {16, 30, 4}, {16, 30, 16}, {33, 50, 5}, {64, 100, 2},
	} {
		got, want := decomposed(tt.n, tt.iters, tt.p), serial(tt.n, tt.iters)
		if len(got) != len(want) {
			t.Fatalf("n=%d p=%d: %d cells, want %d", tt.n, tt.p, len(got), len(want))
		}
		if d := maxAbsDiff(got, want); d != 0 {
			t.Errorf("n=%d iters=%d p=%d: max|diff| = %g, want 0", tt.n, tt.iters, tt.p, d)
		}
	}
}

// A missed halo exchange changes the result: the check can fail.
func TestStaleHaloIsCaught(t *testing.T) {
	n, iters := 16, 10
	lo, hi := rowRange(n, 2, 0)
	top, bottom := newBlock(n, lo, hi), newBlock(n, hi, n)
	for range iters { // halos never refreshed
		top.step()
		bottom.step()
	}
	got := append(append([]float64{}, top.owned()...), bottom.owned()...)
	if maxAbsDiff(got, serial(n, iters)) == 0 {
		t.Error("stale halos gave the serial result; the comparison would not catch a broken exchange")
	}
}

func TestMaxAbsDiff(t *testing.T) {
	tests := []struct {
		a, b []float64
		want float64
	}{
		{[]float64{1, 2}, []float64{1, 2}, 0},
		{[]float64{1, 2}, []float64{1.5, 1}, 1},
		{nil, nil, 0},
	}
	for _, tt := range tests {
		if got := maxAbsDiff(tt.a, tt.b); got != tt.want {
			t.Errorf("maxAbsDiff(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if got := maxAbsDiff([]float64{math.NaN()}, []float64{0}); got == 0 {
		t.Error("maxAbsDiff(NaN, 0) = 0; a NaN must count as a difference")
	}
}

func TestCheckParams(t *testing.T) {
	tests := []struct {
		n, iters, p int
		wantErr     string
	}{
		{256, 500, 4, ""},
		{3, 0, 3, ""},
		{2, 10, 1, "-n 2: the grid needs at least 3"},
		{256, -1, 1, "-iters -1: want 0 or more"},
		{4, 10, 8, "-n 4: fewer rows than the 8 ranks"},
	}
	for _, tt := range tests {
		err := checkParams(tt.n, tt.iters, tt.p)
		if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("checkParams(%d, %d, %d) = %v, want error %q", tt.n, tt.iters, tt.p, err, tt.wantErr)
		}
	}
}
