// Command ring passes a token around all ranks: rank 0 sends an integer to
// rank 1, every rank adds 1 and passes it on to rank+1 (mod N), for a few
// laps. Rank 0 checks that the token came back as laps×N and prints it.
//
//	go run ./cmd/gorun -np 4 ./examples/ring
//	ring: token=12 after 3 laps of 4 ranks OK
//
// Every rank also checks the value it receives, so a lost, duplicated or
// reordered message fails the run (exit status 1) at the rank that sees it.
// With one rank (no gorun) rank 0 passes the token to itself.
package main
