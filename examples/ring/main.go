package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gorun-mpi/gorun"
)

const tag = 0

func main() {
	laps := flag.Int("laps", 3, "times the token goes around the ring")
	flag.Parse()

	world, err := gorun.Init()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ring: init: %v\n", err)
		os.Exit(1)
	}
	rank, size := world.Rank(), world.Size()
	if *laps < 1 {
		if rank == 0 {
			fmt.Fprintf(os.Stderr, "ring: -laps %d: want 1 or more\n", *laps)
		}
		_ = gorun.Finalize()
		os.Exit(2)
	}
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "ring: rank %d: "+format+"\n", append([]any{rank}, args...)...)
		world.Abort(1)
	}

	right, left := (rank+1)%size, (rank+size-1)%size
	token := []int64{0}
	// recv takes the token from the left and checks it is want.
	recv := func(lap int, want int64) {
		st, err := gorun.RecvSlice(world, token, left, tag)
		if err != nil {
			fail("lap %d: receive from rank %d: %v", lap, left, err)
		}
		if st.Count != 8 || st.Source != left || token[0] != want {
			fail("lap %d: got token %d (%d bytes from rank %d), want %d (8 bytes from rank %d)",
				lap, token[0], st.Count, st.Source, want, left)
		}
	}
	send := func(lap int) {
		if err := gorun.SendSlice(world, token, right, tag); err != nil {
			fail("lap %d: send to rank %d: %v", lap, right, err)
		}
	}
	for lap := range *laps {
		if rank == 0 {
			send(lap)
			recv(lap, arriving(lap, rank, size))
			token[0]++
		} else {
			recv(lap, arriving(lap, rank, size))
			token[0]++
			send(lap)
		}
	}

	if rank == 0 {
		want := final(*laps, size)
		if token[0] != want {
			fail("token=%d after %d laps of %d ranks, want %d", token[0], *laps, size, want)
		}
		fmt.Printf("ring: token=%d after %d laps of %d ranks OK\n", token[0], *laps, size)
	}
	if err := gorun.Finalize(); err != nil {
		fmt.Fprintf(os.Stderr, "ring: rank %d: finalize: %v\n", rank, err)
		os.Exit(1)
	}
}

// arriving is the token that rank receives in lap (from 0) of a ring of size
// ranks: every lap adds size, and in this lap the ranks before it (rank 0
// last) have each added 1.
func arriving(lap, rank, size int) int64 {
	before := rank - 1 // ranks 1..rank-1 have added 1; rank 0 adds at the end of a lap
	if rank == 0 {
		before = size - 1
	}
	return int64(lap)*int64(size) + int64(before)
}

// final is the token rank 0 holds after laps laps: every rank added 1 each lap.
func final(laps, size int) int64 { return int64(laps) * int64(size) }
