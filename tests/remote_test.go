package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// Jobs across "hosts" reached through a launch agent that runs the command
// on this machine (any name but this machine's is a remote host to gorun).
// These check the launcher's side — helpers, placement, output, exit
// rules, signals, cleanup — without root; the namespace lab tests
// (lab_test.go) run the same across real network namespaces.

// fakeAgent writes a launch agent that drops the host name and runs the
// command here, as ssh would run it there, and returns the --mca options
// that select it.
func fakeAgent(t *testing.T) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent")
	script := "#!/bin/sh\nhost=$1; shift\nexec sh -c \"$*\"\n"
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return []string{"--mca", "plm_ssh_agent", path}
}

// remoteJob is a job on fake hosts with its own helper cache.
func remoteJob(t *testing.T, args ...string) jobtest.Job {
	return jobtest.Job{Args: append(fakeAgent(t), args...), Env: cacheEnv(t.TempDir())}
}

// goCache is the go command's build cache, kept when a test moves
// XDG_CACHE_HOME (where gorun's hosts cache what it brings).
var goCache = sync.OnceValue(func() string {
	out, _ := exec.Command("go", "env", "GOCACHE").Output()
	return strings.TrimSpace(string(out))
})

// cacheEnv points the hosts' cache at dir, keeping the go build cache.
func cacheEnv(dir string) []string {
	return []string{"XDG_CACHE_HOME=" + dir, "GOCACHE=" + goCache()}
}

// TestRemoteEnvAndOutput: ranks are placed by slots across hosts, see
// their node and local rank, and their output comes back tagged.
func TestRemoteEnvAndOutput(t *testing.T) {
	t.Parallel()
	r := remoteJob(t, "-np", "5", "--host", "ha:2,hb:2", "--tag-output", "sh", "-c",
		`echo "node=$GORUN_NODE local=$GORUN_LOCAL_RANK/$GORUN_LOCAL_SIZE size=$GORUN_SIZE pmi=$PMI_RANK/$PMI_SIZE"; printf last`).Run(t)
	want := map[string]bool{
		"[0] node=0 local=0/3 size=5 pmi=0/5": true, "[1] node=0 local=1/3 size=5 pmi=1/5": true,
		"[2] node=0 local=2/3 size=5 pmi=2/5": true, // -np above the slots: a second pass
		"[3] node=1 local=0/2 size=5 pmi=3/5": true, "[4] node=1 local=1/2 size=5 pmi=4/5": true,
	}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if strings.HasSuffix(l, "] last") {
			continue
		}
		if !want[l] {
			t.Errorf("unexpected line %q", l)
		}
		delete(want, l)
	}
	if r.Code != 0 || len(want) != 0 || strings.Count(r.Stdout, "] last\n") != 5 {
		t.Errorf("exit %d, missing %v, stdout %q, stderr %q", r.Code, want, r.Stdout, r.Stderr)
	}
}

// TestRemoteExitStatus: a rank failing on a remote host decides the status,
// and the failure line names its host; the others are stopped.
func TestRemoteExitStatus(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, script string
		code         int
		line         string
	}{
		{"exit", `[ $GORUN_RANK = 3 ] && exit 7; exec sleep 60`, 7, `gorun: rank 3 \(pid \d+\) exited with status 7\ngorun: host hb ran rank 3\n`},
		{"signal", `[ $GORUN_RANK = 2 ] && kill -9 $$; exec sleep 60`, 137, `gorun: rank 2 \(pid \d+\) killed by signal SIGKILL\ngorun: host hb ran rank 2\n`},
		{"local host", `[ $GORUN_RANK = 0 ] && exit 3; exec sleep 60`, 3, `gorun: rank 0 \(pid \d+\) exited with status 3\ngorun: host localhost ran rank 0\n`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := remoteJob(t, "-np", "4", "--host", "localhost:2,hb:2", "sh", "-c", tt.script).Run(t)
			if r.Code != tt.code || !regexp.MustCompile(tt.line).MatchString(r.Stderr) || strings.Count(r.Stderr, "gorun: rank") != 1 {
				t.Errorf("exit %d, stderr %q; want %d and one line matching %s", r.Code, r.Stderr, tt.code, tt.line)
			}
		})
	}
}

// TestRemoteAgentFails: a host whose agent fails (as ssh does, exit 255)
// is a startup error naming the host and the agent's message; nothing
// runs anywhere.
func TestRemoteAgentFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	os.WriteFile(agent, []byte("#!/bin/sh\nif [ \"$1\" = down ]; then echo \"ssh: connect to host down port 22: No route to host\" >&2; exit 255; fi\nshift; exec sh -c \"$*\"\n"), 0o700)
	r := jobtest.Job{Args: []string{"--mca", "plm_ssh_agent", agent, "-np", "2", "--host", "up,down", "sh", "-c", "touch " + dir + "/ran.$GORUN_RANK"},
		Env: cacheEnv(t.TempDir())}.Run(t)
	if r.Code != 2 || !strings.Contains(r.Stderr, "gorun: host down: cannot start gorun's helper there through the launch agent (it exited with status 255: ssh: connect to host down port 22: No route to host)") {
		t.Errorf("exit %d, stderr %q; want 2 and the host's failure", r.Code, r.Stderr)
	}
	if m, _ := filepath.Glob(dir + "/ran.*"); len(m) != 0 {
		t.Errorf("ranks ran: %v", m)
	}
}

// TestRemoteProgramNotThere: an executable path that does not exist on a
// host is a startup error naming the host.
func TestRemoteProgramNotThere(t *testing.T) {
	t.Parallel()
	// The agent runs the command in a mount namespace where the program is gone.
	prog := filepath.Join(t.TempDir(), "prog")
	os.WriteFile(prog, []byte("#!/bin/sh\necho ran\n"), 0o755)
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	os.WriteFile(agent, []byte("#!/bin/sh\nshift; rm -f "+prog+"; exec sh -c \"$*\"\n"), 0o700)
	r := jobtest.Job{Args: []string{"--mca", "plm_ssh_agent", agent, "-np", "2", "--host", "hx", prog},
		Env: cacheEnv(t.TempDir())}.Run(t)
	if r.Code != 2 || !strings.Contains(r.Stderr, "gorun: host hx: program "+prog+" not found on host") || !strings.Contains(r.Stderr, "--preload") {
		t.Errorf("exit %d, stderr %q; want 2 and the program missing on hx", r.Code, r.Stderr)
	}
	// With --preload gorun brings it: the ranks run the host's cached copy.
	os.WriteFile(prog, []byte("#!/bin/sh\necho \"ran $0\"\n"), 0o755)
	cache := t.TempDir()
	r = jobtest.Job{Args: append(fakeAgent(t), "-np", "2", "--host", "hx", "--preload", prog), Env: cacheEnv(cache)}.Run(t)
	if want := "ran " + filepath.Join(cache, "gorun", "prog-"); r.Code != 0 || strings.Count(r.Stdout, want) != 2 {
		t.Errorf("--preload: exit %d, stdout %q, stderr %q; want 0 and two runs of %s...", r.Code, r.Stdout, r.Stderr, want)
	}
}

// TestRemoteBuiltProgram: a program gorun builds is brought to the remote
// hosts, cached by content hash, and found in the cache the next time.
func TestRemoteBuiltProgram(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	args := append(fakeAgent(t), "-np", "2", "--host", "ha:1,hb:1", "./tests/progs/actor", "hang", "-noinit")
	for run := range 2 {
		p := jobtest.Job{Args: args, Dir: jobtest.ModuleRoot(), Env: cacheEnv(cache)}.Start(t)
		p.Lines(2, "ready ")
		p.Signal(syscall.SIGTERM)
		if r := p.Wait(); r.Code != 143 {
			t.Errorf("run %d: exit %d, stderr %q; want 143", run, r.Code, r.Stderr)
		}
		progs, _ := filepath.Glob(filepath.Join(cache, "gorun", "prog-*"))
		helpers, _ := filepath.Glob(filepath.Join(cache, "gorun", "helper-*"))
		if len(progs) != 1 || len(helpers) != 1 {
			t.Errorf("run %d: cache holds programs %v and helpers %v; want one of each", run, progs, helpers)
		}
	}
}

// TestRemoteStdin: gorun's stdin reaches rank 0 on its remote host.
func TestRemoteStdin(t *testing.T) {
	t.Parallel()
	j := remoteJob(t, "-np", "2", "--host", "ha:1,hb:1", "sh", "-c", `echo "rank $GORUN_RANK read: $(cat)"`)
	j.Stdin = "to rank zero"
	r := j.Run(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "rank 0 read: to rank zero\n") || !strings.Contains(r.Stdout, "rank 1 read: \n") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// TestRemoteSignalAndTimeout: SIGINT reaches every remote rank (status
// 130); --timeout sends SIGQUIT, whose output comes back (status 124).
func TestRemoteSignalAndTimeout(t *testing.T) {
	t.Parallel()
	script := `trap 'echo "rank $GORUN_RANK got INT"; exit 1' INT; trap 'echo "rank $GORUN_RANK got QUIT"; exit 1' QUIT; echo "ready $GORUN_RANK $$"; while :; do sleep 0.05; done`
	p := remoteJob(t, "-np", "3", "--host", "ha:1,hb:2", "sh", "-c", script).Start(t)
	p.Lines(3, "ready ")
	p.Signal(syscall.SIGINT)
	r := p.Wait()
	if r.Code != 130 || strings.Count(r.Stdout, "got INT") != 3 || !strings.Contains(r.Stderr, "gorun: job interrupted by SIGINT") {
		t.Errorf("SIGINT: exit %d, stdout %q, stderr %q; want 130 and three ranks interrupted", r.Code, r.Stdout, r.Stderr)
	}
	r = remoteJob(t, "-np", "2", "--host", "ha:1,hb:1", "--timeout", "1s", "sh", "-c", script).Run(t)
	if r.Code != 124 || strings.Count(r.Stdout, "got QUIT") != 2 || !strings.Contains(r.Stderr, "gorun: job timed out after 1s") {
		t.Errorf("--timeout: exit %d, stdout %q, stderr %q; want 124 and two ranks sent SIGQUIT", r.Code, r.Stdout, r.Stderr)
	}
}

// TestRemoteKillGorun: when gorun is killed with SIGKILL, every helper and
// every rank on every host ends within 15 s and nothing is left (the
// jobtest cleanup check covers ranks, session directories and segments).
func TestRemoteKillGorun(t *testing.T) {
	t.Parallel()
	j := remoteJob(t, "-np", "4", "--host", "localhost:2,hb:2", jobtest.Prog("actor"), "hang", "-noinit")
	j.Linger = 15 * time.Second
	p := j.Start(t)
	p.Lines(4, "ready ")
	helpers := helperPids(p.TMPDIR())
	if len(helpers) < 2 { // the agent's shell may show up too
		t.Errorf("helpers %v; want 2", helpers)
	}
	p.Signal(syscall.SIGKILL)
	p.Wait()
	start := time.Now()
	for len(helperPids(p.TMPDIR())) > 0 && time.Since(start) < 15*time.Second {
		time.Sleep(50 * time.Millisecond)
	}
	if left := helperPids(p.TMPDIR()); len(left) > 0 {
		t.Errorf("helpers %v still run 15 s after gorun was killed", left)
	}
	t.Logf("helpers gone %v after gorun was killed", time.Since(start).Round(time.Millisecond))
}

// helperPids returns the pids of gorun helpers whose TMPDIR is tmp.
func helperPids(tmp string) []int {
	return jobtest.PidsWhere(func(proc string) bool {
		cmdline, _ := os.ReadFile(proc + "/cmdline")
		env, _ := os.ReadFile(proc + "/environ")
		return bytes.Contains(cmdline, []byte("--remote-helper")) && bytes.Contains(env, []byte("TMPDIR="+tmp+"\x00"))
	})
}

// TestRemoteHelperLost: a host whose helper dies (its connection lost)
// fails the job: its ranks are reported lost with the host, the others
// are stopped.
func TestRemoteHelperLost(t *testing.T) {
	t.Parallel()
	j := remoteJob(t, "-np", "3", "--host", "ha:1,hb:2", "sh", "-c",
		`[ $GORUN_RANK = 2 ] && { sleep 0.2; kill -9 $PPID; }; exec sleep 60`)
	j.TMPDIR = t.TempDir()
	r := j.Run(t)
	if r.Code == 0 || !regexp.MustCompile(`gorun: rank [12] \(on hb\) was lost with its host: the launch agent ended`).MatchString(r.Stderr) ||
		strings.Count(r.Stderr, "gorun: rank") != 1 {
		t.Errorf("exit %d, stderr %q; want a failure and one line saying hb's ranks were lost", r.Code, r.Stderr)
	}
	// The killed helper could not remove its session directory (its ranks
	// did not call Init, so no lifeline removed it either): the next job
	// in the same TMPDIR does.
	next := jobtest.Job{Args: []string{"-np", "1", "true"}, TMPDIR: j.TMPDIR}.Run(t)
	if next.Code != 0 {
		t.Errorf("next job: exit %d, stderr %q", next.Code, next.Stderr)
	}
}

// TestRemoteRingOneMachine: an MPI program across two fake hosts on one
// machine (TCP over loopback between them): each host's ranks share a
// segment whose rendezvous lives in that host's own session directory, so
// the two hosts' segments never meet, and the helpers remove them.
func TestRemoteRingOneMachine(t *testing.T) {
	t.Parallel()
	r := remoteJob(t, "-np", "4", "--host", "ha:2,hb:2", "--mca", "btl_tcp_if_include", "lo", jobtest.Example("ring")).Run(t)
	if r.Code != 0 || !strings.Contains(r.Stdout, "OK") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// TestRemoteExitWithoutFinalize: a rank on a remote host that called Init
// and exits 0 without Finalize fails the job (1), as on one machine.
func TestRemoteExitWithoutFinalize(t *testing.T) {
	t.Parallel()
	p := remoteJob(t, "-np", "4", "--host", "ha:2,hb:2", "--mca", "btl_tcp_if_include", "lo", traffic(), "vanish", "2", "0").Start(t)
	p.Lines(1, "leaving 2 ")
	r := p.Wait()
	if r.Code != 1 || !regexp.MustCompile(`gorun: rank 2 \(pid \d+\) exited with status 0 without calling Finalize\ngorun: host hb ran rank 2\n`).MatchString(r.Stderr) {
		t.Errorf("exit %d, stderr %q; want 1 and rank 2's line", r.Code, r.Stderr)
	}
}

// TestRemoteAbort: Abort on a remote host ends the job with its code, and
// gorun says which rank called it.
func TestRemoteAbort(t *testing.T) {
	t.Parallel()
	r := remoteJob(t, "-np", "4", "--host", "ha:2,hb:2", "--mca", "btl_tcp_if_include", "lo", actor(), "fail", "3", "abort:9").Run(t)
	if r.Code != 9 || !regexp.MustCompile(`gorun: rank 3 called Abort\(9\)\ngorun: rank 3 \(pid \d+\) exited with status 9\ngorun: host hb ran rank 3\n`).MatchString(r.Stderr) {
		t.Errorf("exit %d, stderr %q; want 9 and rank 3's Abort and failure lines", r.Code, r.Stderr)
	}
}
