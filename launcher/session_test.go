package launcher

import (
	"github.com/gorun-mpi/gorun/jobenv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func nolog(string, ...any) {}

func TestOpenSessionCreatesPrivateDirs(t *testing.T) {
	tmp := t.TempDir()
	uid := os.Getuid()
	s, err := openSession(tmp, uid, "", nolog)
	if err != nil {
		t.Fatalf("openSession = %v", err)
	}
	if want := filepath.Join(tmp, "gorun-"+strconv.Itoa(uid)); s.userDir != want {
		t.Errorf("userDir = %s; want %s", s.userDir, want)
	}
	if !jobenv.JobIDPattern.MatchString(s.jobID) || !strings.HasPrefix(s.jobID, strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("jobID = %q; want <our pid>-<8 hex digits>", s.jobID)
	}
	for _, d := range []string{s.userDir, s.dir} {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a directory of mode 0700", d, fi.Mode(), err)
		}
	}
	data, err := os.ReadFile(filepath.Join(s.dir, launcherFile))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := parseLauncherRecord(data)
	if err != nil || rec.Pid != os.Getpid() || !rec.alive() {
		t.Errorf("launcher record %+v, %v; want ours, alive", rec, err)
	}

	other, err := openSession(tmp, uid, "", nolog)
	if err != nil || other.dir == s.dir {
		t.Fatalf("second openSession = %+v, %v; want another directory", other, err)
	}
	s.close("")
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("after close, %s: %v; want it gone", s.dir, err)
	}
	if _, err := os.Stat(s.userDir); err != nil {
		t.Errorf("close removed the per-user dir while another job uses it: %v", err)
	}
	other.close("")
	if _, err := os.Stat(other.userDir); !os.IsNotExist(err) {
		t.Errorf("after the last close, %s: %v; want it gone", other.userDir, err)
	}
}

// TestOpenSessionWhileOthersEnd: jobs that start while others end in the
// same TMPDIR all get their session: an ending job (or a janitor) removes
// the per-user directory when it is empty, which may happen between a
// starting job's Mkdir of it and its check of it, not only before its
// Mkdir in it. Before, the check failed ("checking session directory
// ...: no such file or directory", exit 2); the next job of
// TestKillGorun meets the killed job's janitor this way.
func TestOpenSessionWhileOthersEnd(t *testing.T) {
	tmp := t.TempDir()
	uid := os.Getuid()
	const jobs, each = 4, 300
	errc := make(chan error, jobs*each)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				s, err := openSession(tmp, uid, "", nolog)
				if err != nil {
					errc <- err
					continue
				}
				s.close("")
			}
		}()
	}
	wg.Wait()
	close(errc)
	n := 0
	for err := range errc {
		if n++; n == 1 {
			t.Errorf("openSession: %v", err)
		}
	}
	if n > 0 {
		t.Errorf("%d of %d sessions failed", n, jobs*each)
	}
}

func TestOpenSessionRefusesUnsafeUserDir(t *testing.T) {
	uid := os.Getuid()
	tests := []struct {
		name  string
		plant func(t *testing.T, userDir string)
		err   string
	}{
		{"symlink", func(t *testing.T, userDir string) {
			if err := os.Symlink(t.TempDir(), userDir); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"dangling symlink", func(t *testing.T, userDir string) {
			if err := os.Symlink("/nonexistent/gorun", userDir); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"regular file", func(t *testing.T, userDir string) {
			if err := os.WriteFile(userDir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "is not a directory"},
		{"world writable", func(t *testing.T, userDir string) {
			if err := os.Mkdir(userDir, 0o700); err != nil {
				t.Fatal(err)
			}
			os.Chmod(userDir, 0o777)
		}, "has mode 0777"},
		{"owned by someone else", func(t *testing.T, userDir string) {
			if uid != 0 {
				t.Skip("needs root to chown")
			}
			if err := os.Mkdir(userDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(userDir, 4242, -1); err != nil {
				t.Fatal(err)
			}
		}, "is owned by uid 4242"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			userDir := filepath.Join(tmp, "gorun-"+strconv.Itoa(uid))
			tt.plant(t, userDir)
			s, err := openSession(tmp, uid, "", nolog)
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), userDir) {
				t.Fatalf("openSession = %+v, %v; want an error naming %s and containing %q", s, err, userDir, tt.err)
			}
		})
	}
}

// TestRemoveStaleSessions: dead launchers' directories go with their
// shared-memory files; live, young or foreign ones stay.
func TestRemoveStaleSessions(t *testing.T) {
	uid := os.Getuid()
	userDir := t.TempDir()
	backing := t.TempDir()
	self, _ := procStartTime(os.Getpid())
	old := time.Now().Add(-2 * staleAge)
	type dirSpec struct {
		name   string
		record string // "" for no launcher file
		old    bool   // mtime well past staleAge
		stale  bool   // want it removed
	}
	specs := []dirSpec{
		{name: "1-00000001", record: string(formatLauncherRecord(launcherRecord{Pid: 1 << 30, Start: 5})), stale: true},
		{name: "2-00000002", record: string(formatLauncherRecord(launcherRecord{Pid: os.Getpid(), Start: self + 1})), stale: true},
		{name: "3-00000003", record: string(formatLauncherRecord(launcherRecord{Pid: os.Getpid(), Start: self})), old: true},
		{name: "4-00000004", record: "", stale: false},
		{name: "5-00000005", record: "garbage", old: true, stale: true},
		{name: "not-a-job", record: string(formatLauncherRecord(launcherRecord{Pid: 1 << 30, Start: 5})), old: true},
	}
	for _, d := range specs {
		dir := filepath.Join(userDir, d.name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if d.record != "" {
			os.WriteFile(filepath.Join(dir, launcherFile), []byte(d.record), 0o600)
		}
		os.WriteFile(filepath.Join(backing, "gorun-"+strconv.Itoa(uid)+"-"+d.name+"-00ff.seg"), nil, 0o600)
		if d.old {
			os.Chtimes(dir, old, old)
		}
	}
	removeStaleSessions(userDir, uid, backing, nolog)
	for _, d := range specs {
		_, dirErr := os.Stat(filepath.Join(userDir, d.name))
		_, shmErr := os.Stat(filepath.Join(backing, "gorun-"+strconv.Itoa(uid)+"-"+d.name+"-00ff.seg"))
		if gone := os.IsNotExist(dirErr); gone != d.stale {
			t.Errorf("%s: removed = %v; want %v", d.name, gone, d.stale)
		}
		if gone := os.IsNotExist(shmErr); gone != d.stale {
			t.Errorf("%s's shared-memory file: removed = %v; want %v", d.name, gone, d.stale)
		}
	}
}

func TestRemoveJobFilesUsesSegmentDescriptor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "9-0000000a")
	os.Mkdir(dir, 0o700)
	seg := filepath.Join(t.TempDir(), "custom.seg")
	os.WriteFile(seg, nil, 0o600)
	desc := "gorun-segment 2\npath " + seg + "\nsize 4096\nlayout 1\ntoken 00112233445566778899aabbccddeeff\ndev 1\nino 2\n"
	os.WriteFile(filepath.Join(dir, "segment"), []byte(desc), 0o600)
	jobenv.RemoveJobFiles(dir, os.Getuid(), "9-0000000a", "")
	if _, err := os.Stat(seg); !os.IsNotExist(err) {
		t.Errorf("segment file named by the descriptor: %v; want it removed", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("session dir: %v; want it removed", err)
	}
}
