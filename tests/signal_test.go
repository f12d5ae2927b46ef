package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// TestSignalToGorun: "SIGINT/SIGTERM to gorun reach every rank; the job
// ends" with 130/143, and no rank is left (jobtest's cleanup check).
func TestSignalToGorun(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			t.Parallel()
			p := jobtest.Job{Args: []string{"-np", "3", actor(), "hang"}}.Start(t)
			p.Lines(3, "ready ")
			p.Signal(tt.sig)
			r := p.Wait()
			if r.Code != tt.code {
				t.Errorf("exit %d after %v; want %d; stderr %q", r.Code, tt.sig, tt.code, r.Stderr)
			}
			if strings.Contains(r.Stderr, "gorun: rank") {
				t.Errorf("stderr reports a rank failure; the ranks were stopped by gorun:\n%s", r.Stderr)
			}
		})
	}
}

// TestTimeout: --timeout makes every rank dump its goroutines (SIGQUIT),
// then gorun says so and exits 124.
func TestTimeout(t *testing.T) {
	t.Parallel()
	start := time.Now()
	r := jobtest.Run(t, "-np", "2", "--timeout", "1", actor(), "hang")
	if r.Code != 124 {
		t.Errorf("exit %d; want 124", r.Code)
	}
	if strings.Count(r.Stderr, "goroutine 1 ") < 2 {
		t.Errorf("stderr lacks a goroutine dump of each rank:\n%s", r.Stderr)
	}
	if !strings.HasSuffix(r.Stderr, "gorun: job timed out after 1s\n") {
		t.Errorf("stderr does not end with the timeout line:\n%.2000s", r.Stderr)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("the job ended after %v, before its 1 s timeout", d)
	}
}

// TestKillGorun: "When gorun itself is killed (even SIGKILL), every rank
// ends within 15 s", whether or not the ranks called gorun.Init; the next
// job in the same TMPDIR runs and removes the stale session directory and
// its shared-memory file.
func TestKillGorun(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"init", "noinit"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			args := []string{"-np", "3", actor(), "hang"}
			if mode == "noinit" {
				args = append(args, "-noinit")
			}
			p := jobtest.Job{Args: args, TMPDIR: tmp, Linger: 15 * time.Second}.Start(t)
			p.Lines(3, "ready ")
			p.Signal(syscall.SIGKILL)
			p.Wait()
			// The janitor removes what the job left once its ranks are
			// gone: wait for it to finish too, or the next job and the
			// janitor race for the same stale files (the janitor removed
			// the session directory after it was read below, and so the
			// next job had no reason to remove the test's shared-memory
			// file).
			waitJobGone(t, tmp, "gorun was killed")

			// Whatever the dead job left, plus a shared-memory file of
			// its own, must go with the next job in this TMPDIR.
			stale, _ := os.ReadDir(sessionsDir(tmp))
			session := ""
			if len(stale) == 1 {
				session = stale[0].Name()
			}
			nextJobCleans(t, tmp, session)
		})
	}
}

// sessionsDir is where the jobs of this user put their session
// directories under tmp.
func sessionsDir(tmp string) string { return filepath.Join(tmp, "gorun-"+strconv.Itoa(os.Getuid())) }

// waitJobGone waits up to 15 s for the ranks and the janitor of the jobs
// under tmp to end, and fails the test if they do not (after says what
// happened to the job).
func waitJobGone(t *testing.T, tmp, after string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for (len(jobtest.ProcsUnder(tmp)) > 0 || len(jobtest.JanitorsUnder(tmp)) > 0) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if procs := jobtest.ProcsUnder(tmp); len(procs) > 0 {
		t.Fatalf("ranks %v still run 15 s after %s", procs, after)
	}
	if js := jobtest.JanitorsUnder(tmp); len(js) > 0 {
		t.Fatalf("janitors %v still run 15 s after %s", js, after)
	}
}

// nextJobCleans plants a stale shared-memory segment of session (unless
// session is ""), runs a hello job in tmp, and checks that it ran and
// removed the segment.
func nextJobCleans(t *testing.T, tmp, session string) {
	t.Helper()
	var shm string
	if session != "" {
		shm = "/dev/shm/gorun-" + strconv.Itoa(os.Getuid()) + "-" + session + "-00c0ffee00c0ffee.seg"
		if err := os.WriteFile(shm, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(shm) })
	}
	r := jobtest.Job{Args: []string{"-np", "2", jobtest.Prog("hello")}, TMPDIR: tmp}.Run(t)
	if r.Code != 0 || strings.Count(r.Stdout, "hello from rank") != 2 {
		t.Errorf("next job: exit %d, stdout %q, stderr %q; want 0 and two hellos", r.Code, r.Stdout, r.Stderr)
	}
	if shm != "" {
		if _, err := os.Stat(shm); !os.IsNotExist(err) {
			t.Errorf("stale shared-memory file %s: %v; want it removed", shm, err)
		}
	}
}

// TestKillGorunAndJanitor: SIGKILL to gorun and to its janitor at once, so
// that nobody cleans up after the job: the ranks still end (their
// parent-death signal and lifeline), and the next job in the same TMPDIR
// removes the session directory and the shared-memory segment the dead
// job left. (TestKillGorun lets the janitor clean, and reaches the next
// job's removal only when it races the janitor.)
func TestKillGorunAndJanitor(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	p := jobtest.Job{Args: []string{"-np", "3", actor(), "hang"}, TMPDIR: tmp, Linger: 15 * time.Second}.Start(t)
	p.Lines(3, "ready ")
	js := jobtest.JanitorsUnder(tmp)
	if len(js) != 1 {
		t.Fatalf("janitors of the job: %v; want one", js)
	}
	syscall.Kill(js[0], syscall.SIGKILL)
	p.Signal(syscall.SIGKILL)
	p.Wait()
	waitJobGone(t, tmp, "gorun and its janitor were killed")
	// The last rank to attach unlinks the segment (mpool), so a killed
	// job rarely leaves one; nextJobCleans plants one in the session left.
	session := ""
	if stale, _ := os.ReadDir(sessionsDir(tmp)); len(stale) > 0 {
		session = stale[0].Name()
	} else {
		// The ranks' lifeline closes as gorun exits, before the kernel
		// sends their parent-death signal, and a rank that runs in
		// between removes the session itself (jobenv's launcherGone):
		// on a loaded machine (the whole suite in parallel on two
		// cores) one did, once. Nothing is then left for the next job
		// to clean; it must still run and leave nothing.
		t.Logf("the ranks removed the session after gorun died; the next job has nothing stale to clean")
	}
	nextJobCleans(t, tmp, session)
	jobtest.CheckClean(t, tmp, p.Pid(), 0)
}
