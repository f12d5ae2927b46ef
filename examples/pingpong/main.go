package main

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"os"
	"time"

	"github.com/gorun-mpi/gorun"
)

// sizes are the message sizes measured, 0 B to 1 MiB.
var sizes = []int{0, 1, 8, 1 << 10, 4 << 10, 64 << 10, 1 << 20}

// iterations per size: fewer for large messages, to keep the run short.
func iterations(size int) int {
	if size >= 64<<10 {
		return 50
	}
	return 1000
}

const tag = 0

func main() {
	world, err := gorun.Init()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pingpong: init: %v\n", err)
		os.Exit(1)
	}
	rank, size := world.Rank(), world.Size()
	if size < 2 {
		fmt.Fprintf(os.Stderr, "pingpong: needs 2 ranks, got %d (run it as: gorun -np 2 ./examples/pingpong)\n", size)
		_ = gorun.Finalize()
		os.Exit(1)
	}
	if rank < 2 { // ranks 2 and up have nothing to do
		if err := pingPong(world); err != nil {
			fmt.Fprintf(os.Stderr, "pingpong: rank %d: %v\n", rank, err)
			world.Abort(1)
		}
	}
	if err := gorun.Finalize(); err != nil {
		fmt.Fprintf(os.Stderr, "pingpong: rank %d: finalize: %v\n", rank, err)
		os.Exit(1)
	}
}

// pingPong runs every size between ranks 0 and 1; rank 0 prints.
func pingPong(world *gorun.Comm) error {
	rank := world.Rank()
	peer := 1 - rank
	largest := sizes[len(sizes)-1]
	sbuf, rbuf := make([]byte, largest), make([]byte, largest)
	if rank == 0 {
		fmt.Printf("# pingpong: half round trip between ranks 0 and 1\n# %-10s %12s\n", "bytes", "us")
	}
	for _, n := range sizes {
		iters := iterations(n)
		s, r := sbuf[:n], rbuf[:n]
		fill(s, rank, n)
		clear(r)
		start := time.Now()
		for i := range iters {
			stamp(s, rank, i)
			if rank == 0 {
				if err := world.Send(s, peer, tag); err != nil {
					return fmt.Errorf("%d B, iteration %d: send: %w", n, i, err)
				}
			}
			st, err := world.Recv(r, peer, tag)
			if err != nil {
				return fmt.Errorf("%d B, iteration %d: recv: %w", n, i, err)
			}
			if st.Count != n {
				return fmt.Errorf("%d B, iteration %d: received %d bytes, want %d", n, i, st.Count, n)
			}
			if err := checkStamp(r, peer, i); err != nil {
				return fmt.Errorf("%d B, iteration %d: %w", n, i, err)
			}
			if rank == 1 {
				if err := world.Send(s, peer, tag); err != nil {
					return fmt.Errorf("%d B, iteration %d: send: %w", n, i, err)
				}
			}
		}
		elapsed := time.Since(start)
		// The whole last message must be the peer's pattern.
		if err := check(r, peer, n); err != nil {
			return fmt.Errorf("%d B: %w", n, err)
		}
		if rank == 0 {
			fmt.Printf("%-12d %12.2f\n", n, elapsed.Seconds()*1e6/float64(2*iters))
		}
	}
	if rank == 0 {
		fmt.Println("pingpong: contents verified OK")
	}
	return nil
}

// fill writes the pattern of sender rank for messages of n bytes.
func fill(b []byte, rank, n int) {
	for i := range b {
		b[i] = pattern(rank, n, i)
	}
}

// pattern is byte i of a message of n bytes from rank: it differs between
// the two ranks and between sizes, so a message from the wrong side or from
// an earlier size is caught.
func pattern(rank, n, i int) byte { return byte(i*7 + 13*bits.Len(uint(n)) + 101*rank) }

// stamp writes iteration i (and the rank in the top bit) into the first 8
// bytes, so that each message differs from the one before.
func stamp(b []byte, rank, i int) {
	if len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, uint64(i)|uint64(rank)<<63)
	}
}

// checkStamp checks the stamp of iteration i from rank.
func checkStamp(b []byte, rank, i int) error {
	if len(b) < 8 {
		return nil
	}
	want := uint64(i) | uint64(rank)<<63
	if got := binary.LittleEndian.Uint64(b); got != want {
		return fmt.Errorf("message stamp %#x, want %#x (iteration %d from rank %d)", got, want, i, rank)
	}
	return nil
}

// check compares a received message with rank's pattern after the stamp.
func check(b []byte, rank, n int) error {
	start := 0
	if len(b) >= 8 {
		start = 8 // the stamp, checked by checkStamp
	}
	for i := start; i < len(b); i++ {
		if want := pattern(rank, n, i); b[i] != want {
			return fmt.Errorf("byte %d is %#x, want %#x (pattern of rank %d)", i, b[i], want, rank)
		}
	}
	return nil
}
