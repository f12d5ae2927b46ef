package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SlurmPackages are the Debian packages the Slurm lab needs (pure-Go PMI-2
// needs no PMI library).
var SlurmPackages = []string{"slurmctld", "slurmd", "slurm-client", "munge"}

// EnsureSlurm installs SlurmPackages when slurmctld is missing (apt, waiting
// for the dpkg lock), and skips t when that is impossible.
func EnsureSlurm(t testing.TB) {
	t.Helper()
	have := func() bool {
		for _, b := range []string{"slurmctld", "slurmd", "srun", "sinfo", "munged", "runuser"} {
			if _, err := exec.LookPath(b); err != nil {
				if _, err := os.Stat("/usr/sbin/" + b); err != nil {
					return false
				}
			}
		}
		return true
	}
	if have() {
		return
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		t.Skip("Slurm is not installed and cannot be installed here (needs root and apt-get)")
	}
	args := append([]string{"-o", "DPkg::Lock::Timeout=900", "install", "-y", "-q", "--no-install-recommends"}, SlurmPackages...)
	cmd := exec.Command("apt-get", args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil || !have() {
		t.Skipf("installing %v failed: %v\n%s", SlurmPackages, err, out)
	}
}

// Slurm is a Slurm cluster on the lab: munged on a socket private to the
// lab, slurmctld on h1, one slurmd per host.
type Slurm struct {
	l      *Lab
	Conf   string // slurm.conf (SLURM_CONF)
	dir    string
	pidCtl string
	pidDs  []string
	pidMun string
}

// StartSlurm brings the cluster up and waits until every node is idle. Its
// teardown (registered first) stops slurmctld, then the slurmds, then
// munged, each by PID: SIGTERM, up to 10 s, then SIGKILL.
func (l *Lab) StartSlurm(t testing.TB) *Slurm {
	t.Helper()
	EnsureSlurm(t)
	s := &Slurm{l: l, dir: filepath.Join(l.Dir, "slurm")}
	t.Cleanup(s.stop)
	for _, d := range []string{"state", "log", "run", "munge"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= l.N; i++ {
		os.MkdirAll(filepath.Join(s.dir, "spool", l.Host(i)), 0o755)
	}
	s.pidCtl = filepath.Join(s.dir, "run", "slurmctld.pid")
	for i := 1; i <= l.N; i++ {
		s.pidDs = append(s.pidDs, filepath.Join(s.dir, "run", "slurmd-"+l.Host(i)+".pid"))
	}
	sock := s.startMunge(t)
	s.Conf = filepath.Join(s.dir, "slurm.conf")
	if err := os.WriteFile(s.Conf, []byte(s.conf(sock)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.startDaemons(t)
	return s
}

// startMunge starts munged, as the munge user, on a socket of this lab
// only, and returns the socket's path.
func (s *Slurm) startMunge(t testing.TB) string {
	t.Helper()
	mdir := filepath.Join(s.dir, "munge")
	sock := filepath.Join(mdir, "munge.socket")
	s.pidMun = filepath.Join(mdir, "munged.pid")
	if u, err := user.Lookup("munge"); err == nil {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		os.Chown(mdir, uid, gid)
	}
	os.Chmod(mdir, 0o700)
	key := "/etc/munge/munge.key"
	if _, err := os.Stat(key); err != nil {
		t.Skipf("munge has no key (%v); the munge package's postinst creates it", err)
	}
	munged := "munged"
	if _, err := exec.LookPath(munged); err != nil {
		munged = "/usr/sbin/munged"
	}
	if out, err := exec.Command("runuser", "-u", "munge", "--", munged, "--force",
		"--socket="+sock, "--pid-file="+s.pidMun, "--log-file="+filepath.Join(mdir, "munged.log"),
		"--seed-file="+filepath.Join(mdir, "munged.seed"), "--key-file="+key).CombinedOutput(); err != nil {
		t.Fatalf("lab: starting munged: %v\n%s", err, out)
	}
	os.Chmod(mdir, 0o755) // clients (root) reach the socket; the directory is the lab's own
	return sock
}

// conf is the cluster's slurm.conf: h1 runs slurmctld, every host a
// slurmd, authenticated by the lab's munged at sock.
func (s *Slurm) conf(sock string) string {
	l := s.l
	return fmt.Sprintf(`ClusterName=gl%s
SlurmctldHost=h1(%s)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%s
CredType=cred/munge
StateSaveLocation=%s/state
SlurmdSpoolDir=%s/spool/%%n
SlurmctldPidFile=%s
SlurmdPidFile=%s/run/slurmd-%%n.pid
SlurmctldLogFile=%s/log/slurmctld.log
SlurmdLogFile=%s/log/slurmd-%%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=pmi2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MailProg=/bin/true
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=h[1-%d] NodeAddr=10.77.0.[1-%d] CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, l.ID, l.IP(1), sock, s.dir, s.dir, s.pidCtl, s.dir, s.dir, s.dir, l.N, l.N)
}

// startDaemons starts slurmctld on h1 and a slurmd on every host, then
// waits until every node is idle.
func (s *Slurm) startDaemons(t testing.TB) {
	t.Helper()
	l := s.l
	if out, err := l.Run(1, 30*time.Second, "slurmctld", "-f", s.Conf); err != nil {
		t.Fatalf("lab: slurmctld: %v\n%s\n%s", err, out, s.logs())
	}
	for i := 1; i <= l.N; i++ {
		if out, err := l.Run(i, 30*time.Second, "slurmd", "-f", s.Conf); err != nil {
			t.Fatalf("lab: slurmd on %s: %v\n%s\n%s", l.Host(i), err, out, s.logs())
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _ := s.Cmd(context.Background(), 1, "sinfo", "-h", "-N", "-o", "%T").Output()
		if strings.Count(string(out), "idle") == l.N {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lab: the Slurm nodes are not idle after 60 s (sinfo: %q)\n%s", out, s.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Cmd runs a Slurm client command (srun, sinfo, ...) as host i with this
// cluster's configuration.
func (s *Slurm) Cmd(ctx context.Context, i int, name string, args ...string) *exec.Cmd {
	return s.l.Command(ctx, i, "env", append([]string{"SLURM_CONF=" + s.Conf, name}, args...)...)
}

// logs returns the daemons' logs, for failure messages.
func (s *Slurm) logs() string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(s.dir, "log", "*.log"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		fmt.Fprintf(&b, "== %s\n%s\n", filepath.Base(f), data)
	}
	return b.String()
}

// Logs returns the tail of each daemon's log.
func (s *Slurm) Logs() string { return s.logs() }

// stop stops slurmctld, then the slurmds, then munged (MULTINODE §6: in
// that order, or slurmctld keeps retrying munge).
func (s *Slurm) stop() {
	stopPidFile(s.pidCtl)
	for _, p := range s.pidDs {
		stopPidFile(p)
	}
	stopPidFile(s.pidMun)
}

// stopPidFile ends the process named by a pid file: SIGTERM, up to 10 s of
// waiting (a zombie counts as gone), then SIGKILL.
func stopPidFile(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return
	}
	if syscall.Kill(pid, syscall.SIGTERM) != nil {
		return
	}
	for k := 0; k < 200; k++ {
		if !alive(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// alive: the process exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
