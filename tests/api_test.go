package tests

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// The API ported programs rely on, checked by the api rank program under
// the real launcher (see tests/progs/api for what each mode asserts).
func TestAPI(t *testing.T) {
	cases := []struct {
		mode string
		np   int
	}{
		{"typed", 3},  // IsendSlice/IrecvSlice/SendrecvSlice on float64, int32, int; Count
		{"names", 3},  // ProcessorName agreed on one machine; Wtime monotonic
		{"mprobe", 2}, // goroutines sharing one source through Mprobe/Improbe: each message once
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			args := []string{"-np", itoa(c.np), "--timeout", "120s", jobtest.Prog("api"), c.mode}
			r := jobtest.Run(t, args...)
			if r.Code != 0 || !strings.Contains(r.Stdout, c.mode+" ok") {
				t.Fatalf("gorun %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
			}
		})
	}
}

// --mca mpi_base_errors_fatal true (MPI_ERRORS_ARE_FATAL): an error the
// program would be handed stops the job instead, with the call's name on
// stderr; default false: the error is returned.
func TestErrorsFatal(t *testing.T) {
	fatal := []string{"--mca", "mpi_base_errors_fatal", "true"}
	cases := []struct {
		name       string
		args       []string
		code       int
		stderr     []string // each must appear
		stdout     string   // must appear ("" : nothing checked)
		notStdout  string   // must not appear
		singletonE []string // run without gorun, with this environment
	}{
		{name: "send to rank 1 of 1 aborts", args: append(fatal, "-np", "1"), code: 1,
			stderr:    []string{"rank 0: gorun.Comm.Send failed", "invalid rank", "aborting the job", "mpi_base_errors_fatal", "exited with status 1"},
			notStdout: "Send returned"},
		{name: "send to rank 2 of 2 aborts", args: append(fatal, "-np", "2"), code: 1,
			stderr:    []string{"rank 0: gorun.Comm.Send failed", "invalid rank"},
			notStdout: "Send returned"},
		{name: "default: the error is returned", args: []string{"-np", "1"}, code: 0,
			stdout: "Send returned: gorun: destination rank 1 is outside 0..0"},
		{name: "singleton from the environment", code: 1,
			singletonE: []string{"GORUN_MCA_mpi_base_errors_fatal=true"},
			stderr:     []string{"singleton: gorun.Comm.Send failed", "invalid rank"}, notStdout: "Send returned"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var r jobtest.Result
			if c.singletonE != nil {
				r = runSingleton(t, c.singletonE, jobtest.Prog("api"), "fatal-send")
			} else {
				args := append(append([]string{"--timeout", "60s"}, c.args...), jobtest.Prog("api"), "fatal-send")
				r = jobtest.Run(t, args...)
			}
			bad := r.Code != c.code || !strings.Contains(r.Stdout, c.stdout) || (c.notStdout != "" && strings.Contains(r.Stdout, c.notStdout))
			for _, s := range c.stderr {
				bad = bad || !strings.Contains(r.Stderr, s)
			}
			if bad {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, c.code, r.Stdout, r.Stderr)
			}
		})
	}

	t.Run("typed helper named", func(t *testing.T) {
		t.Parallel()
		r := jobtest.Run(t, append(fatal, "-np", "1", "--timeout", "60s", jobtest.Prog("api"), "fatal-slice")...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "gorun.SendSlice failed") || !strings.Contains(r.Stderr, "invalid tag") {
			t.Fatalf("exit %d, want 1 and gorun.SendSlice named\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("collective named", func(t *testing.T) {
		t.Parallel()
		r := jobtest.Run(t, append(fatal, "-np", "2", "--timeout", "60s", jobtest.Prog("api"), "fatal-coll")...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "gorun.Bcast failed") || !strings.Contains(r.Stderr, "invalid rank") ||
			strings.Contains(r.Stdout, "Bcast returned") {
			t.Fatalf("exit %d, want 1 and gorun.Bcast named\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("cancel and context end are returned", func(t *testing.T) {
		t.Parallel()
		r := jobtest.Run(t, append(fatal, "-np", "2", "--timeout", "60s", jobtest.Prog("api"), "fatal-exempt")...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "fatal-exempt ok") {
			t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	// Rank 1 exits with 7: gorun's status is 7 whether rank 0 saw
	// ErrPeerLost (and waited for the launcher) or was stopped first.
	t.Run("a peer's exit keeps the peer's status", func(t *testing.T) {
		t.Parallel()
		r := jobtest.Run(t, append(fatal, "-np", "2", "--timeout", "60s", jobtest.Prog("api"), "fatal-peer", "7")...)
		if r.Code != 7 || !strings.Contains(r.Stderr, "exited with status 7") || strings.Contains(r.Stdout, "Recv returned") {
			t.Fatalf("exit %d, want 7 (rank 1's)\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	// Rank 1 exits with 0 without Finalize: no failure ends the job, so
	// rank 0's ErrPeerLost aborts it, with 1.
	t.Run("a peer's exit with 0 leaves the abort to us", func(t *testing.T) {
		t.Parallel()
		r := jobtest.Run(t, append(fatal, "-np", "2", "--timeout", "60s", jobtest.Prog("api"), "fatal-peer", "0")...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "rank 0: gorun.Comm.Recv failed") || !strings.Contains(r.Stderr, "peer lost") ||
			strings.Contains(r.Stdout, "Recv returned") {
			t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
}

// runSingleton runs prog without gorun (a singleton), with env added to
// the test's environment minus any GORUN_ variable, and a 60 s limit.
func runSingleton(t *testing.T, env []string, prog string, args ...string) jobtest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GORUN_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "TMPDIR="+t.TempDir()), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", prog, err)
	}
	return jobtest.Result{Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
}

// A rank that ignores SIGTERM does not hold the job: after another rank
// fails, gorun stops every rank within the contract's 10 s (SIGKILL after
// its grace) and exits with the failed rank's status.
func TestStopRankIgnoringSIGTERM(t *testing.T) {
	t.Parallel()
	p := jobtest.Job{Args: []string{"-np", "3", "--timeout", "60s", jobtest.Prog("api"), "ignoreterm"}}.Start(t)
	p.Lines(1, "ready")
	start := time.Now()
	r := p.Wait()
	endedWithin(t, "rank 0's exit", start, stopBound)
	if r.Code != 3 || !strings.Contains(r.Stderr, "gorun: rank 0 (pid") || !strings.Contains(r.Stderr, "exited with status 3") {
		t.Errorf("exit %d, want 3 (rank 0's)\nstderr:\n%s", r.Code, r.Stderr)
	}
}
