// Command heat solves the 2-D heat equation by Jacobi iteration on an n×n
// grid split by rows across the ranks, and checks the parallel result
// against a serial run of the same kernel.
//
//	go run ./cmd/gorun -np 4 ./examples/heat -n 256 -iters 500
//	heat: n=256 iters=500 ranks=4 max|diff|=0 OK
//
// Each rank owns a block of consecutive rows (rowRange) plus one halo row on
// each side. Every iteration, neighbours swap edge rows with SendSlice and
// RecvSlice (exchange), then each rank updates its interior cells (step).
// With -tol, every 10 iterations an Allreduce (Max) of each rank's largest
// cell change tells every rank at once whether the grid has converged. At
// the end rank 0 gathers the rows (Gatherv), runs the same kernel serially
// for as many iterations on the whole grid, and compares.
//
// Invariant: step adds the four neighbours in one fixed order, so any
// decomposition must give a bit-identical grid; the check allows no
// difference at all (max|diff| must be 0), and a mismatch exits with
// status 1. Boundary cells are fixed (grid.go, initial).
package main
