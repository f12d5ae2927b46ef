package launcher

import (
	"fmt"
	"github.com/gorun-mpi/gorun/jobenv"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// envHelper makes the test binary act as a rank program instead of
// running tests: its value is the mode (see helperMain).
const envHelper = "LAUNCHER_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(envHelper); ok {
		helperMain(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperMain is a rank program. Modes:
//
//	lifeline        jobenv.Watch, print "ready", block
//	abort:N         Abort(N)
//	fail:R:N        rank R exits with N, the others block
//	echo            rank 0 copies stdin to stdout; every rank prints
//	                "out <rank>" and, without newline, "tail" on stderr
//	hang            block
//	marker:DIR      create DIR/marker.<rank>
func helperMain(mode string) {
	rank, _ := strconv.Atoi(os.Getenv(jobenv.EnvRank))
	verb, arg, _ := strings.Cut(mode, ":")
	switch verb {
	case "lifeline":
		if err := jobenv.Watch(); err != nil {
			fmt.Println("Watch:", err)
			os.Exit(100)
		}
		fmt.Println("ready")
		block()
	case "abort":
		n, _ := strconv.Atoi(arg)
		jobenv.Abort(n)
	case "fail":
		r, n, _ := strings.Cut(arg, ":")
		if r == strconv.Itoa(rank) {
			code, _ := strconv.Atoi(n)
			os.Exit(code)
		}
		block()
	case "echo":
		if rank == 0 {
			io.Copy(os.Stdout, os.Stdin)
		}
		fmt.Printf("out %d\n", rank)
		fmt.Fprint(os.Stderr, "tail")
	case "hang":
		block()
	case "marker":
		os.WriteFile(filepath.Join(arg, "marker."+strconv.Itoa(rank)), nil, 0o600)
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		os.Exit(100)
	}
}

func block() {
	for {
		time.Sleep(time.Hour)
	}
}
