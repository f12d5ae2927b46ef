package main

import "fmt"

// rowRange returns the global rows [lo, hi) that rank r of p owns in a grid
// of n rows: consecutive blocks, the first n%p ranks one row longer.
func rowRange(n, p, r int) (lo, hi int) {
	base, extra := n/p, n%p
	lo = r*base + min(r, extra)
	hi = lo + base
	if r < extra {
		hi++
	}
	return lo, hi
}

// initial is the starting temperature of cell (i, j). The boundary cells
// keep it for ever (fixed boundary conditions). It varies from cell to cell
// so that a row put at the wrong place changes the result.
func initial(i, j int) float64 { return float64((i*7+j*13)%17) / 16 }

// block is the part of an n×n grid that one rank owns, global rows lo..hi-1,
// with one halo row above and one below for the neighbours' edge rows.
// Local row k (0..rows+1) is global row lo+k-1.
//
// Invariant: boundary cells (global row or column 0 or n-1) hold initial(i, j)
// in both cur and next; step never writes them.
type block struct {
	n, lo, hi int
	cur, next []float64 // (hi-lo+2) rows of n cells each
}

// newBlock allocates rows [lo, hi) of an n×n grid, with initial values; the
// halo rows hold initial values too until the first exchange.
func newBlock(n, lo, hi int) *block {
	rows := hi - lo + 2
	b := &block{n: n, lo: lo, hi: hi, cur: make([]float64, rows*n), next: make([]float64, rows*n)}
	for k := range rows {
		g := lo + k - 1
		if g < 0 || g >= n {
			continue
		}
		for j := range n {
			b.cur[k*n+j] = initial(g, j)
			b.next[k*n+j] = initial(g, j)
		}
	}
	return b
}

// rows is how many rows the block owns.
func (b *block) rows() int { return b.hi - b.lo }

// row returns local row k of the current grid.
func (b *block) row(k int) []float64 { return b.cur[k*b.n : (k+1)*b.n] }

// Edge rows sent to the neighbours, and halo rows received from them.
func (b *block) firstOwned() []float64 { return b.row(1) }
func (b *block) lastOwned() []float64  { return b.row(b.rows()) }
func (b *block) haloAbove() []float64  { return b.row(0) }
func (b *block) haloBelow() []float64  { return b.row(b.rows() + 1) }

// owned returns the block's own rows of the current grid, contiguous.
func (b *block) owned() []float64 { return b.cur[b.n : (b.rows()+1)*b.n] }

// step does one Jacobi sweep: every interior cell becomes the mean of its
// four neighbours in the current grid, always added in the same order
// ((up + down) + (left + right)), so that any decomposition gives
// bit-identical results. The halos must hold the neighbours' current edge
// rows.
func (b *block) step() {
	n := b.n
	for k := 1; k <= b.rows(); k++ {
		if g := b.lo + k - 1; g == 0 || g == n-1 {
			continue // boundary row
		}
		up, mid, down := b.cur[(k-1)*n:k*n], b.cur[k*n:(k+1)*n], b.cur[(k+1)*n:(k+2)*n]
		out := b.next[k*n : (k+1)*n]
		for j := 1; j < n-1; j++ {
			out[j] = 0.25 * ((up[j] + down[j]) + (mid[j-1] + mid[j+1]))
		}
	}
	b.cur, b.next = b.next, b.cur
}

// serial runs the whole grid on one block and returns its rows.
func serial(n, iters int) []float64 {
	b := newBlock(n, 0, n)
	for range iters {
		b.step()
	}
	return b.owned()
}

// maxAbsDiff returns max |a[i]-b[i]|; a and b have the same length.
func maxAbsDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		d := a[i] - b[i]
		if d < 0 {
			d = -d
		}
		if d > m || d != d { // NaN counts as a difference
			m = d
		}
	}
	return m
}

// checkParams says whether an n×n grid can run iters iterations on p ranks.
func checkParams(n, iters, p int) error {
	switch {
	case n < 3:
		return fmt.Errorf("-n %d: the grid needs at least 3 rows and columns (one interior cell)", n)
	case iters < 0:
		return fmt.Errorf("-iters %d: want 0 or more", iters)
	case n < p:
		return fmt.Errorf("-n %d: fewer rows than the %d ranks; each rank needs a row (want -n >= %d)", n, p, p)
	}
	return nil
}
