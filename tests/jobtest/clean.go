package jobtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CheckClean fails t if, within linger, any of these has not gone: a
// process whose GORUN_SESSION_DIR lies under tmp, the per-user session
// directory tmp/gorun-<uid>, and /dev/shm/gorun-<uid>-<gorunPid>-*.seg.
func CheckClean(t testing.TB, tmp string, gorunPid int, linger time.Duration) {
	t.Helper()
	uid := strconv.Itoa(os.Getuid())
	userDir := filepath.Join(tmp, "gorun-"+uid)
	shmGlob := "/dev/shm/gorun-" + uid + "-" + strconv.Itoa(gorunPid) + "-*.seg"
	deadline := time.Now().Add(linger)
	for {
		procs := ProcsUnder(tmp)
		_, dirErr := os.Lstat(userDir)
		shm, _ := filepath.Glob(shmGlob)
		if len(procs) == 0 && os.IsNotExist(dirErr) && len(shm) == 0 {
			return
		}
		if time.Now().After(deadline) {
			if len(procs) > 0 {
				t.Errorf("left behind: rank processes %v of a job in %s", procs, tmp)
			}
			if !os.IsNotExist(dirErr) {
				t.Errorf("left behind: session directory %s (%v)", userDir, listDir(userDir))
			}
			if len(shm) > 0 {
				t.Errorf("left behind: shared-memory files %v", shm)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// PidsWhere returns the pids of the processes for which match, given the
// process's /proc directory (/proc/PID), reports true.
func PidsWhere(match func(procDir string) bool) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && match("/proc/"+e.Name()) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ProcsUnder returns the pids of the processes whose environment has
// GORUN_SESSION_DIR under dir (zombies have no environment to read).
func ProcsUnder(dir string) []int {
	want := []byte("GORUN_SESSION_DIR=" + filepath.Clean(dir) + "/")
	return PidsWhere(func(proc string) bool {
		env, _ := os.ReadFile(proc + "/environ")
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.HasPrefix(kv, want) {
				return true
			}
		}
		return false
	})
}

// JanitorsUnder returns the pids of the job janitors (gorun's helper that
// cleans up after a killed gorun, launcher/janitor.go) whose session
// directory is under dir: gorun __gorun-janitor SESSIONDIR ...
func JanitorsUnder(dir string) []int {
	prefix := filepath.Clean(dir) + "/"
	return PidsWhere(func(proc string) bool {
		cmd, _ := os.ReadFile(proc + "/cmdline")
		args := strings.Split(string(cmd), "\x00")
		return len(args) > 2 && args[1] == "__gorun-janitor" && strings.HasPrefix(args[2], prefix)
	})
}

func listDir(dir string) string {
	var names []string
	filepath.WalkDir(dir, func(path string, _ os.DirEntry, _ error) error {
		names = append(names, strings.TrimPrefix(path, dir))
		return nil
	})
	return strings.Join(names, " ")
}
