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

// RemoveJobFiles removes what a job may leave outside its session directory
// (the shared-memory files, by the naming convention in /dev/shm and in
// backingDir, and the file named by the segment descriptor), then the
// session directory itself. Only regular files of uid are removed: a file
// another user put there stays.
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
	os.RemoveAll(dir)
}
