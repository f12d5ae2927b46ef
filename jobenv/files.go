package jobenv

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"

	"github.com/gorun-mpi/gorun/rndv"
)

// JobIDPattern is the form of the job ids gorun makes: its pid and 32
// random bits. Only directories of this form are ever cleaned up.
var JobIDPattern = regexp.MustCompile(`^[1-9][0-9]*-[0-9a-f]{8}$`)

// ShmGlob matches the shared-memory files of a job, by the convention
// mpool follows: gorun-<uid>-<jobid>-<random>.seg (the random part keeps
// other users from predicting the name). jobID must match JobIDPattern.
func ShmGlob(uid int, jobID string) string {
	return "gorun-" + strconv.Itoa(uid) + "-" + jobID + "-*.seg"
}

// LauncherFile, in each session directory, holds the record of the gorun
// that owns it (its pid and start time: launcher.sessionIsStale).
const LauncherFile = "launcher"

// RemoveJobFiles removes what a job may leave outside its session directory
// (the shared-memory files, by the naming convention in /dev/shm and in
// backingDir, and the file named by the segment descriptor), then the
// session directory itself, its launcher record last: a removal cut short
// (a rank that cleans up after a dead gorun gets its parent-death SIGKILL
// meanwhile) leaves the record, by which the next job sees that the
// session's gorun is gone and removes the rest. Without it, the directory,
// its modification time just renewed by the removal, would pass for one
// being created (TestKillGorunAndJanitor failed once so, the next job
// leaving the session and its segment behind). Only regular files of uid
// are removed: a file another user put there stays.
func RemoveJobFiles(dir string, uid int, jobID, backingDir string) {
	var paths []string
	for _, d := range []string{"/dev/shm", backingDir} {
		if d != "" {
			m, _ := filepath.Glob(filepath.Join(d, ShmGlob(uid, jobID)))
			paths = append(paths, m...)
		}
	}
	if seg, err := rndv.ReadSegment(dir); err == nil {
		paths = append(paths, seg.Path)
	}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
			os.Remove(p)
		}
	}
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if e.Name() != LauncherFile {
				removeAll(filepath.Join(dir, e.Name()))
			}
		}
	}
	removeAll(dir)
}

// removeAll is os.RemoveAll; a test cuts RemoveJobFiles short through it.
var removeAll = os.RemoveAll
