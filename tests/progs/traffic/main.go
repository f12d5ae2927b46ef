// Command traffic is the rank program of the failure-matrix and scale
// tests: it keeps real messages moving so that a failure can be injected
// in the middle of traffic, and reports on stdout what each rank saw.
//
//	traffic stream SIZE         ring stream of SIZE-byte messages, forever;
//	                            prints "traffic R PID" once well under way
//	traffic early R N           rank R exits with status N before Init; the
//	                            others Init, Barrier, Finalize, print "done R"
//	traffic vanish R N          after a Barrier rank R exits with status N
//	                            without Finalize; the others Recv from it,
//	                            print "peerlost R", Finalize, print
//	                            "finalized R: ERR" and exit 0
//	traffic abort2 A B          after a Barrier rank 1 calls Abort(A) and
//	                            rank 2 Abort(B); the others sit in Recv
//	traffic recv                print "waiting R PID", then Recv forever
//	traffic alltoall K          every pair exchanges K messages of 8 B and
//	                            K of 64 KiB, checked; prints "vmhwm R KB"
//
// In early, vanish and abort2 a rank prints "leaving R PID" just before it
// exits or aborts, so that a test can time the job's end from that event.
//
// An operation that fails with ErrPeerLost in stream mode prints
// "peerlost R" and blocks until gorun stops the rank (gorun, not the
// survivor, must report the rank that was lost). Any other unexpected
// error exits 1 with a message on stderr naming the rank and the call.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gorun-mpi/gorun"
)

var world *gorun.Comm

func main() {
	if len(os.Args) < 2 {
		die("usage: traffic MODE [ARGS]")
	}
	mode, args := os.Args[1], os.Args[2:]
	if mode == "early" {
		early(intArg(args, 0), intArg(args, 1))
		return
	}
	var err error
	if world, err = gorun.Init(); err != nil {
		die("rank %s: Init: %v", os.Getenv("GORUN_RANK"), err)
	}
	switch mode {
	case "stream":
		stream(intArg(args, 0))
	case "vanish":
		vanish(intArg(args, 0), intArg(args, 1))
	case "abort2":
		abort2(intArg(args, 0), intArg(args, 1))
	case "recv":
		fmt.Printf("waiting %d %d\n", world.Rank(), os.Getpid())
		_, err := world.Recv(make([]byte, 8), gorun.AnySource, 99)
		die("rank %d: Recv returned (%v); nobody sends tag 99", world.Rank(), err)
	case "alltoall":
		alltoall(intArg(args, 0))
	default:
		die("unknown mode %q", mode)
	}
}

// stream sends SIZE-byte messages around the ring (rank r to r+1) and
// receives from r-1, a window of messages at a time, until it fails.
func stream(size int) {
	me, n := world.Rank(), world.Size()
	next, prev := (me+1)%n, (me+n-1)%n
	window := max(1, min(16, (16<<20)/max(size, 1)))
	send := make([]byte, size)
	recv := make([][]byte, window)
	for i := range recv {
		recv[i] = make([]byte, size)
	}
	var moved int64
	announced := false
	for iter := 0; ; iter++ {
		reqs := make([]*gorun.Request, 0, 2*window)
		for i := range window {
			r, err := world.Irecv(recv[i], prev, 1)
			check(err, "Irecv")
			reqs = append(reqs, r)
		}
		for range window {
			if size > 0 {
				send[0] = byte(iter)
			}
			r, err := world.Isend(send, next, 1)
			check(err, "Isend")
			reqs = append(reqs, r)
		}
		_, err := gorun.WaitAll(reqs...)
		check(err, "WaitAll")
		for i := range window {
			if size > 0 && recv[i][0] != byte(iter) {
				die("rank %d: message %d of round %d from rank %d starts with %d; want %d", me, i, iter, prev, recv[i][0], byte(iter))
			}
		}
		moved += int64(window * size)
		// Under way: at least 20 rounds and 64 MiB (or 2000 rounds) each way.
		if !announced && iter >= 20 && (moved >= 64<<20 || iter >= 2000) {
			fmt.Printf("traffic %d %d\n", me, os.Getpid())
			announced = true
		}
	}
}

// early: rank r exits with status code before Init; the others try to run
// a whole job.
func early(r, code int) {
	if os.Getenv("GORUN_RANK") == strconv.Itoa(r) {
		fmt.Printf("leaving %d %d\n", r, os.Getpid())
		os.Exit(code)
	}
	var err error
	if world, err = gorun.Init(); err != nil {
		die("rank %s: Init: %v", os.Getenv("GORUN_RANK"), err)
	}
	check(world.Barrier(), "Barrier")
	check(gorun.Finalize(), "Finalize")
	fmt.Printf("done %d\n", world.Rank())
}

// vanish: rank r leaves without Finalize while the others wait on it.
func vanish(r, code int) {
	me := world.Rank()
	check(world.Barrier(), "Barrier")
	if me == r {
		fmt.Printf("leaving %d %d\n", r, os.Getpid())
		os.Exit(code)
	}
	_, err := world.Recv(make([]byte, 8), r, 5)
	if !errors.Is(err, gorun.ErrPeerLost) {
		die("rank %d: Recv from rank %d, which exited: %v; want ErrPeerLost", me, r, err)
	}
	fmt.Printf("peerlost %d\n", me)
	fmt.Printf("finalized %d: %v\n", me, gorun.Finalize())
}

// abort2: ranks 1 and 2 call Abort at the same moment.
func abort2(a, b int) {
	check(world.Barrier(), "Barrier")
	switch world.Rank() {
	case 1:
		fmt.Printf("leaving 1 %d\n", os.Getpid())
		world.Abort(a)
	case 2:
		fmt.Printf("leaving 2 %d\n", os.Getpid())
		world.Abort(b)
	}
	_, err := world.Recv(make([]byte, 8), gorun.AnySource, 99)
	if errors.Is(err, gorun.ErrPeerLost) {
		block()
	}
	die("rank %d: Recv returned (%v); nobody sends tag 99", world.Rank(), err)
}

// alltoall: every ordered pair (src, dst) carries k messages of 8 B (tag 1)
// and k of 64 KiB (tag 2); every byte is checked.
func alltoall(k int) {
	me, n := world.Rank(), world.Size()
	start := time.Now()
	sizes := []int{8, 64 << 10}
	var sends, recvs []*gorun.Request
	type posted struct {
		buf       []byte
		src, size int
	}
	var bufs []posted
	out := make([][]byte, len(sizes))
	for i, size := range sizes {
		out[i] = pattern(size, me)
	}
	for d := 1; d < n; d++ {
		src := (me + n - d) % n
		for i, size := range sizes {
			for range k {
				buf := make([]byte, size)
				r, err := world.Irecv(buf, src, 1+i)
				check(err, "Irecv")
				recvs = append(recvs, r)
				bufs = append(bufs, posted{buf, src, size})
			}
		}
	}
	for d := 1; d < n; d++ {
		dst := (me + d) % n
		for i := range sizes {
			for range k {
				r, err := world.Isend(out[i], dst, 1+i)
				check(err, "Isend")
				sends = append(sends, r)
			}
		}
	}
	sts, err := gorun.WaitAll(recvs...)
	check(err, "WaitAll(receives)")
	for i, st := range sts {
		p := bufs[i]
		if st.Source != p.src || st.Count != p.size || !bytes.Equal(p.buf, pattern(p.size, p.src)) {
			die("rank %d: message from rank %d: status %+v, content ok %v; want %d bytes of rank %d's pattern",
				me, p.src, st, bytes.Equal(p.buf, pattern(p.size, p.src)), p.size, p.src)
		}
	}
	_, err = gorun.WaitAll(sends...)
	check(err, "WaitAll(sends)")
	check(world.Barrier(), "Barrier")
	elapsed := time.Since(start)
	check(gorun.Finalize(), "Finalize")
	fmt.Printf("vmhwm %d %d\n", me, vmHWM())
	if me == 0 {
		fmt.Printf("alltoall ok %d ranks %d messages per pair in %v\n", n, 2*k, elapsed.Round(time.Millisecond))
	}
}

// pattern is the content of every message of size bytes from src.
func pattern(size, src int) []byte {
	b := make([]byte, size)
	for j := range b {
		b[j] = byte(j*7 + src*13 + 1)
	}
	return b
}

// vmHWM is the process's peak resident set size in KiB (0 if unknown).
func vmHWM() int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb
		}
	}
	return 0
}

// check exits on err; ErrPeerLost is reported on stdout and the rank
// waits for gorun to stop it.
func check(err error, what string) {
	if err == nil {
		return
	}
	if errors.Is(err, gorun.ErrPeerLost) {
		fmt.Printf("peerlost %d\n", world.Rank())
		block()
	}
	die("rank %d: %s: %v", world.Rank(), what, err)
}

func intArg(args []string, i int) int {
	if i >= len(args) {
		die("missing argument %d", i+1)
	}
	n, err := strconv.Atoi(args[i])
	if err != nil {
		die("argument %q: %v", args[i], err)
	}
	return n
}

// block waits until the rank is stopped (a timer, so the Go runtime never
// reports a deadlock).
func block() {
	for {
		time.Sleep(time.Hour)
	}
}

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "traffic: "+format+"\n", args...)
	os.Exit(1)
}
