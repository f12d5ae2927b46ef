package tests

import (
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// Each contract rule of point-to-point messaging, checked by the p2p rank
// program under the real launcher (see tests/progs/p2p for what each mode
// asserts). Every job must print "MODE ok" and exit 0, and leave nothing.
func TestPointToPointRules(t *testing.T) {
	cases := []struct {
		mode string
		np   int
		mca  []string
	}{
		{"order", 2, nil}, // non-overtaking across eager/rendezvous (single-copy reads by default), mixed sizes
		{"order", 2, []string{"pml_ob1_rget_limit", "0"}},                               // the same through the two-copy pipeline
		{"order", 2, []string{"pml_ob1_rget_limit", "64k", "pml_ob1_rget_max", "256k"}}, // read in a band, pipelined outside it
		{"order", 2, []string{"btl_sm_eager_limit", "128", "btl_sm_max_send_size", "1k"}},
		// Adaptive mode chooses outside the band, so the band is off here.
		{"order", 2, []string{"pml_ob1_rget_limit", "0", "pml_ob1_rget_adaptive", "true", "pml_ob1_rget_explore", "1"}}, // each message read or pipelined, as measured
		{"trunc", 2, []string{"pml_ob1_rget_limit", "0", "pml_ob1_rget_adaptive", "true"}},
		{"flood", 2, []string{"pml_ob1_rget_limit", "0", "pml_ob1_rget_adaptive", "true"}},
		{"wildcard", 4, nil},      // AnySource/AnyTag with Status checked
		{"probe", 2, nil},         // probe then receive
		{"trunc", 2, nil},         // truncation then more traffic
		{"ssend", 2, nil},         // Ssend does not complete before the receive is posted
		{"cancel", 2, nil},        // cancelled receives and send-cancel errors
		{"dup", 3, nil},           // Dup isolation
		{"goroutines", 2, nil},    // many goroutines on one Comm
		{"flood", 2, nil},         // 20 000 small + 200 large unexpected messages
		{"alltoall", 8, nil},      // 8 ranks on 2 cores
		{"args", 2, nil},          // invalid arguments
		{"finalize", 2, nil},      // Finalize idempotent, ErrFinalized after
		{"finalizesends", 1, nil}, // Finalize completes outstanding sends (to self: no barrier progress)
		{"finalizesends", 3, nil}, // ... and to other ranks
	}
	for _, c := range cases {
		name := c.mode
		if c.mca != nil {
			name += "/" + strings.Join(c.mca, "=")
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := []string{"-np", itoa(c.np), "--timeout", "120s"}
			for i := 0; i+1 < len(c.mca); i += 2 {
				args = append(args, "--mca", c.mca[i], c.mca[i+1])
			}
			args = append(args, jobtest.Prog("p2p"), c.mode)
			r := jobtest.Run(t, args...)
			if r.Code != 0 || !strings.Contains(r.Stdout, c.mode+" ok") {
				t.Fatalf("gorun %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
			}
		})
	}
}

// A rank that exits without Finalize: the survivor's pending receive from it
// ends with ErrPeerLost instead of hanging.
func TestPeerLostReceive(t *testing.T) {
	r := jobtest.Run(t, "-np", "2", "--timeout", "60s", jobtest.Prog("p2p"), "peerlost")
	if !strings.Contains(r.Stdout, "peerlost ok") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// The examples run and check their own answers.
func TestExamples(t *testing.T) {
	cases := []struct {
		name string
		np   int
		args []string
		want string
	}{
		{"hello", 4, nil, "hello from rank 3 of 4"},
		{"ring", 4, nil, "OK"},
		{"pingpong", 2, nil, ""},
		{"heat", 4, []string{"-n", "128", "-iters", "200"}, "OK"},
		{"heat", 3, []string{"-n", "600", "-iters", "20"}, "OK"},
		{"heat", 4, []string{"-n", "64", "-iters", "5000", "-tol", "1e-3"}, "OK"}, // stops early: Allreduce convergence test
	}
	for _, c := range cases {
		t.Run(c.name+"/"+itoa(c.np), func(t *testing.T) {
			t.Parallel()
			args := append([]string{"-np", itoa(c.np), "--timeout", "120s", jobtest.Example(c.name)}, c.args...)
			r := jobtest.Run(t, args...)
			if r.Code != 0 || !strings.Contains(r.Stdout, c.want) {
				t.Fatalf("gorun %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
			}
		})
	}
}

// The benchmark's ring runs oversubscribed (8 ranks on 2 cores) and reports.
func TestBenchRingOversubscribed(t *testing.T) {
	r := jobtest.Run(t, "-np", "8", "--timeout", "120s", jobtest.Prog("osu"), "ring", "2000")
	if r.Code != 0 || !strings.Contains(r.Stdout, "us_per_round=") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// The benchmark's goroutine mode runs and reports both figures.
func TestBenchGoroutine(t *testing.T) {
	r := jobtest.Run(t, "-np", "2", "--timeout", "120s", jobtest.Prog("osu"), "goroutine", "2000")
	if r.Code != 0 || !strings.Contains(r.Stdout, "goroutine_p50_us=") || !strings.Contains(r.Stdout, "cpu_speed=") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
