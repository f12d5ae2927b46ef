package jobenv

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/gorun-mpi/gorun/rndv"
)

// JobIDPattern is the form of the job ids gorun makes: its pid and 32
// random bits. Only directories of this form are ever cleaned up.
var JobIDPattern = regexp.MustCompile(`^[1-9][0-9]*-[0-9a-f]{8}$`)

// ShmName is the shared-memory file of a job, by the convention btl/sm follows.
func ShmName(uid int, jobID string) string {
	return "gorun-" + strconv.Itoa(uid) + "-" + jobID + ".seg"
}

// RemoveJobFiles removes what a job may leave outside its session directory
// (the shared-memory file, by the naming convention in /dev/shm and in
// backingDir, and the file named by the segment descriptor), then the
// session directory itself.
func RemoveJobFiles(dir string, uid int, jobID, backingDir string) {
	name := ShmName(uid, jobID)
	paths := []string{filepath.Join("/dev/shm", name)}
	if backingDir != "" {
		paths = append(paths, filepath.Join(backingDir, name))
	}
	if seg, err := rndv.ReadSegment(dir); err == nil {
		paths = append(paths, seg.Path)
	}
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			os.Remove(p)
		}
	}
	os.RemoveAll(dir)
}
