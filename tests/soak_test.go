package tests

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

var (
	soakFor     = flag.Duration("soak", 5*time.Second, "how long TestSoak runs the default configuration (e.g. -soak 10m; give go test a -timeout that fits)")
	soakRgetFor = flag.Duration("soak-rget", 0, "how long TestSoak runs with pml_ob1_rget_limit=256k and no rget_max (0: half of -soak)")
	soakSeed    = flag.Uint64("soak-seed", 1, "seed of TestSoak's traffic")
)

// TestSoak runs tests/progs/soak under the real launcher with 4 ranks:
// random traffic over every send and receive call, eager, rendezvous and
// (with pml_ob1_rget_limit) single-copy, every message checked for
// corruption, loss, duplication and overtaking, and flat memory. 5 s by
// default; `go test ./tests -run TestSoak -v -soak 10m -timeout 30m` soaks.
func TestSoak(t *testing.T) {
	rget := *soakRgetFor
	if rget <= 0 {
		rget = *soakFor / 2
	}
	for _, c := range []struct {
		name string
		d    time.Duration
		mca  []string
	}{
		{"default", *soakFor, nil},
		{"rget", rget, []string{"--mca", "pml_ob1_rget_limit", "256k", "--mca", "pml_ob1_rget_max", "0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, code := runSoak(t, c.d, c.mca)
			final := lastWith(out, "soak ok: ")
			if code != 0 || final == "" {
				t.Fatalf("soak %s for %v: exit %d\nstdout:\n%s\nstderr:\n%s", c.name, c.d, code, out, stderr)
			}
			t.Logf("soak %s for %v: %s", c.name, c.d, final)
			for _, want := range []string{"lost=0 ", "corrupted=0 ", "duplicated=0 "} {
				if !strings.Contains(final, want) {
					t.Errorf("final line %q lacks %q", final, want)
				}
			}
		})
	}
}

// TestSoakDetects shows the soak's checks fire: rank 1 breaks one message
// of round 2 and the job must fail, naming the fault.
func TestSoakDetects(t *testing.T) {
	for _, c := range []struct{ inject, want string }{
		{"corrupt", "(corrupted)"},
		{"dup", "soak FAIL rank"}, // caught as a size, probe or sequence mismatch, depending on the receive strategy
		{"drop", "soak FAIL rank"},
	} {
		t.Run(c.inject, func(t *testing.T) {
			out, stderr, code := runSoak(t, 20*time.Second, nil, "-inject", c.inject, "-stall", "5s")
			if code == 0 || strings.Contains(out, "soak ok") || !strings.Contains(stderr, c.want) {
				t.Fatalf("-inject %s: exit %d, want a failure whose stderr holds %q\nstdout:\n%s\nstderr:\n%s", c.inject, code, c.want, out, stderr)
			}
		})
	}
}

// runSoak runs the soak for d with the given gorun options and soak
// arguments, and checks that nothing is left behind. It streams stdout to
// the test log (with -v, progress lines show as they come).
func runSoak(t *testing.T, d time.Duration, gorunOpts []string, soakArgs ...string) (stdout, stderr string, code int) {
	t.Helper()
	limit := 2*d + 2*time.Minute
	if dl, ok := t.Deadline(); ok && time.Until(dl) < limit {
		t.Fatalf("a %v soak needs up to %v but the test binary's -timeout leaves %v: pass a larger -timeout", d, limit, time.Until(dl).Round(time.Second))
	}
	progress := min(30*time.Second, max(time.Second, d/5))
	args := append([]string{"-np", "4", "--timeout", limit.String()}, gorunOpts...)
	args = append(args, jobtest.Prog("soak"), "-duration", d.String(), "-seed", fmt.Sprint(*soakSeed), "-progress", progress.String())
	args = append(args, soakArgs...)

	tmp := t.TempDir()
	cmd := exec.Command(jobtest.Gorun(), args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting gorun: %v", err)
	}
	var outBuf strings.Builder
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		outBuf.WriteString(sc.Text() + "\n")
		t.Log(sc.Text())
	}
	cmd.Wait() // the exit status is the result; --timeout bounds the wait
	jobtest.CheckClean(t, tmp, cmd.Process.Pid, 0)
	return outBuf.String(), errBuf.String(), cmd.ProcessState.ExitCode()
}

// lastWith is the last line of out that starts with prefix, or "".
func lastWith(out, prefix string) string {
	last := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			last = l
		}
	}
	return last
}
