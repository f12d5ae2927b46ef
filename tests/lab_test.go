package tests

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/internal/lab"
	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// newSlurmLab is a 2-host namespace lab with Slurm up (skips where it
// cannot run: not root, no namespaces, Slurm not installable).
func newSlurmLab(t *testing.T) (*lab.Lab, *lab.Slurm) {
	t.Helper()
	l := lab.New(t, 2, filepath.Dir(jobtest.Gorun()))
	return l, l.StartSlurm(t)
}

// srun runs `srun ARGS` from h1 and returns its output and exit code.
func srun(t *testing.T, s *lab.Slurm, timeout time.Duration, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return outputAndCode(s.Cmd(ctx, 1, "srun", args...))
}

// outputAndCode runs cmd and returns its combined output and exit code (-1
// when it did not start or was killed by a signal).
func outputAndCode(cmd *exec.Cmd) (string, int) {
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		code = -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
	}
	return string(out), code
}

// The done-when: srun --mpi=pmi2 -N2 -n4 of the ring example on two
// namespace hosts (PMI-2 wire-up, TCP between the hosts), then the p2p rules.
func TestSlurmPMI2(t *testing.T) {
	_, s := newSlurmLab(t)
	out, code := srun(t, s, 90*time.Second, "--mpi=pmi2", "-N2", "-n4", jobtest.Example("ring"))
	if code != 0 || !strings.Contains(out, "OK") {
		t.Fatalf("srun ring: exit %d\n%s\n%s", code, out, s.Logs())
	}
	// The two ranks of each host share a segment; each rank reaches the
	// other host's two ranks over TCP.
	out, code = srun(t, s, 90*time.Second, "--export=ALL,GORUN_MCA_btl_base_verbose=debug", "--mpi=pmi2", "-N2", "-n4", jobtest.Example("ring"))
	if code != 0 || !strings.Contains(out, "OK") || strings.Count(out, "sm ready") != 4 || strings.Count(out, "tcp connected: rank=") != 4 ||
		strings.Count(out, "peers=2") != 4 {
		t.Fatalf("srun ring with debug logs: exit %d; want 4 sm modules and 4 tcp modules of 2 peers each:\n%s", code, out)
	}
	// SplitShared groups the ranks by host (ranks 0,1 on h1; 2,3 on h2).
	out, code = srun(t, s, 90*time.Second, "--mpi=pmi2", "-N2", "-n4", jobtest.Prog("netfail"), "shared")
	for r, want := range []string{"rank 0: shared 0 of 2 on h1", "rank 1: shared 1 of 2 on h1", "rank 2: shared 0 of 2 on h2", "rank 3: shared 1 of 2 on h2"} {
		if !strings.Contains(out, want) {
			t.Errorf("srun netfail shared: rank %d did not say %q (exit %d):\n%s", r, want, code, out)
		}
	}
	// One host: shared memory only.
	out, code = srun(t, s, 90*time.Second, "--export=ALL,GORUN_MCA_btl_base_verbose=debug", "--mpi=pmi2", "-N1", "-n2", jobtest.Example("ring"))
	if code != 0 || !strings.Contains(out, "OK") || strings.Count(out, "sm ready") != 2 || strings.Contains(out, "tcp") {
		t.Fatalf("srun -N1 -n2 ring: exit %d; want sm only:\n%s", code, out)
	}
	for _, mode := range []string{"order", "wildcard", "probe", "ssend", "dup", "flood", "finalize"} {
		out, code := srun(t, s, 120*time.Second, "--mpi=pmi2", "-N2", "-n4", jobtest.Prog("p2p"), mode)
		if code != 0 || !strings.Contains(out, mode+" ok") {
			t.Errorf("srun p2p %s: exit %d\n%s", mode, code, out)
		}
	}
	// Without PMI, a multi-task step cannot wire up: a clear error.
	out, code = srun(t, s, 60*time.Second, "--mpi=none", "-N2", "-n2", jobtest.Example("ring"))
	if code == 0 || !strings.Contains(out, "use srun --mpi=pmi2") {
		t.Errorf("srun --mpi=none: exit %d; want a failure naming --mpi=pmi2:\n%s", code, out)
	}
}

// labJob is an srun running on the lab, its output read line by line.
type labJob struct {
	t      *testing.T
	cmd    *exec.Cmd
	cancel context.CancelFunc
	lines  chan string
	mu     sync.Mutex
	out    strings.Builder
	done   chan struct{}
}

// startSrun starts `srun ARGS` from h1 with the extra environment env
// (passed on to the ranks), bounded by 3 minutes.
func startSrun(t *testing.T, s *lab.Slurm, env []string, args ...string) *labJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := s.Cmd(ctx, 1, "env", append(append(env, "srun"), args...)...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	j := &labJob{t: t, cmd: cmd, cancel: cancel, lines: make(chan string, 1000), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-j.done })
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			j.mu.Lock()
			j.out.WriteString(sc.Text() + "\n")
			j.mu.Unlock()
			select {
			case j.lines <- sc.Text():
			default:
			}
		}
	}()
	go func() {
		cmd.Wait()
		pw.Close()
		close(j.done)
	}()
	return j
}

func (j *labJob) output() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.out.String()
}

// expect waits for count lines containing substr (and any of the ranks in
// ranks, when given), within timeout; it returns the time the last came.
func (j *labJob) expect(substr string, count int, timeout time.Duration) time.Time {
	j.t.Helper()
	deadline := time.After(timeout)
	for seen := 0; seen < count; {
		select {
		case l := <-j.lines:
			if strings.Contains(l, substr) {
				seen++
			}
		case <-deadline:
			j.t.Fatalf("%d of %d lines with %q within %v; output so far:\n%s", seen, count, substr, timeout, j.output())
		}
	}
	return time.Now()
}

// wait waits for srun to end and returns its exit code.
func (j *labJob) wait(timeout time.Duration) int {
	j.t.Helper()
	select {
	case <-j.done:
	case <-time.After(timeout):
		j.t.Fatalf("srun did not end within %v; output:\n%s", timeout, j.output())
	}
	return j.cmd.ProcessState.ExitCode()
}

// noneLeft fails when a netfail rank survives on any host.
func noneLeft(t *testing.T, l *lab.Lab) {
	t.Helper()
	for i := 1; i <= l.N; i++ {
		for k := 0; k < 100 && len(l.ProcsNamed(i, "netfail")) > 0; k++ {
			time.Sleep(50 * time.Millisecond)
		}
		if p := l.ProcsNamed(i, "netfail"); len(p) > 0 {
			t.Errorf("netfail ranks %v left on %s", p, l.Host(i))
		}
	}
}

// Failures across hosts, under srun --mpi=pmi2 -N2 -n4 (ranks 0,1 on h1 and
// 2,3 on h2), with btl_tcp_timeout=3: each ends as the contract says and
// leaves nothing; the survivors' detection times are logged.
func TestSlurmFailures(t *testing.T) {
	l, s := newSlurmLab(t)
	const timeout = 3 // btl_tcp_timeout, seconds
	env := []string{"GORUN_MCA_btl_tcp_timeout=" + itoa(timeout)}
	prog := jobtest.Prog("netfail")
	base := []string{"--mpi=pmi2", "-N2", "-n4", prog}

	t.Run("kill9", func(t *testing.T) {
		j := startSrun(t, s, env, append(base, "stream")...)
		j.expect("ready", 4, time.Minute)
		pids := l.ProcsNamed(2, "netfail")
		if len(pids) == 0 {
			t.Fatal("no rank found on h2")
		}
		t0 := time.Now()
		syscall.Kill(pids[0], syscall.SIGKILL)
		t1 := j.expect("peer lost", 3, time.Minute)
		code := j.wait(time.Minute)
		t.Logf("kill -9 of a rank on h2: 3 survivors reported ErrPeerLost after %v; srun exit %d", t1.Sub(t0).Round(time.Millisecond), code)
		if code == 0 {
			t.Errorf("srun exit 0 after a rank was killed:\n%s", j.output())
		}
		noneLeft(t, l)
	})

	t.Run("exit", func(t *testing.T) {
		t0 := time.Now()
		j := startSrun(t, s, env, append(base, "exit", "5")...)
		t1 := j.expect("peer lost", 3, time.Minute)
		code := j.wait(time.Minute)
		t.Logf("rank 1 exit 5: survivors reported ErrPeerLost %v after the start; srun exit %d", t1.Sub(t0).Round(time.Millisecond), code)
		if code != 5 {
			t.Errorf("srun exit %d; want 5 (the failed rank's status):\n%s", code, j.output())
		}
		noneLeft(t, l)
	})

	t.Run("linkdown", func(t *testing.T) {
		j := startSrun(t, s, env, append(base, "stream")...)
		j.expect("ready", 4, time.Minute)
		t0 := time.Now()
		if err := l.LinkDown(2); err != nil {
			t.Fatal(err)
		}
		// The ranks on h1 see the partition through their own sockets
		// (h2's output cannot reach srun until the link is back).
		t1 := j.expect("peer lost", 2, time.Duration(10*timeout)*time.Second)
		t.Logf("h2's link down mid-transfer: the 2 ranks on h1 reported ErrPeerLost after %v (btl_tcp_timeout=%ds)", t1.Sub(t0).Round(time.Millisecond), timeout)
		if err := l.LinkUp(2); err != nil {
			t.Fatal(err)
		}
		code := j.wait(2 * time.Minute)
		t.Logf("srun exit %d after the link came back", code)
		noneLeft(t, l)
	})

	t.Run("strangers", func(t *testing.T) {
		stop := filepath.Join(l.Dir, "stop")
		j := startSrun(t, s, append(env, "NETFAIL_STOP="+stop), append(base, "stream", "4096")...)
		j.expect("ready", 4, time.Minute)
		pids := l.ProcsNamed(2, "netfail")
		if len(pids) == 0 {
			t.Fatal("no rank found on h2")
		}
		var addr string
		for _, a := range lab.Listening(pids[0]) {
			if strings.HasPrefix(a, l.IP(2)+":") {
				addr = a
			}
		}
		if addr == "" {
			t.Fatalf("rank pid %d listens on %v; none on %s", pids[0], lab.Listening(pids[0]), l.IP(2))
		}
		hello := make([]byte, 64) // a well-formed hello whose MAC proves nothing
		copy(hello, "GRTCP\x00\x01\x00")
		hello[12] = 2
		for _, payload := range [][]byte{[]byte("GET / HTTP/1.0\r\n\r\n garbage garbage garbage garbage garbage"), hello, hello} {
			c, err := l.Dial(1, addr, 5*time.Second)
			if err != nil {
				t.Fatalf("stranger connecting to %s: %v", addr, err)
			}
			ch := make([]byte, 24)
			c.SetDeadline(time.Now().Add(10 * time.Second))
			io.ReadFull(c, ch)
			c.Write(payload)
			rest, _ := io.ReadAll(c) // the rank closes it
			c.Close()
			if len(rest) > 0 {
				t.Errorf("the rank answered a stranger with %d bytes", len(rest))
			}
		}
		if err := os.WriteFile(stop, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		j.expect("done", 4, time.Minute)
		if code := j.wait(time.Minute); code != 0 {
			t.Errorf("srun exit %d after the strangers; want 0:\n%s", code, j.output())
		}
		if n := strings.Count(j.output(), "did not authenticate"); n != 3 {
			t.Errorf("%d warnings about dropped strangers; want 3:\n%s", n, j.output())
		}
		noneLeft(t, l)
	})
}
