// Package lab builds "machines" for multi-host tests on one box: network
// namespace hosts h1..hN (10.77.0.1..N/24) joined by a bridge that lives in
// a namespace of its own, each host with its own hostname, /etc/hosts,
// /tmp and /dev/shm (see ../../../shared/MULTINODE.md §1 and §6).
//
// Invariants:
//   - Every name the lab creates (namespaces, interfaces) carries an id
//     unique to the lab, so labs of concurrent test runs never collide;
//     interface names stay within the kernel's 15 characters.
//   - New registers the teardown with t.Cleanup before it creates anything,
//     so a failing test tears down too: processes left in the hosts'
//     namespaces are killed, the namespaces deleted (which removes the
//     veth pairs), and /run/netns unmounted when no namespace is left.
//   - Where the lab cannot run (not root, no ip/nsenter/unshare, netns
//     creation refused), New skips the test with a message that says why.
//   - The root namespace gets no address, route or interface.
package lab

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Subnet is the lab's network; host i (1-based) is 10.77.0.i.
const Subnet = "10.77.0.0/24"

// Lab is one set of namespace hosts.
type Lab struct {
	ID    string // unique to this lab
	Dir   string // the lab's shared directory (visible on every host)
	N     int    // number of hosts
	sw    string // the bridge's namespace
	keep  []string
	hosts string // path of the hosts file
	t     testing.TB
}

// Available reports why the lab cannot run here ("" when it can).
func Available() string {
	if os.Geteuid() != 0 {
		return "the namespace lab needs root"
	}
	for _, tool := range []string{"ip", "nsenter", "unshare", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "the namespace lab needs " + tool + " on PATH"
		}
	}
	return ""
}

// New creates n hosts (2..9). keep lists directories under /tmp that must
// stay visible on every host besides the lab's own (the test binary's
// directory is always kept). It skips t when the lab cannot run.
func New(t testing.TB, n int, keep ...string) *Lab {
	t.Helper()
	if why := Available(); why != "" {
		t.Skip(why)
	}
	if n < 2 || n > 9 {
		t.Fatalf("lab: %d hosts; allowed 2..9", n)
	}
	b := make([]byte, 3)
	rand.Read(b)
	id := hex.EncodeToString(b)
	dir, err := os.MkdirTemp("", "gorun-lab-"+id+"-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755) // munge and slurm users read the configuration here
	l := &Lab{ID: id, Dir: dir, N: n, sw: "gl" + id + "-sw", t: t}
	if exe, err := os.Executable(); err == nil {
		l.keep = append(l.keep, filepath.Dir(exe))
	}
	l.keep = append(l.keep, dir)
	l.keep = append(l.keep, keep...)
	t.Cleanup(l.teardown)
	var hosts bytes.Buffer
	hosts.WriteString("127.0.0.1 localhost\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&hosts, "%s %s\n", l.IP(i), l.Host(i))
	}
	l.hosts = filepath.Join(dir, "hosts")
	if err := os.WriteFile(l.hosts, hosts.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := [][]string{
		{"netns", "add", l.sw},
		{"-n", l.sw, "link", "add", "gl" + id + "br", "type", "bridge"},
		{"-n", l.sw, "link", "set", "gl" + id + "br", "up"},
	}
	for i := 1; i <= n; i++ {
		ns, v, p := l.NS(i), l.veth(i), l.port(i)
		cmds = append(cmds,
			[]string{"netns", "add", ns},
			[]string{"link", "add", v, "type", "veth", "peer", "name", p},
			[]string{"link", "set", v, "netns", ns},
			[]string{"link", "set", p, "netns", l.sw},
			[]string{"-n", ns, "link", "set", v, "name", "eth0"},
			[]string{"-n", ns, "addr", "add", l.IP(i) + "/24", "dev", "eth0"},
			[]string{"-n", ns, "link", "set", "eth0", "up"},
			[]string{"-n", ns, "link", "set", "lo", "up"},
			[]string{"-n", l.sw, "link", "set", p, "master", "gl" + id + "br"},
			[]string{"-n", l.sw, "link", "set", p, "up"},
		)
	}
	for i, c := range cmds {
		if out, err := exec.Command("ip", c...).CombinedOutput(); err != nil {
			if i == 0 {
				t.Skipf("the namespace lab cannot create a network namespace here: ip %s: %v: %s", strings.Join(c, " "), err, out)
			}
			t.Fatalf("lab: ip %s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
	l.writeScripts()
	return l
}

// Host is host i's name (h1..); NS its network namespace.
func (l *Lab) Host(i int) string { return "h" + strconv.Itoa(i) }
func (l *Lab) NS(i int) string   { return "gl" + l.ID + "-h" + strconv.Itoa(i) }
func (l *Lab) IP(i int) string   { return "10.77.0." + strconv.Itoa(i) }
func (l *Lab) veth(i int) string { return "gl" + l.ID + "v" + strconv.Itoa(i) }

// port is host i's end of its link, in the bridge's namespace.
func (l *Lab) port(i int) string { return "gl" + l.ID + "p" + strconv.Itoa(i) }

// OnHost is the path of a script that runs its arguments as host N:
// `onhost N CMD ARGS...`.
func (l *Lab) OnHost() string { return filepath.Join(l.Dir, "onhost") }

// Agent is the path of a launch agent in the manner of ssh: `agent [ssh
// options] HOST CMD...` runs CMD (joined by spaces, through sh -c) as HOST
// (h1..hN). Usable as gorun's plm_ssh_agent or Hydra's -launcher-exec.
func (l *Lab) Agent() string { return filepath.Join(l.Dir, "agent") }

func (l *Lab) writeScripts() {
	// The directories to keep are bound to a staging directory of this
	// invocation (under /mnt, outside /tmp), /tmp and /dev/shm get their
	// tmpfs, and the directories are bound back. A staging directory per
	// invocation: concurrent onhost runs must not share mount points.
	var binds, rebinds strings.Builder
	for k, d := range l.keep {
		fmt.Fprintf(&binds, "mkdir $st/%d && mount --bind %q $st/%d\n", k, d, k)
		fmt.Fprintf(&rebinds, "mkdir -p %q && mount --bind $st/%d %q && umount $st/%d && rmdir $st/%d\n", d, k, d, k, k)
	}
	onhost := fmt.Sprintf(`#!/bin/sh
# onhost N CMD ARGS...: run CMD as lab host hN (its network, hostname,
# /etc/hosts, /tmp and /dev/shm; the test's directories bound back in).
n=$1; shift
exec nsenter --net=/run/netns/gl%s-h$n unshare --uts --mount --propagation private sh -c '
set -e
hostname h'$n'
mount --bind %s /etc/hosts
st=$(mktemp -d /mnt/gl%s.XXXXXX)
%smount -t tmpfs -o size=1g tmpfs /tmp
mount -t tmpfs -o size=1g tmpfs /dev/shm
%srmdir $st
exec "$@"' sh "$@"
`, l.ID, l.hosts, l.ID, binds.String(), rebinds.String())
	agent := fmt.Sprintf(`#!/bin/sh
# agent [ssh options] HOST CMD...: an ssh stand-in that enters lab host HOST.
while [ $# -gt 0 ]; do case "$1" in -o|-p|-l|-i|-F) shift 2;; -*) shift;; *) break;; esac; done
host=$1; shift; n=${host#h}
exec %s "$n" sh -c "$*"
`, l.OnHost())
	for path, body := range map[string]string{l.OnHost(): onhost, l.Agent(): agent} {
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			l.t.Fatal(err)
		}
	}
}

// Command returns a command that runs name with args as host i.
func (l *Lab) Command(ctx context.Context, i int, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, l.OnHost(), append([]string{strconv.Itoa(i), name}, args...)...)
}

// Run runs name with args as host i, with a time limit, and returns its
// combined output.
func (l *Lab) Run(i int, timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := l.Command(ctx, i, name, args...).CombinedOutput()
	return string(out), err
}

// LinkDown cuts host i off the bridge (its link goes down in the bridge's
// namespace): a partition, with no FIN or RST for anyone.
func (l *Lab) LinkDown(i int) error {
	if out, err := exec.Command("ip", "-n", l.sw, "link", "set", l.port(i), "down").CombinedOutput(); err != nil {
		return fmt.Errorf("lab: link down: %v: %s", err, out)
	}
	return nil
}

// LinkUp reconnects host i.
func (l *Lab) LinkUp(i int) error {
	if out, err := exec.Command("ip", "-n", l.sw, "link", "set", l.port(i), "up").CombinedOutput(); err != nil {
		return fmt.Errorf("lab: link up: %v: %s", err, out)
	}
	return nil
}

// Pids lists the processes in host i's network namespace.
func (l *Lab) Pids(i int) []int {
	out, _ := exec.Command("ip", "netns", "pids", l.NS(i)).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids
}

// teardown kills what is left in the hosts, deletes the namespaces, and
// unmounts /run/netns when no namespace is left.
func (l *Lab) teardown() {
	for i := 1; i <= l.N; i++ {
		for _, p := range l.Pids(i) {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
	for i := 1; i <= l.N; i++ {
		for k := 0; k < 50 && len(l.Pids(i)) > 0; k++ {
			time.Sleep(20 * time.Millisecond)
		}
		exec.Command("ip", "netns", "del", l.NS(i)).Run()
	}
	exec.Command("ip", "netns", "del", l.sw).Run()
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil && len(bytes.TrimSpace(out)) == 0 {
		// ip netns add left a self-bind-mount on /run/netns.
		if syscall.Unmount("/run/netns", 0) == nil {
			os.Remove("/run/netns")
		}
	}
	// Staging directories of onhost runs that failed half-way (empty).
	if left, err := filepath.Glob("/mnt/gl" + l.ID + ".*"); err == nil {
		for _, d := range left {
			for k := range l.keep {
				os.Remove(filepath.Join(d, strconv.Itoa(k)))
			}
			os.Remove(d)
		}
	}
	os.RemoveAll(l.Dir)
}

// ProcsNamed lists the processes in host i's network namespace whose
// executable is named name (its base name).
func (l *Lab) ProcsNamed(i int, name string) []int {
	var out []int
	for _, p := range l.Pids(i) {
		exe, err := os.Readlink("/proc/" + strconv.Itoa(p) + "/exe")
		if err == nil && filepath.Base(strings.TrimSuffix(exe, " (deleted)")) == name {
			out = append(out, p)
		}
	}
	return out
}

// Listening returns the addresses ("ip:port") of the TCP sockets process
// pid listens on, read from /proc (its own network namespace).
func Listening(pid int) []string {
	inodes := map[string]bool{}
	fds, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	for _, fd := range fds {
		link, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name())
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	data, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/net/tcp")
	var out []string
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
			continue
		}
		ipPort := strings.Split(f[1], ":")
		if len(ipPort) != 2 || len(ipPort[0]) != 8 {
			continue
		}
		ip, _ := strconv.ParseUint(ipPort[0], 16, 32)
		port, _ := strconv.ParseUint(ipPort[1], 16, 16)
		// /proc prints the address in host (little-endian) byte order.
		out = append(out, fmt.Sprintf("%d.%d.%d.%d:%d", ip&0xff, ip>>8&0xff, ip>>16&0xff, ip>>24, port))
	}
	return out
}

// Dial connects to addr from inside host i's network namespace (the
// calling goroutine's thread enters it for the connect, then leaves it).
func (l *Lab) Dial(i int, addr string, timeout time.Duration) (net.Conn, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread()
		// The thread may be left in the lab's namespace if restoring
		// fails: then it is not unlocked, and Go ends it with the goroutine.
		self, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			ch <- res{nil, err}
			return
		}
		defer self.Close()
		target, err := os.Open("/run/netns/" + l.NS(i))
		if err != nil {
			ch <- res{nil, err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- res{nil, fmt.Errorf("lab: setns %s: %w", l.NS(i), err)}
			return
		}
		c, err := net.DialTimeout("tcp4", addr, timeout)
		if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- res{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
