package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/internal/lab"
	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// Jobs across namespace hosts of the lab, started by gorun through a
// launch agent that enters them (no sshd): each host has its own network,
// hostname, /tmp and /dev/shm, so shared memory cannot cross hosts and
// ranks on different hosts talk over TCP. Root only; skipped elsewhere.

// hostLab is a lab whose hosts keep /tmp and /dev/shm in directories that
// outlive each agent call, so that what a job leaves on a host can be
// checked after it.
type hostLab struct {
	*lab.Lab
	agent string // launch agent for gorun: AGENT HOST COMMAND
	cache string // the hosts' cache of what gorun brings (XDG_CACHE_HOME)
}

func newHostLab(t *testing.T, n int) *hostLab {
	t.Helper()
	l := lab.New(t, n, filepath.Dir(jobtest.Gorun()))
	hl := &hostLab{Lab: l, agent: filepath.Join(l.Dir, "persist-agent"), cache: filepath.Join(l.Dir, "cache")}
	// The lab's onhost mounts a fresh tmpfs on /tmp and /dev/shm for every
	// call; ours binds per-host directories instead, and stages the
	// directories that must stay visible in a tmpfs of its own mount
	// namespace (concurrent calls share nothing).
	exe, _ := os.Executable()
	keep := []string{l.Dir, filepath.Dir(jobtest.Gorun()), filepath.Dir(exe)}
	var stage, rebind strings.Builder
	for k, d := range keep {
		fmt.Fprintf(&stage, "mkdir /mnt/k%d && mount --bind %q /mnt/k%d\n", k, d, k)
		fmt.Fprintf(&rebind, "mkdir -p %q && mount --bind /mnt/k%d %q\n", d, k, d)
	}
	onhost := fmt.Sprintf(`#!/bin/sh
# persist-onhost N CMD...: run CMD as lab host hN, whose /tmp and /dev/shm
# persist in the lab's directory between calls.
n=$1; shift
exec nsenter --net=/run/netns/%[1]s$n unshare --uts --mount --propagation private sh -c '
set -e
unset TMPDIR
hostname h'$n'
mount --bind %[2]s/hosts /etc/hosts
mount -t tmpfs tmpfs /mnt
%[3]smount --bind %[2]s/shm.h'$n' /dev/shm
mount --bind %[2]s/tmp.h'$n' /tmp
%[4]sexec "$@"' sh "$@"
`, strings.TrimSuffix(l.NS(1), "1"), l.Dir, stage.String(), rebind.String())
	persistOnHost := filepath.Join(l.Dir, "persist-onhost")
	agent := "#!/bin/sh\n# agent HOST CMD...: enter lab host HOST with its persistent /tmp and /dev/shm.\n" +
		"while [ $# -gt 0 ]; do case \"$1\" in -o|-p|-l|-i|-F) shift 2;; -*) shift;; *) break;; esac; done\n" +
		"host=$1; shift; n=${host#h}\nexec " + persistOnHost + " \"$n\" sh -c \"$*\"\n"
	for i := 1; i <= n; i++ {
		for _, d := range []string{"tmp", "shm"} {
			if err := os.MkdirAll(filepath.Join(l.Dir, d+"."+l.Host(i)), 0o1777); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(persistOnHost, []byte(onhost), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hl.agent, []byte(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	return hl
}

// job is a gorun job across the lab's hosts (gorun runs in the test's own
// namespace, like a login node outside the hosts).
func (hl *hostLab) job(args ...string) jobtest.Job {
	base := []string{"--mca", "plm_ssh_agent", hl.agent, "--mca", "btl_tcp_if_include", lab.Subnet}
	return jobtest.Job{Args: append(base, args...), Env: []string{"XDG_CACHE_HOME=" + hl.cache, "GOCACHE=" + goCache()}}
}

// checkHosts fails t if, within linger, any host still runs a process or
// holds a gorun session directory or shared-memory file.
func (hl *hostLab) checkHosts(t *testing.T, linger time.Duration) {
	t.Helper()
	deadline := time.Now().Add(linger)
	for {
		var left []string
		for i := 1; i <= hl.N; i++ {
			if pids := hl.Pids(i); len(pids) > 0 {
				left = append(left, hl.Host(i)+": processes "+strings.Trim(strings.Join(strings.Fields(strings.Trim(itoaSlice(pids), "[]")), ","), ","))
			}
			for _, g := range []string{"tmp." + hl.Host(i) + "/gorun-[0-9]*", "tmp." + hl.Host(i) + "/gorun-pmi-*", "shm." + hl.Host(i) + "/gorun-*"} {
				m, _ := filepath.Glob(filepath.Join(hl.Dir, g))
				for _, f := range m {
					left = append(left, hl.Host(i)+": "+strings.TrimPrefix(f, hl.Dir+"/"))
				}
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("left behind on the hosts after %v: %s", linger, strings.Join(left, "; "))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func itoaSlice(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, " ")
}

// TestLabHostsJobs: the examples and the p2p programs across 2 and 3 hosts
// (TCP between hosts, shared memory within one), from --host and from
// --hostfile; nothing is left on any host.
func TestLabHostsJobs(t *testing.T) {
	hl := newHostLab(t, 3)
	hf := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(hf, []byte("# the lab\nh1 slots=2\nh2 slots=1\nh3\n"), 0o600)
	for _, args := range [][]string{
		{"-np", "4", "--host", "h1:2,h2:2", jobtest.Example("ring")},
		{"-np", "5", "--hostfile", hf, jobtest.Example("ring")},
		{"-np", "6", "--host", "h1:2,h2:2,h3:2", "--tag-output", jobtest.Example("ring")},
	} {
		r := hl.job(args...).Run(t)
		if r.Code != 0 || !strings.Contains(r.Stdout, "OK") {
			t.Errorf("gorun %q: exit %d\nstdout %q\nstderr %q", args, r.Code, r.Stdout, r.Stderr)
		}
		hl.checkHosts(t, 5*time.Second)
	}
	for _, mode := range []string{"order", "wildcard", "probe", "ssend", "dup", "flood", "finalize"} {
		r := hl.job("-np", "4", "--host", "h1:2,h2:2", jobtest.Prog("p2p"), mode).Run(t)
		if r.Code != 0 || !strings.Contains(r.Stdout, mode+" ok") {
			t.Errorf("p2p %s across hosts: exit %d\nstdout %q\nstderr %q", mode, r.Code, r.Stdout, r.Stderr)
		}
	}
	// A program gorun builds is brought to the hosts (their /tmp does not
	// have gorun's session directory).
	j := hl.job("-np", "3", "--host", "h1:1,h2:1,h3:1", "./examples/ring")
	j.Dir = jobtest.ModuleRoot()
	if r := j.Run(t); r.Code != 0 || !strings.Contains(r.Stdout, "OK") {
		t.Errorf("built ring across hosts: exit %d\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
	hl.checkHosts(t, 5*time.Second)
}

// TestLabHostsFailures: the failure matrix across hosts — a remote rank
// killed with -9, a remote rank exiting non-zero, SIGINT to gorun, the
// timeout, kill -9 of gorun, a host whose agent fails — each ends as the
// contract says, and nothing is left on any host.
func TestLabHostsFailures(t *testing.T) {
	hl := newHostLab(t, 2)
	start := func(t *testing.T, args ...string) *jobtest.Proc {
		j := hl.job(append([]string{"-np", "4", "--host", "h1:2,h2:2"}, args...)...)
		j.Linger = 15 * time.Second
		return j.Start(t)
	}
	t.Run("remote rank killed", func(t *testing.T) {
		p := start(t, traffic(), "stream", "64")
		pids := rankPids(t, p, 4, "traffic")
		killed := time.Now()
		syscall.Kill(pids[3], syscall.SIGKILL)
		r := p.Wait()
		endedWithin(t, "rank 3 on h2 was killed", killed, stopBound)
		onlyFailure(t, r.Stderr, regexp.MustCompile(`gorun: rank 3 \(pid \d+\) killed by signal SIGKILL\ngorun: host h2 ran rank 3\n`))
		if r.Code != 137 {
			t.Errorf("exit %d; want 137", r.Code)
		}
		hl.checkHosts(t, 15*time.Second)
	})
	t.Run("remote rank exits 3", func(t *testing.T) {
		r := hl.job("-np", "4", "--host", "h1:2,h2:2", actor(), "fail", "2", "exit:3").Run(t)
		onlyFailure(t, r.Stderr, regexp.MustCompile(`gorun: rank 2 \(pid \d+\) exited with status 3\ngorun: host h2 ran rank 2\n`))
		if r.Code != 3 {
			t.Errorf("exit %d; want 3; stderr %q", r.Code, r.Stderr)
		}
		hl.checkHosts(t, 15*time.Second)
	})
	t.Run("SIGINT", func(t *testing.T) {
		p := start(t, traffic(), "stream", "64")
		rankPids(t, p, 4, "traffic")
		sent := time.Now()
		p.Signal(syscall.SIGINT)
		r := p.Wait()
		endedWithin(t, "SIGINT", sent, stopBound)
		if r.Code != 130 || !strings.Contains(r.Stderr, "gorun: job interrupted by SIGINT") {
			t.Errorf("exit %d, stderr %q; want 130", r.Code, r.Stderr)
		}
		hl.checkHosts(t, 15*time.Second)
	})
	t.Run("timeout", func(t *testing.T) {
		r := hl.job("-np", "4", "--host", "h1:2,h2:2", "--timeout", "3s", actor(), "hang").Run(t)
		if r.Code != 124 || !strings.Contains(r.Stderr, "gorun: job timed out after 3s") || strings.Count(r.Stderr, "SIGQUIT: quit") != 4 {
			t.Errorf("exit %d; want 124 and every rank's stacks; stderr:\n%.4000s", r.Code, r.Stderr)
		}
		hl.checkHosts(t, 15*time.Second)
	})
	t.Run("kill -9 gorun", func(t *testing.T) {
		p := start(t, traffic(), "stream", "64")
		rankPids(t, p, 4, "traffic")
		killed := time.Now()
		p.Signal(syscall.SIGKILL)
		p.Wait()
		hl.checkHosts(t, 15*time.Second)
		t.Logf("hosts clean %v after gorun was killed", time.Since(killed).Round(time.Millisecond))
	})
	t.Run("agent fails", func(t *testing.T) {
		wrap := filepath.Join(t.TempDir(), "agent")
		os.WriteFile(wrap, []byte("#!/bin/sh\nif [ \"$1\" = h2 ]; then echo \"ssh: connect to host h2 port 22: Connection refused\" >&2; exit 255; fi\nexec "+hl.agent+" \"$@\"\n"), 0o755)
		r := jobtest.Job{Args: []string{"--mca", "plm_ssh_agent", wrap, "-np", "4", "--host", "h1:2,h2:2", jobtest.Example("ring")},
			Env: []string{"XDG_CACHE_HOME=" + hl.cache}}.Run(t)
		if r.Code != 2 || !strings.Contains(r.Stderr, "gorun: host h2: cannot start gorun's helper there through the launch agent (it exited with status 255: ssh: connect to host h2 port 22: Connection refused)") {
			t.Errorf("exit %d, stderr %q; want 2 naming h2", r.Code, r.Stderr)
		}
		hl.checkHosts(t, 15*time.Second)
	})
}

// TestLabSallocGorun: inside a Slurm allocation (salloc -N2), `gorun -np 4
// PROGRAM` places the ranks on the allocation's nodes and starts them
// through srun (one job step per node, no ssh); a failing rank on the
// second node decides the status and is named with its node.
func TestLabSallocGorun(t *testing.T) {
	l, s := newSlurmLab(t)
	cache := filepath.Join(l.Dir, "cache")
	salloc := func(args ...string) (string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		full := append([]string{"-N2", "env", "XDG_CACHE_HOME=" + cache, jobtest.Gorun(), "--mca", "btl_tcp_if_include", lab.Subnet}, args...)
		return outputAndCode(s.Cmd(ctx, 1, "salloc", full...))
	}
	out, code := salloc("-np", "4", "--tag-output", jobtest.Example("ring"))
	if code != 0 || !strings.Contains(out, "OK") {
		t.Fatalf("salloc -N2 gorun -np 4 ring: exit %d\n%s\n%s", code, out, s.Logs())
	}
	out, code = salloc("-np", "4", actor(), "fail", "3", "exit:5")
	if code != 5 || !regexp.MustCompile(`gorun: rank 3 \(pid \d+\) exited with status 5\ngorun: host h2 ran rank 3`).MatchString(out) {
		t.Errorf("salloc gorun, rank 3 exits 5: exit %d; want 5 and the failure line naming h2:\n%s", code, out)
	}
	for i := 1; i <= l.N; i++ {
		// Only the Slurm daemons may remain on the hosts.
		for _, pid := range l.Pids(i) {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if !strings.Contains(string(cmdline), "slurm") && !strings.Contains(string(cmdline), "munge") {
				t.Errorf("left on %s: pid %d %q", l.Host(i), pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
	}
}
