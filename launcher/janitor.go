package launcher

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/jobenv"
)

// The janitor: a second gorun process, in a session of its own, that
// outlives gorun when gorun is killed (even by SIGKILL, or by the OOM
// killer) and then leaves nothing behind: it waits for the job's processes
// to end (ranks get Pdeathsig; so does a `go build`), kills those that
// linger, and removes the session directory and the job's shared-memory
// files. It learns that gorun is gone from a pipe whose write end only
// gorun holds (end-of-file). When gorun ends normally, it has removed
// everything itself before closing the pipe, and the janitor just exits.

// JanitorArg, as the first argument of the gorun command, makes it run as
// a job's janitor (RunJanitor) instead of parsing a command line.
const JanitorArg = "__gorun-janitor"

// Bounds of the janitor's work after gorun died: the job's processes get
// janitorGrace to end on their own (their Pdeathsig and lifeline), then
// SIGKILL; the janitor gives up waiting after janitorLimit. Both well
// inside the contract's 15 s.
const (
	janitorGrace = 2 * time.Second
	janitorLimit = 8 * time.Second
)

// startJanitor starts exe as the janitor of s. stop, called after s is
// closed, tells it gorun ended normally and reaps it.
func startJanitor(exe string, s *session, backingDir string) (stop func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting the job's janitor: %v", err)
	}
	cmd := exec.Command(exe, JanitorArg, s.dir, s.jobID, backingDir)
	cmd.ExtraFiles = []*os.File{r} // fd 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("starting the job's janitor %s: %v", exe, err)
	}
	return func() {
		w.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}, nil
}

// RunJanitor is the janitor's main: args are the session directory, the
// job id and btl_sm_backing_directory; fd 3 is the pipe from gorun. It
// returns the process's exit status.
func RunJanitor(args []string) int {
	if len(args) != 3 || !jobenv.JobIDPattern.MatchString(args[1]) || filepath.Base(args[0]) != args[1] {
		fmt.Fprintf(os.Stderr, "gorun: %s is gorun's own helper; not for use by hand\n", JanitorArg)
		return ExitUsage
	}
	dir, jobID, backingDir := args[0], args[1], args[2]
	signal.Ignore(unix.SIGINT, unix.SIGHUP, unix.SIGTERM, unix.SIGPIPE)
	io.Copy(io.Discard, os.NewFile(3, "gorun-janitor")) // until gorun is gone
	cleanAfter(dir, jobID, backingDir)
	return 0
}

// cleanAfter is the janitor's work once gorun is gone: wait for the job's
// processes (kill those that linger), remove the job's files, then the
// per-user directory if that is now empty. The last step runs even when
// the session directory is already gone: a rank that saw the lifeline end
// may have removed it and been killed by its Pdeathsig before it removed
// the per-user directory (TestKillGorunLeavesNothing failed so in a
// clean-clone CI run, an empty gorun-<uid> left behind).
func cleanAfter(dir, jobID, backingDir string) {
	defer os.Remove(filepath.Dir(dir)) // fails, as it should, while other jobs use it
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return // gorun, or a rank, removed it
	}
	uid := os.Getuid()
	start := time.Now()
	for killed := false; time.Since(start) < janitorLimit; time.Sleep(50 * time.Millisecond) {
		pids := jobProcesses(dir, uid)
		if len(pids) == 0 {
			break
		}
		if !killed && time.Since(start) >= janitorGrace {
			for _, pid := range pids {
				unix.Kill(pid, unix.SIGKILL)
			}
			killed = true
		}
	}
	jobenv.RemoveJobFiles(dir, uid, jobID, backingDir)
}

// jobProcesses returns the processes of user uid whose environment sets
// GORUN_SESSION_DIR to dir: the job's ranks, their children, and a build
// gorun started (zombies have no environment and are not listed).
func jobProcesses(dir string, uid int) []int {
	want := []byte(jobenv.EnvSessionDir + "=" + dir + "\x00")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if fi, err := os.Stat("/proc/" + e.Name()); err != nil || int(fi.Sys().(*syscall.Stat_t).Uid) != uid {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		if bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)) {
			pids = append(pids, pid)
		}
	}
	return pids
}
