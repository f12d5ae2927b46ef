// Command osu measures gorun's point-to-point performance the way the OSU
// micro-benchmarks do, so that its output can be put side by side with Open
// MPI's by /work/shared/bench/compare.py.
//
// It is the Go twin of the reference program /work/shared/bench/bench.c and
// copies its methods exactly: the modes (lat, bw, bibw, mr, ring, shift, plus
// OSU's multi-pair latency, multi_lat), the size sweep (0 or 1 B, then powers
// of two up to 4 MiB), the iteration and warm-up counts (schedule.go), the
// window of 64 nonblocking operations, a Barrier before each size, page-aligned
// buffers touched before use, and the output format: "# " header lines, then
// "<size> <value>" rows (mr adds messages/s as a third column), or for ring and
// shift one line with us_per_round=<float>. Only rank 0 prints.
//
// Invariants:
//   - Everything the program does with the runtime goes through the public
//     gorun API; it never imports the runtime's internals.
//   - The timed loops allocate nothing of their own: buffers and the request
//     slice are allocated once, before the first size, and reused.
//   - Times come from time.Now, which reads the monotonic clock.
//   - What is printed depends only on the measured times and the options;
//     the formatting (report.go), the CSV and overlay parsing (series.go) and
//     the plot (plot.go) are pure and unit tested without a running job.
//
// Usage:
//
//	gorun -np 2 osu MODE [N] [--csv] [--plot FILE] [--overlay FILE]... [flags]
//	osu plot --overlay FILE [--overlay FILE]... --plot FILE
//
// N is, like bench.c's second argument, the largest message size for the size
// sweeps and the number of rounds for ring and shift. See README.md beside the
// osu directory for how to compare with Open MPI.
package main
