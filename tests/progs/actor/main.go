// Command actor is the rank program of the job-level tests: one mode per
// behaviour the launcher must handle. Ranks that are not told to act block
// until they are stopped.
//
//	actor env                  print the GORUN_* variables and FOO
//	actor fail R ACTION        rank R does ACTION, the others block:
//	                           exit:N, panic, nilderef, abort:N
//	actor hang [-noinit]       print "ready R PID", block (-noinit: without gorun.Init)
//	actor stdin                print what stdin held
//	actor tag                  print two lines and a last one without newline
//	actor marker DIR           create DIR/marker.R
//	actor lines N              print N lines
//	actor credit N SIZE        rank 0 sends N messages of SIZE bytes to rank 1,
//	                           which receives them 300 ms later
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gorun-mpi/gorun"
)

func main() {
	if len(os.Args) < 2 {
		die("usage: actor MODE [ARGS]")
	}
	mode, args := os.Args[1], os.Args[2:]
	if mode == "hang" && len(args) == 1 && args[0] == "-noinit" {
		fmt.Printf("ready %s %d\n", os.Getenv("GORUN_RANK"), os.Getpid())
		block()
	}
	comm, err := gorun.Init()
	if err != nil {
		die("Init: %v", err)
	}
	rank := comm.Rank()
	switch mode {
	case "env":
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "GORUN_") && !strings.HasPrefix(kv, "GORUN_MCA_RESOLVED=") || strings.HasPrefix(kv, "FOO=") ||
				strings.HasPrefix(kv, "GOMAXPROCS=") {
				fmt.Printf("rank=%d %s\n", rank, kv)
			}
		}
		fmt.Printf("rank=%d runtime.GOMAXPROCS=%d\n", rank, runtime.GOMAXPROCS(0))
		fmt.Printf("rank=%d cpus=%s\n", rank, cpusAllowed())
		if os.Getenv("GORUN_MCA_RESOLVED") != "" {
			fmt.Printf("rank=%d has GORUN_MCA_RESOLVED\n", rank)
		}
	case "fail":
		if len(args) != 2 {
			die("usage: actor fail R ACTION")
		}
		if strconv.Itoa(rank) != args[0] {
			block()
		}
		act(comm, args[1])
	case "hang":
		fmt.Printf("ready %d %d\n", rank, os.Getpid())
		block()
	case "stdin":
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			die("reading stdin: %v", err)
		}
		fmt.Printf("rank %d read %q\n", rank, data)
	case "tag":
		fmt.Fprint(os.Stdout, "out one\nout two\nlast without newline")
		fmt.Fprint(os.Stderr, "err one\n")
	case "lines":
		if len(args) != 1 {
			die("usage: actor lines N")
		}
		n, _ := strconv.Atoi(args[0])
		for i := 0; i < n; i++ {
			fmt.Printf("line %d %d\n", rank, i)
		}
	case "credit":
		credit(comm, args)
	case "marker":
		if len(args) != 1 {
			die("usage: actor marker DIR")
		}
		if err := os.WriteFile(filepath.Join(args[0], "marker."+strconv.Itoa(rank)), nil, 0o644); err != nil {
			die("%v", err)
		}
	default:
		die("unknown mode %q", mode)
	}
	if err := gorun.Finalize(); err != nil {
		die("Finalize: %v", err)
	}
}

// cpusAllowed is the CPUs this process may run on, as the kernel lists
// them (Cpus_allowed_list in /proc/self/status, e.g. "0-3,6").
func cpusAllowed() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		die("%v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	die("no Cpus_allowed_list in /proc/self/status")
	return ""
}

// credit (2 ranks): rank 0 sends N messages of SIZE bytes that pile up
// unmatched while rank 1 sleeps, then rank 1 receives them all.
func credit(comm *gorun.Comm, args []string) {
	rank := comm.Rank()
	if len(args) != 2 {
		die("usage: actor credit N SIZE")
	}
	n, _ := strconv.Atoi(args[0])
	size, _ := strconv.Atoi(args[1])
	buf := make([]byte, size)
	switch rank {
	case 0:
		for i := 0; i < n; i++ {
			if err := comm.Send(buf, 1, 1); err != nil {
				die("Send: %v", err)
			}
		}
	case 1:
		time.Sleep(300 * time.Millisecond) // rank 0's eager sends pile up
		for i := 0; i < n; i++ {
			if _, err := comm.Recv(buf, 0, 1); err != nil {
				die("Recv: %v", err)
			}
		}
		fmt.Printf("received %d\n", n)
	}
}

func act(comm *gorun.Comm, action string) {
	verb, arg, _ := strings.Cut(action, ":")
	n, _ := strconv.Atoi(arg)
	switch verb {
	case "exit":
		os.Exit(n)
	case "panic":
		panic("actor: deliberate panic")
	case "nilderef":
		var p *int
		fmt.Println(*p)
	case "abort":
		comm.Abort(n)
	}
	die("unknown action %q", action)
}

// block waits until the rank is stopped. A timer, not select{}, so the Go
// runtime never reports a deadlock.
func block() {
	for {
		time.Sleep(time.Hour)
	}
}

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "actor: "+format+"\n", args...)
	os.Exit(100)
}
