package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/internal/testuser"
	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// A hostile local user against a job (issue 16 items 1, 8): each test runs
// as root with a second user created for it (testuser), and is skipped
// with a message elsewhere.

// TestHostileParamFileAndBackingDir: the attack of issue 16 item 1 starts
// with a parameter file planted in a world-writable working directory,
// pointing btl_sm_backing_directory at a directory the attacker owns, so
// that the attacker can swap the segment file between its creation and the
// other ranks' attach. gorun refuses every step before any rank runs: a
// parameter file not owned by the user (or root) or writable by others,
// and a backing directory owned by another user or writable by others
// without the sticky bit (exit 2, one line naming the file or directory
// and why). The attacker's directory stays empty.
func TestHostileParamFileAndBackingDir(t *testing.T) {
	t.Parallel()
	evil := testuser.New(t)
	evilDir := filepath.Join(t.TempDir(), "evil")
	os.Mkdir(evilDir, 0o755)
	evil.Chown(t, evilDir)
	openDir := filepath.Join(t.TempDir(), "open")
	os.Mkdir(openDir, 0o777)
	os.Chmod(openDir, 0o777) // whatever the umask
	uid := strconv.Itoa(evil.Uid)

	// work returns a world-writable working directory holding a parameter
	// file with content, given to owner (nil: ours) with mode.
	work := func(t *testing.T, content string, owner *testuser.User, mode os.FileMode) (string, string) {
		dir := t.TempDir()
		os.Chmod(dir, 0o777|os.ModeSticky)
		f := filepath.Join(dir, "gorun-mca-params.conf")
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chmod(f, mode)
		if owner != nil {
			owner.Chown(t, f)
		}
		return dir, f
	}
	pointAtEvil := "btl_sm_backing_directory = " + evilDir + "\n"
	tests := []struct {
		name string
		job  func(t *testing.T) (jobtest.Job, []string) // the job, and what stderr must say
	}{
		{"param file planted by another user", func(t *testing.T) (jobtest.Job, []string) {
			dir, f := work(t, pointAtEvil, &evil, 0o644)
			return jobtest.Job{Dir: dir}, []string{"gorun: mca: parameter file " + f + ": owned by uid " + uid + ", neither this user", "refusing"}
		}},
		{"param file writable by others", func(t *testing.T) (jobtest.Job, []string) {
			dir, f := work(t, pointAtEvil, nil, 0o666)
			return jobtest.Job{Dir: dir}, []string{"gorun: mca: parameter file " + f + ": mode 0666, writable by others; refusing"}
		}},
		{"home param file planted by another user", func(t *testing.T) (jobtest.Job, []string) {
			home := t.TempDir()
			os.Mkdir(filepath.Join(home, ".gorun"), 0o755)
			f := filepath.Join(home, ".gorun", "mca-params.conf")
			os.WriteFile(f, []byte(pointAtEvil), 0o644)
			evil.Chown(t, f)
			return jobtest.Job{Env: []string{"HOME=" + home}}, []string{"gorun: mca: parameter file " + f + ": owned by uid " + uid}
		}},
		{"backing directory of another user", func(t *testing.T) (jobtest.Job, []string) {
			return jobtest.Job{Args: []string{"--mca", "btl_sm_backing_directory", evilDir}},
				[]string{"gorun: btl_sm_backing_directory " + evilDir + " is owned by uid " + uid + ", neither this user"}
		}},
		{"backing directory writable by others", func(t *testing.T) (jobtest.Job, []string) {
			return jobtest.Job{Env: []string{"GORUN_MCA_btl_sm_backing_directory=" + openDir}},
				[]string{"gorun: btl_sm_backing_directory " + openDir + " has mode 0777: writable by others without the sticky bit"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, want := tt.job(t)
			j.Args = append(j.Args, "-np", "2", jobtest.Prog("hello"))
			r := j.Run(t)
			if r.Code != 2 || strings.Count(r.Stderr, "\n") != 1 || strings.Contains(r.Stdout, "hello") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, one line, no rank run", r.Code, r.Stdout, r.Stderr)
			}
			for _, w := range want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr %q does not say %q", r.Stderr, w)
				}
			}
			if left, _ := os.ReadDir(evilDir); len(left) != 0 {
				t.Errorf("the job put files in the attacker's directory: %v", left)
			}
		})
	}
}

// TestPrecreatedSegmentName (issue 16 item 8): another user who learns the
// job id (it is in ps while gorun builds the program) creates the
// segment's file name in /dev/shm before the ranks start. The name must be
// one that user cannot predict, so the job runs. A fake `go` on PATH holds
// the build until the attacker has acted.
func TestPrecreatedSegmentName(t *testing.T) {
	t.Parallel()
	evil := testuser.New(t)
	mark := t.TempDir()
	fake := fakeGo(t, mark)
	tmp := t.TempDir()
	p := jobtest.Job{Args: []string{"-np", "3", filepath.Join(jobtest.ModuleRoot(), "tests", "progs", "hello")}, TMPDIR: tmp,
		Env: []string{"PATH=" + fake + ":" + os.Getenv("PATH"), "FAKEGO_MARK=" + mark, "FAKEGO_PROG=" + jobtest.Prog("hello")}}.Start(t)
	waitFile(t, filepath.Join(mark, "pid"))
	userDir := filepath.Join(tmp, "gorun-"+strconv.Itoa(os.Getuid()))
	jobs, _ := os.ReadDir(userDir)
	if len(jobs) != 1 {
		t.Fatalf("session directories %v; want one", jobs)
	}
	jobID := jobs[0].Name()
	// Every name the attacker can derive from the job id.
	uid := strconv.Itoa(os.Getuid())
	var planted []string
	for _, name := range []string{"gorun-" + uid + "-" + jobID + ".seg", "gorun-" + uid + "-" + jobID + "-0000000000000000.seg"} {
		path := filepath.Join("/dev/shm", name)
		planted = append(planted, path)
		t.Cleanup(func() { os.Remove(path) })
		if out, err := exec.Command("runuser", "-u", evil.Name, "--", "touch", path).CombinedOutput(); err != nil {
			t.Fatalf("touch %s as %s: %v %s", path, evil.Name, err, out)
		}
	}
	os.WriteFile(filepath.Join(mark, "go"), nil, 0o644) // the build may finish
	r := p.Wait()
	if r.Code != 0 || strings.Count(r.Stdout, "hello from rank") != 3 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and three hellos despite the files planted in /dev/shm", r.Code, r.Stdout, r.Stderr)
	}
	for _, path := range planted {
		if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
			t.Errorf("the attacker's %s: %v; want it left alone (not ours)", path, err)
		}
	}
}

// fakeGo writes a `go` command into a new directory and returns the
// directory: `go build -o OUT TARGET` writes its pid to $FAKEGO_MARK/pid,
// waits until $FAKEGO_MARK/go exists, then copies $FAKEGO_PROG to OUT.
func fakeGo(t *testing.T, mark string) string {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
echo $$ > "$FAKEGO_MARK/pid.tmp" && mv "$FAKEGO_MARK/pid.tmp" "$FAKEGO_MARK/pid"
while [ ! -e "$FAKEGO_MARK/go" ]; do sleep 0.05; done
mkdir -p "$(dirname "$3")" && exec cp "$FAKEGO_PROG" "$3"
`
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// waitFile waits up to 30 s for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within 30 s", path)
		}
	}
}
