package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// Hostile environments and odd programs: each gets the contract's status,
// one clear line where an error is expected, and leaves nothing behind.
// (usage_test.go has -np 0/100000, a missing and a non-executable PROGRAM
// and a symbolic link as the per-user directory.)

// mountTmpfs mounts a tmpfs with opts on a new directory, unmounted at
// cleanup (after the job's leftover check). It skips t unless root.
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount -t tmpfs -o %s: %v %s", opts, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// TestTinyBackingDirectory: btl_sm_backing_directory on a 256 KiB tmpfs
// cannot hold the segment: one line naming the bytes needed and free,
// a non-zero status, nothing left in the directory.
func TestTinyBackingDirectory(t *testing.T) {
	t.Parallel()
	tiny := mountTmpfs(t, "size=256k")
	r := jobtest.Run(t, "-np", "4", "--mca", "btl_sm_backing_directory", tiny, jobtest.Prog("hello"))
	need := regexp.MustCompile(`(?m)^hello: .*mpool: not enough space for the segment: ` + regexp.QuoteMeta(tiny) +
		` has 256\.0 KiB free, the segment for 4 ranks needs [0-9.]+ MiB; .*$`)
	if r.Code == 0 || len(need.FindAllString(r.Stderr, -1)) != 1 {
		t.Errorf("exit %d, stderr %q; want non-zero and exactly one line matching %v", r.Code, r.Stderr, need)
	}
	onlyFailure(t, r.Stderr, failLine("0", "exited with status "+itoa(r.Code)))
	if left, _ := os.ReadDir(tiny); len(left) != 0 {
		t.Errorf("left in the backing directory: %v", left)
	}
}

// TestUnusableTMPDIR: a TMPDIR where the session directory cannot be made
// stops gorun before any rank starts, with exit 2 and one line naming the
// path and the reason.
func TestUnusableTMPDIR(t *testing.T) {
	t.Parallel()
	uid := strconv.Itoa(os.Getuid())
	tests := []struct {
		name  string
		setup func(t *testing.T) string // returns the TMPDIR
		err   string                    // the reason, after the path
	}{
		{"regular file", func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "tmpfile")
			if err := os.WriteFile(f, []byte("keep me\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return f
		}, "not a directory"},
		{"missing directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "gone") }, "no such file or directory"},
		{"read-only file system", func(t *testing.T) string { return mountTmpfs(t, "ro,size=64k") }, "read-only file system"},
		{"mode 0500", func(t *testing.T) string {
			if os.Getuid() == 0 {
				t.Skip("permissions do not stop root (see the regular-file and read-only cases)")
			}
			d := t.TempDir()
			os.Chmod(d, 0o500)
			t.Cleanup(func() { os.Chmod(d, 0o700) })
			return d
		}, "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tmp := tt.setup(t)
			markers := t.TempDir()
			// jobtest checks its own TMPDIR; the hostile one is passed in Env
			// (the last TMPDIR in the environment wins).
			r := jobtest.Job{Args: []string{"-np", "2", actor(), "marker", markers}, Env: []string{"TMPDIR=" + tmp}}.Run(t)
			want := "gorun: creating session directory " + filepath.Join(tmp, "gorun-"+uid) + ": mkdir " +
				filepath.Join(tmp, "gorun-"+uid) + ": " + tt.err + "\n"
			if r.Code != 2 || r.Stderr != want {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.Code, r.Stderr, want)
			}
			if m, _ := os.ReadDir(markers); len(m) != 0 {
				t.Errorf("ranks ran: %v", m)
			}
			if procs := jobtest.ProcsUnder(tmp); len(procs) != 0 {
				t.Errorf("rank processes %v of a job in %s", procs, tmp)
			}
			if data, err := os.ReadFile(tmp); tt.name == "regular file" && string(data) != "keep me\n" {
				t.Errorf("TMPDIR file now holds %q, %v; want it untouched", data, err)
			}
		})
	}
}

// TestHostileSessionDir: what may sit where the per-user session directory
// goes ($TMPDIR/gorun-<uid>). gorun refuses anything that is not a private
// directory of ours (exit 2, one line naming the path and what to do) and
// leaves it as it was.
func TestHostileSessionDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		plant func(t *testing.T, path string)
		err   string
	}{
		{"regular file", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is not a directory"},
		{"world-writable directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			os.Chmod(path, 0o777) // past the umask
		}, "has mode 0777; refusing to use it"},
		{"directory of another user", func(t *testing.T, path string) {
			if os.Getuid() != 0 {
				t.Skip("only root can give a directory away")
			}
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "is owned by uid 65534, not by us"},
		{"dangling symbolic link", func(t *testing.T, path string) {
			if err := os.Symlink("/nonexistent/gorun-target", path); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			userDir := filepath.Join(tmp, "gorun-"+strconv.Itoa(os.Getuid()))
			tt.plant(t, userDir)
			before, _ := os.Lstat(userDir)
			r := jobtest.Job{Args: []string{"-np", "2", jobtest.Prog("hello")}, TMPDIR: tmp}.Run(t)
			after, err := os.Lstat(userDir)
			if err != nil || after.Mode() != before.Mode() || after.ModTime() != before.ModTime() {
				t.Errorf("gorun changed what was planted at %s: %v, %v", userDir, after, err)
			}
			os.RemoveAll(userDir) // for the leftover check
			if r.Code != 2 || strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(r.Stderr, "gorun: session directory "+userDir+" ") ||
				!strings.Contains(r.Stderr, tt.err) {
				t.Errorf("exit %d, stderr %q; want 2 and one line naming %s and %q", r.Code, r.Stderr, userDir, tt.err)
			}
		})
	}
}

// TestStaleSessionLinkIgnored: a symbolic link named like a job's session
// directory inside the per-user directory is not a stale session: gorun
// neither follows nor removes it, and the job runs.
func TestStaleSessionLinkIgnored(t *testing.T) {
	t.Parallel()
	tmp, victim := t.TempDir(), t.TempDir()
	// The target looks like the session directory of a dead gorun (pid 1
	// with a start time it never had): followed, it would be removed.
	for name, data := range map[string]string{"precious": "x", "launcher": "gorun-launcher 1\npid 1\nstart 12345\n"} {
		if err := os.WriteFile(filepath.Join(victim, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	userDir := filepath.Join(tmp, "gorun-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(userDir, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(userDir, "1-deadbeef")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	r := jobtest.Job{Args: []string{"-np", "2", jobtest.Prog("hello")}, TMPDIR: tmp}.Run(t)
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("the planted link %s: %v; want it left alone", link, err)
	}
	if _, err := os.Stat(filepath.Join(victim, "precious")); err != nil {
		t.Errorf("the link's target lost its file: %v", err)
	}
	os.RemoveAll(userDir) // for the leftover check
	if r.Code != 0 || strings.Count(r.Stdout, "hello from rank") != 2 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and two hellos", r.Code, r.Stdout, r.Stderr)
	}
}

// TestOddPrograms: programs that are not gorun programs run as plain
// processes under the usual exit rules; a directory that is no Go main
// package is refused with exit 2 and a line saying why.
func TestOddPrograms(t *testing.T) {
	t.Parallel()
	noGo := t.TempDir()
	if err := os.WriteFile(filepath.Join(noGo, "README"), []byte("not Go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		dir     string // working directory ("": the test's)
		code    int
		stderr  *regexp.Regexp // all of stderr
		minTime time.Duration
	}{
		{"/bin/true", []string{"-np", "4", "/bin/true"}, "", 0, regexp.MustCompile(`^$`), 0},
		{"/bin/sleep 1", []string{"-np", "3", "/bin/sleep", "1"}, "", 0, regexp.MustCompile(`^$`), time.Second},
		{"/bin/false", []string{"-np", "3", "/bin/false"}, "", 1,
			regexp.MustCompile(`^gorun: rank [0-2] \(pid [1-9][0-9]*\) exited with status 1\n$`), 0},
		{"directory without Go files", []string{"-np", "2", noGo}, jobtest.ModuleRoot(), 2,
			regexp.MustCompile(`^gorun: building ` + regexp.QuoteMeta(noGo) + ` failed \(exit status 1\):\nno Go files in ` + regexp.QuoteMeta(noGo) + `\n$`), 0},
		{"library package", []string{"-np", "2", "./rndv"}, jobtest.ModuleRoot(), 2,
			regexp.MustCompile(`^gorun: building \./rndv made no executable: it is not a main package .*\n$`), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r := jobtest.Job{Args: tt.args, Dir: tt.dir}.Run(t)
			d := time.Since(start)
			if r.Code != tt.code || !tt.stderr.MatchString(r.Stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %v", r.Code, r.Stderr, tt.code, tt.stderr)
			}
			if d < tt.minTime {
				t.Errorf("the job took %v; its ranks sleep %v", d, tt.minTime)
			}
		})
	}
}

// TestRankWithoutInitKilled: a plain (non-gorun) rank killed by SIGKILL is
// reported like any rank, and its siblings are stopped.
func TestRankWithoutInitKilled(t *testing.T) {
	t.Parallel()
	p := jobtest.Job{Args: []string{"-np", "3", actor(), "hang", "-noinit"}}.Start(t)
	pids := rankPids(t, p, 3, "ready")
	syscall.Kill(pids[0], syscall.SIGKILL)
	start := time.Now()
	r := p.Wait()
	endedWithin(t, "kill -9 of rank 0", start, stopBound)
	if r.Code != 137 {
		t.Errorf("exit %d; want 137", r.Code)
	}
	onlyFailure(t, r.Stderr, failLine("0", "killed by signal SIGKILL"))
}
