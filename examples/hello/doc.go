// Command hello is the smallest gorun program: every rank says who it is.
//
//	go run ./cmd/gorun -np 4 ./examples/hello
//
// Each rank prints "hello from rank R of N" (in no particular order across
// ranks). Started without gorun, it is rank 0 of 1.
package main
