// Command pingpong bounces messages of a few sizes (0 B to 1 MiB) between
// ranks 0 and 1 and prints the average half round trip per size.
//
//	go run ./cmd/gorun -np 2 ./examples/pingpong
//
// It checks what it receives: the byte count, an iteration stamp in the
// first 8 bytes of every message (so a lost, repeated or reordered message is
// caught), and the sender's byte pattern over the whole last message of each
// size. Any mismatch aborts the job with status 1. Ranks 2 and up only join
// and leave. It needs 2 ranks: alone, it says so and exits 1.
//
// For real measurements use bench/osu, which follows the OSU methods.
package main
