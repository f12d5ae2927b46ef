package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/gorun-mpi/gorun/jobenv"
	"github.com/gorun-mpi/gorun/rndv"
)

// launcherFile, in each session directory, holds the launcherRecord of the
// gorun that owns it (jobenv.RemoveJobFiles removes it last).
const launcherFile = jobenv.LauncherFile

// staleAge: a session directory without a readable launcher file is taken
// for one being created (Mkdir, then the file) until it is this old.
const staleAge = 10 * time.Second

// session is one job's session directory, $TMPDIR/gorun-<uid>/<jobid>.
type session struct {
	uid     int
	userDir string // $TMPDIR/gorun-<uid>, shared by the user's jobs
	dir     string // userDir/<jobid>
	jobID   string
}

// openSession creates the job's session directory under tmp (mode 0700),
// after checking the per-user directory and removing its stale sessions.
// backingDir is btl_sm_backing_directory ("" when unset).
// sessionAttempts bounds openSession's retries after the per-user
// directory vanished under it.
const sessionAttempts = 1000

func openSession(tmp string, uid int, backingDir string, log func(string, ...any)) (*session, error) {
	userDir := filepath.Join(tmp, "gorun-"+strconv.Itoa(uid))
	rec := launcherRecord{Pid: os.Getpid()}
	var err error
	if rec.Start, err = procStartTime(rec.Pid); err != nil {
		return nil, fmt.Errorf("reading our own start time: %v", err)
	}
	// A concurrent gorun (or a janitor) may remove the empty per-user
	// directory between our Mkdir of it and our Mkdir in it, its check
	// included; try again. Each such failure means that another job ended
	// meanwhile, so the attempts bound a livelock, not a wait: with four
	// goroutines opening and closing sessions in a loop on a loaded machine,
	// 5 attempts ran out (3 of 1200 sessions failed).
	for attempt := 0; ; attempt++ {
		if err := os.Mkdir(userDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("creating session directory %s: %v", userDir, err)
		}
		if err := checkOwnDir(userDir, uid, 0o022); err != nil {
			if errors.Is(err, fs.ErrNotExist) && attempt < sessionAttempts {
				continue
			}
			return nil, err
		}
		if attempt == 0 {
			removeStaleSessions(userDir, uid, backingDir, log)
		}
		s := &session{uid: uid, userDir: userDir, jobID: newJobID()}
		s.dir = filepath.Join(userDir, s.jobID)
		err := os.Mkdir(s.dir, 0o700)
		if errors.Is(err, fs.ErrNotExist) && attempt < sessionAttempts {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("creating session directory %s: %v", s.dir, err)
		}
		if err := checkOwnDir(s.dir, uid, 0o077); err != nil {
			return nil, err
		}
		if err := rndv.WriteAtomic(filepath.Join(s.dir, launcherFile), formatLauncherRecord(rec)); err != nil {
			os.RemoveAll(s.dir)
			return nil, err
		}
		return s, nil
	}
}

// checkOwnDir verifies that path is a real directory (not a symbolic link),
// owned by uid, with none of the forbidden permission bits.
func checkOwnDir(path string, uid int, forbidden fs.FileMode) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("checking session directory %s: %w", path, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("session directory %s is a symbolic link; refusing to use it (remove it, or set TMPDIR to another directory)", path)
	case !fi.IsDir():
		return fmt.Errorf("session directory %s is not a directory (%v); refusing to use it (remove it, or set TMPDIR to another directory)", path, fi.Mode().Type())
	case !ok || int(st.Uid) != uid:
		owner := -1
		if ok {
			owner = int(st.Uid)
		}
		return fmt.Errorf("session directory %s is owned by uid %d, not by us (uid %d); refusing to use it (set TMPDIR to another directory)", path, owner, uid)
	case fi.Mode().Perm()&forbidden != 0:
		return fmt.Errorf("session directory %s has mode %04o; refusing to use it: it must not be writable by group or others (chmod 700 it)", path, fi.Mode().Perm())
	}
	return nil
}

func newJobID() string {
	var b [4]byte
	rand.Read(b[:])
	return strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// close removes the job's files and session directory, then the per-user
// directory if that is now empty.
func (s *session) close(backingDir string) {
	jobenv.RemoveJobFiles(s.dir, s.uid, s.jobID, backingDir)
	os.Remove(s.userDir) // fails, as it should, while other jobs use it
}

// removeStaleSessions removes every session directory in userDir whose
// launcher no longer runs, with the job's shared-memory files.
func removeStaleSessions(userDir string, uid int, backingDir string, log func(string, ...any)) {
	entries, err := os.ReadDir(userDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !jobenv.JobIDPattern.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(userDir, e.Name())
		if !sessionIsStale(dir) {
			continue
		}
		log("removing stale session directory", "dir", dir)
		jobenv.RemoveJobFiles(dir, uid, e.Name(), backingDir)
	}
}

// sessionIsStale reports whether dir belongs to a gorun that is gone.
func sessionIsStale(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, launcherFile))
	if err == nil {
		if rec, err := parseLauncherRecord(data); err == nil {
			return !rec.alive()
		}
	}
	// No readable record: a job being created, or one that died right after
	// its Mkdir. Only age tells them apart.
	fi, err := os.Lstat(dir)
	return err == nil && time.Since(fi.ModTime()) > staleAge
}
