package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/internal/lab"
	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// ensureSSH installs openssh-server and openssh-client when sshd or ssh is
// missing (root and apt-get only), and skips t when that is impossible.
func ensureSSH(t *testing.T) {
	t.Helper()
	have := func() bool {
		_, err1 := os.Stat("/usr/sbin/sshd")
		_, err2 := exec.LookPath("ssh")
		_, err3 := exec.LookPath("ssh-keygen")
		return err1 == nil && err2 == nil && err3 == nil
	}
	if have() {
		return
	}
	if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
		t.Skip("sshd is not installed and cannot be installed here (needs root and apt-get)")
	}
	cmd := exec.Command("apt-get", "-o", "DPkg::Lock::Timeout=900", "install", "-y", "-q", "--no-install-recommends", "openssh-server", "openssh-client")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil || !have() {
		t.Skipf("installing openssh-server failed: %v\n%s", err, out)
	}
}

// TestLabRealSSH: plain ssh as the launch agent, to a real sshd on a
// namespace host: gorun on h1 runs the ring across h1 (here) and h2 (over
// ssh; the helper arrives over the ssh connection), and a failing rank on
// h2 is named with its host.
func TestLabRealSSH(t *testing.T) {
	if why := lab.Available(); why != "" {
		t.Skip(why)
	}
	ensureSSH(t)
	l := lab.New(t, 2, filepath.Dir(jobtest.Gorun()))
	dir := filepath.Join(l.Dir, "ssh")
	cache := filepath.Join(l.Dir, "cache")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"hostkey", "idkey"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	pub, _ := os.ReadFile(filepath.Join(dir, "idkey.pub"))
	os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600)
	pidFile := filepath.Join(dir, "sshd.pid")
	sshdConf := fmt.Sprintf(`ListenAddress %s:22
HostKey %s/hostkey
AuthorizedKeysFile %s/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile %s
SetEnv XDG_CACHE_HOME=%s
LogLevel ERROR
`, l.IP(2), dir, dir, pidFile, cache)
	os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(sshdConf), 0o600)
	clientConf := fmt.Sprintf(`Host h*
  User root
  IdentityFile %s/idkey
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  BatchMode yes
  LogLevel ERROR
`, dir)
	os.WriteFile(filepath.Join(dir, "ssh_config"), []byte(clientConf), 0o600)
	os.MkdirAll("/run/sshd", 0o755) // sshd's privilege-separation directory
	t.Cleanup(func() {
		if data, err := os.ReadFile(pidFile); err == nil {
			var pid int
			fmt.Sscan(string(data), &pid)
			if pid > 0 {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	})
	if out, err := l.Run(2, 30*time.Second, "/usr/sbin/sshd", "-f", filepath.Join(dir, "sshd_config"), "-E", filepath.Join(dir, "sshd.log")); err != nil {
		t.Fatalf("starting sshd on h2: %v\n%s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(pidFile); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("sshd on h2 wrote no pid file within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	run := func(args ...string) (string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		full := append([]string{"--mca", "plm_ssh_agent", "ssh -F " + filepath.Join(dir, "ssh_config"),
			"--mca", "btl_tcp_if_include", lab.Subnet}, args...)
		return outputAndCode(l.Command(ctx, 1, "env", append([]string{"XDG_CACHE_HOME=" + cache, jobtest.Gorun()}, full...)...))
	}
	out, code := run("-np", "4", "--host", "h1:2,h2:2", jobtest.Example("ring"))
	if code != 0 || !strings.Contains(out, "OK") {
		log, _ := os.ReadFile(filepath.Join(dir, "sshd.log"))
		t.Fatalf("gorun over ssh: exit %d\n%s\nsshd log:\n%s", code, out, log)
	}
	if helpers, _ := filepath.Glob(filepath.Join(cache, "gorun", "helper-*")); len(helpers) != 1 {
		t.Errorf("h2's cache holds %v; want the helper gorun sent", helpers)
	}
	out, code = run("-np", "4", "--host", "h1:2,h2:2", actor(), "fail", "3", "exit:6")
	if code != 6 || !regexp.MustCompile(`(?m)^gorun: rank 3 \(pid \d+\) exited with status 6\ngorun: host h2 ran rank 3$`).MatchString(out) {
		t.Errorf("rank 3 on h2 exits 6: exit %d; want 6 and the failure line naming h2:\n%s", code, out)
	}
	for i := 1; i <= 2; i++ {
		for _, pid := range l.Pids(i) {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if !strings.Contains(string(cmdline), "sshd") {
				t.Errorf("left on %s: pid %d %q", l.Host(i), pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
	}
}
