package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gorun-mpi/gorun"
)

// Tags of the halo messages.
const (
	tagDown = 1 // an edge row going to rank+1
	tagUp   = 2 // an edge row going to rank-1
)

// convergeEvery is how often (in iterations) -tol is tested: the test is an
// Allreduce, a synchronization of every rank.
const convergeEvery = 10

func main() {
	n := flag.Int("n", 256, "grid size: n×n cells, boundary included")
	iters := flag.Int("iters", 500, "Jacobi iterations (at most, with -tol)")
	tol := flag.Float64("tol", 0, "stop once no cell changes by more than this in an iteration (tested with an Allreduce every 10 iterations; 0: run every iteration)")
	flag.Parse()

	world, err := gorun.Init()
	if err != nil {
		fmt.Fprintf(os.Stderr, "heat: init: %v\n", err)
		os.Exit(1)
	}
	rank, size := world.Rank(), world.Size()
	if err := checkParams(*n, *iters, size); err != nil {
		if rank == 0 {
			fmt.Fprintf(os.Stderr, "heat: %v\n", err)
		}
		_ = gorun.Finalize()
		os.Exit(2)
	}
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "heat: rank %d: %v\n", rank, err)
		world.Abort(1)
	}

	lo, hi := rowRange(*n, size, rank)
	b := newBlock(*n, lo, hi)
	done := *iters // iterations run
	var before []float64
	for it := range *iters {
		if err := exchange(world, b); err != nil {
			fail(fmt.Errorf("iteration %d: %w", it, err))
		}
		test := *tol > 0 && (it+1)%convergeEvery == 0
		if test {
			before = append(before[:0], b.owned()...)
		}
		b.step()
		if test {
			// Every rank gets the same largest change, so all stop together.
			change := []float64{maxAbsDiff(b.owned(), before)}
			if err := gorun.Allreduce(world, nil, change, gorun.Max[float64]); err != nil {
				fail(fmt.Errorf("iteration %d: convergence test: %w", it, err))
			}
			if change[0] <= *tol {
				done = it + 1
				break
			}
		}
	}

	grid, err := gather(world, b)
	if err != nil {
		fail(err)
	}
	if rank == 0 {
		diff := maxAbsDiff(grid, serial(*n, done))
		verdict := "OK"
		if diff != 0 {
			verdict = "MISMATCH with the serial run"
		}
		fmt.Printf("heat: n=%d iters=%d ranks=%d max|diff|=%g %s\n", *n, done, size, diff, verdict)
		if diff != 0 {
			world.Abort(1)
		}
	}
	if err := gorun.Finalize(); err != nil {
		fmt.Fprintf(os.Stderr, "heat: rank %d: finalize: %v\n", rank, err)
		os.Exit(1)
	}
}

// exchange fills b's halo rows with the neighbours' edge rows and sends them
// b's own. Rows first travel down (to rank+1), then up. In each direction
// even ranks send before they receive and odd ranks receive before they
// send, so the blocking calls cannot deadlock even when rows are too long to
// be sent eagerly.
func exchange(c *gorun.Comm, b *block) error {
	rank := c.Rank()
	above, below := rank-1, rank+1 // neighbours; -1 or Size() means none
	if err := shift(c, b.lastOwned(), below, b.haloAbove(), above, tagDown, rank%2 == 0); err != nil {
		return err
	}
	return shift(c, b.firstOwned(), above, b.haloBelow(), below, tagUp, rank%2 == 0)
}

// shift sends row to rank to and receives halo from rank from (either may be
// outside the world: no such neighbour), in the order sendFirst gives.
func shift(c *gorun.Comm, row []float64, to int, halo []float64, from, tag int, sendFirst bool) error {
	size := c.Size()
	send := func() error {
		if to < 0 || to >= size {
			return nil
		}
		if err := gorun.SendSlice(c, row, to, tag); err != nil {
			return fmt.Errorf("send row to rank %d: %w", to, err)
		}
		return nil
	}
	recv := func() error {
		if from < 0 || from >= size {
			return nil
		}
		st, err := gorun.RecvSlice(c, halo, from, tag)
		if err != nil {
			return fmt.Errorf("receive row from rank %d: %w", from, err)
		}
		if st.Count != 8*len(halo) {
			return fmt.Errorf("row from rank %d: %d bytes, want %d", from, st.Count, 8*len(halo))
		}
		return nil
	}
	if sendFirst {
		if err := send(); err != nil {
			return err
		}
		return recv()
	}
	if err := recv(); err != nil {
		return err
	}
	return send()
}

// gather collects every rank's rows on rank 0 (Gatherv: ranks own
// different numbers of rows), which returns the whole grid; other ranks
// return nil.
func gather(c *gorun.Comm, b *block) ([]float64, error) {
	rank, size, n := c.Rank(), c.Size(), b.n
	var grid []float64
	var counts, displs []int
	if rank == 0 {
		grid = make([]float64, n*n)
		for r := 0; r < size; r++ {
			lo, hi := rowRange(n, size, r)
			counts = append(counts, (hi-lo)*n)
			displs = append(displs, lo*n)
		}
	}
	if err := gorun.Gatherv(c, b.owned(), grid, counts, displs, 0); err != nil {
		return nil, fmt.Errorf("gathering the rows on rank 0: %w", err)
	}
	return grid, nil
}
