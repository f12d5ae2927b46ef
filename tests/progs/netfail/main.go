// Command netfail is the rank program of the failure tests across hosts:
// every rank streams messages around a ring (to rank+1, from rank-1) until
// an operation fails, then reports how it failed and how long after the
// last success, and exits without Finalize.
//
//	netfail stream [SIZE]   stream until a peer is lost (the test kills a
//	                        rank or cuts a host's link); when the file named
//	                        by NETFAIL_STOP appears, every rank stops after
//	                        the same round, finalizes and says "done"
//	netfail exit CODE       rank 1 exits with CODE at once; the others wait
//	                        for it and report the loss
//	netfail shared          prints "rank R: shared S of N on HOST": its
//	                        place in SplitShared's communicator
//
// Output lines: "rank R: ready" once the ring has run a few rounds, then
// "rank R: peer lost after S s" (ErrPeerLost, S = seconds since the last
// completed round) or "rank R: error: ...". Exit status 0 after a peer
// loss, 3 after any other error.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/gorun-mpi/gorun"
)

func main() {
	world, err := gorun.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "netfail: Init:", err)
		os.Exit(3)
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: netfail stream [SIZE] | exit CODE")
		os.Exit(2)
	}
	r, n := world.Rank(), world.Size()
	size := 256 << 10
	if os.Args[1] == "exit" && r == 1 {
		code, _ := strconv.Atoi(os.Args[2])
		os.Exit(code)
	}
	if os.Args[1] == "shared" {
		sh, err := world.SplitShared(r)
		if err != nil {
			fmt.Printf("rank %d: error: SplitShared: %v\n", r, err)
			os.Exit(3)
		}
		fmt.Printf("rank %d: shared %d of %d on %s\n", r, sh.Rank(), sh.Size(), gorun.ProcessorName())
		if err := gorun.Finalize(); err != nil {
			os.Exit(3)
		}
		return
	}
	if os.Args[1] == "stream" && len(os.Args) > 2 {
		size, _ = strconv.Atoi(os.Args[2])
	}
	size = max(size, 8)
	out, in := make([]byte, size), make([]byte, size)
	last := time.Now()
	stopFile := os.Getenv("NETFAIL_STOP")
	// stop is the round after which every rank stops: rank 0 sets it n
	// rounds ahead when the stop file appears, and every message carries
	// it around the ring, so each rank learns it in time.
	stop := uint64(0)
	for round := uint64(1); stop == 0 || round <= stop; round++ {
		if round == 20 {
			fmt.Printf("rank %d: ready\n", r)
		}
		if r == 0 && stop == 0 && stopFile != "" && round%50 == 0 {
			if _, err := os.Stat(stopFile); err == nil {
				stop = round + uint64(n)
			}
		}
		binary.LittleEndian.PutUint64(out, stop)
		_, err := world.Sendrecv(out, (r+1)%n, 1, in, (r-1+n)%n, 1)
		if s := binary.LittleEndian.Uint64(in); stop == 0 && s != 0 {
			stop = s
		}
		if err != nil {
			if errors.Is(err, gorun.ErrPeerLost) {
				fmt.Printf("rank %d: peer lost after %.1f s: %v\n", r, time.Since(last).Seconds(), err)
				os.Exit(0)
			}
			fmt.Printf("rank %d: error: %v\n", r, err)
			os.Exit(3)
		}
		last = time.Now()
	}
	if err := gorun.Finalize(); err != nil {
		fmt.Printf("rank %d: error: Finalize: %v\n", r, err)
		os.Exit(3)
	}
	fmt.Printf("rank %d: done\n", r)
}
