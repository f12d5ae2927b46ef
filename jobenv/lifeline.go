package jobenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

var rankInit struct {
	once sync.Once
	err  error
}

// Watch is called once by gorun.Init in a rank started by gorun (GORUN_RANK
// set). It starts watching the launcher's lifeline so that the rank ends when
// gorun dies, even by SIGKILL: on end-of-file it removes the session
// directory and the job's shared-memory file, then exits with status 1.
// Later calls return the first call's result.
func Watch() error {
	rankInit.once.Do(func() { rankInit.err = watchLifeline() })
	return rankInit.err
}

func watchLifeline() error {
	v, ok := os.LookupEnv(EnvLifelineFD)
	if !ok {
		return nil // not started by this gorun; Pdeathsig still covers us
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return fmt.Errorf("gorun: %s=%q; want a descriptor number >= 3", EnvLifelineFD, clip(v))
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return fmt.Errorf("gorun: %s=%d is not an open pipe (was the rank started by gorun?)", EnvLifelineFD, fd)
	}
	unix.CloseOnExec(fd) // the rank's own children must not hold it
	f := os.NewFile(uintptr(fd), "gorun-lifeline")
	dir, jobID := os.Getenv(EnvSessionDir), os.Getenv(EnvJobID)
	go func() {
		// gorun never writes: Read returns only when every write end is
		// closed, which is when gorun has exited.
		var b [1]byte
		for {
			if _, err := f.Read(b[:]); err != nil {
				break
			}
		}
		launcherGone(dir, jobID)
	}()
	return nil
}

// launcherGone cleans up after a dead launcher and ends the rank. Every rank
// does it; removing the same files twice is harmless.
func launcherGone(dir, jobID string) {
	if dir != "" && JobIDPattern.MatchString(jobID) && filepath.Base(dir) == jobID {
		RemoveJobFiles(dir, os.Getuid(), jobID, "")
		os.Remove(filepath.Dir(dir))
	}
	os.Exit(1)
}
