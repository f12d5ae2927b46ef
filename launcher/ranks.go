package launcher

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/rndv"
)

// Phases of a job, in the event loop. Only the first event that ends the
// job (a rank's failure, a signal, the timeout) decides gorun's status.
const (
	phaseRunning = iota
	phaseFailed
	phaseInterrupted
	phaseTimedOut
)

// runRanks starts the ranks, forwards their I/O and signals, applies the
// exit rules, and returns gorun's status once every rank is reaped.
func (j *job) runRanks(path, mcaEnc string, sigs <-chan os.Signal) int {
	lifeR, lifeW, err := os.Pipe() // both ends close-on-exec in gorun
	if err != nil {
		return j.fail("creating the lifeline pipe: %v", err)
	}
	defer lifeW.Close() // after every rank is reaped (defers run last-in first-out)

	sp := newSpawner()
	defer sp.stop()

	stdin := j.rank0Stdin()

	env := j.rankEnv(mcaEnc)
	var output sync.WaitGroup
	exits := make(chan exitEvent, j.o.NP)
	startErr := error(nil)
	for id := 0; id < j.o.NP; id++ {
		r, err := j.startRank(sp, id, path, env, lifeR, stdin, &output)
		if err != nil {
			startErr = err
			break
		}
		j.ranks = append(j.ranks, r)
		go func() {
			r.cmd.Wait()
			exits <- exitEvent{r, r.cmd.ProcessState}
		}()
	}
	lifeR.Close()
	if stdin != nil {
		stdin.Close()
	}

	phase, status := phaseRunning, 0
	var interrupt os.Signal // the signal that interrupted the job
	var killC, timeoutC <-chan time.Time
	if startErr != nil {
		phase, status = phaseFailed, j.fail("%v", startErr)
		j.signalLive(unix.SIGKILL)
	} else if j.o.Timeout > 0 {
		timeoutC = time.After(j.o.Timeout)
	}
	stopAll := func(sig syscall.Signal) {
		j.signalLive(sig)
		killC = time.After(stopGrace)
	}
	for live := len(j.ranks); live > 0; {
		select {
		case ev := <-exits:
			live--
			ev.r.done = true
			code, how := exitStatus(ev.state)
			j.log.Debug("rank exited", "rank", ev.r.id, "pid", ev.r.cmd.Process.Pid, "how", how)
			if code == 0 && phase == phaseRunning {
				j.recordGone(ev.r.id, how)
			}
			if code == 0 || phase != phaseRunning {
				continue
			}
			phase, status = phaseFailed, code
			if abortCode, err := readAbortRecord(j.sess.dir, ev.r.id); err == nil {
				j.stderr.printf("gorun: rank %d called Abort(%d)", ev.r.id, abortCode)
			}
			j.stderr.printf("gorun: rank %d (pid %d) %s", ev.r.id, ev.r.cmd.Process.Pid, how)
			stopAll(unix.SIGTERM)
		case sig := <-sigs:
			if phase != phaseRunning { // a second signal: no more grace
				j.signalLive(unix.SIGKILL)
				continue
			}
			phase, status, interrupt = phaseInterrupted, signalStatus(sig), sig
			j.log.Debug("forwarding signal", "signal", sig)
			stopAll(sig.(syscall.Signal))
		case <-timeoutC:
			if phase == phaseRunning {
				phase, status = phaseTimedOut, ExitTimeout
				stopAll(unix.SIGQUIT) // Go ranks dump every goroutine's stack
			}
		case <-killC:
			killC = nil
			j.signalLive(unix.SIGKILL)
		}
	}

	// Descendants the ranks left in their process groups go too.
	for _, r := range j.ranks {
		unix.Kill(-r.cmd.Process.Pid, unix.SIGKILL)
	}
	waitTimeout(&output, drainWait)
	switch phase {
	case phaseTimedOut:
		j.stderr.printf("gorun: job timed out after %v", j.o.Timeout)
	case phaseInterrupted:
		j.stderr.printf("gorun: job interrupted by %s", signalName(interrupt))
	}
	return status
}

// startRank starts rank id on the spawner's thread, with its own process
// group (so the terminal's Ctrl-C reaches gorun only), Pdeathsig, the
// lifeline as fd 3, and its output forwarded line by line.
func (j *job) startRank(sp *spawner, id int, path string, env []string, lifeline, stdin *os.File, output *sync.WaitGroup) (*rankProc, error) {
	cmd := exec.Command(path, j.o.Args...)
	cmd.Env = append(env[:len(env):len(env)], EnvRank+"="+strconv.Itoa(id), EnvLocalRank+"="+strconv.Itoa(id))
	cmd.ExtraFiles = []*os.File{lifeline} // fd 3 == lifelineFD
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if id == 0 && stdin != nil {
		cmd.Stdin = stdin
	}
	prefix := ""
	if j.o.TagOutput {
		prefix = "[" + strconv.Itoa(id) + "] "
	}
	var readers, writers []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	for range 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(readers)
			closeAll(writers)
			return nil, fmt.Errorf("starting rank %d: creating an output pipe: %v", id, err)
		}
		readers, writers = append(readers, r), append(writers, w)
	}
	cmd.Stdout, cmd.Stderr = writers[0], writers[1]
	err := sp.start(cmd)
	closeAll(writers) // the rank holds its own copies
	if err != nil {
		closeAll(readers)
		return nil, fmt.Errorf("starting rank %d (%s): %v", id, path, err)
	}
	for i, s := range []*sink{j.stdout, j.stderr} {
		output.Add(1)
		go func() {
			defer output.Done()
			defer readers[i].Close()
			forwardLines(readers[i], s, prefix)
		}()
	}
	return &rankProc{id: id, cmd: cmd}, nil
}

// recordGone tells the ranks waiting in Init that rank id, which ended
// with status 0, will never publish its business card (rndv.PublishGone):
// without the record they would wait for it until rndv_base_timeout. A
// rank that did publish its card needs no record; ranks that never call
// Init (plain programs) do not read it.
func (j *job) recordGone(id int, how string) {
	if _, err := os.Lstat(rndv.CardPath(j.sess.dir, id)); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	g := rndv.Gone{Version: rndv.GoneVersion, Rank: id, How: how}
	if err := rndv.PublishGone(j.sess.dir, g); err != nil {
		j.log.Warn("cannot record a rank that ended before Init", "rank", id, "error", err)
	}
}

// signalLive sends sig to the process group of every rank not yet reaped.
func (j *job) signalLive(sig syscall.Signal) {
	for _, r := range j.ranks {
		if !r.done {
			unix.Kill(-r.cmd.Process.Pid, sig)
		}
	}
}

// signalName is "SIGINT" for SIGINT.
func signalName(sig os.Signal) string {
	if s, ok := sig.(syscall.Signal); ok {
		if name := unix.SignalName(s); name != "" {
			return name
		}
	}
	return sig.String()
}

// exitStatus turns a rank's end into gorun's status for it (0 on success)
// and the words of the failure line.
func exitStatus(st *os.ProcessState) (int, string) {
	ws, ok := st.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = "signal " + strconv.Itoa(int(ws.Signal()))
		}
		return 128 + int(ws.Signal()), "killed by signal " + name
	case ok && ws.Exited():
		return ws.ExitStatus(), "exited with status " + strconv.Itoa(ws.ExitStatus())
	}
	return 1, "ended: " + st.String()
}

// rank0Stdin returns the file rank 0 reads as stdin (nil: /dev/null),
// which runRanks closes once rank 0 is started. A file that is not a terminal is
// passed as is, so rank 0 sees exactly gorun's stdin and its EOF. Anything
// else is copied through a pipe by gorun, which then reads the terminal in
// its place: rank 0 is not in the terminal's foreground process group and
// would be stopped (SIGTTIN) reading it. A terminal on which gorun itself
// runs in the background is not read at all.
func (j *job) rank0Stdin() *os.File {
	in := j.o.Stdin
	if in == nil {
		return nil
	}
	if f, ok := in.(*os.File); ok {
		if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err != nil {
			return dupFile(f)
		}
		if pg, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP); err != nil || pg != unix.Getpgrp() {
			return nil
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	go func() {
		io.Copy(w, in) // ends at EOF, or with EPIPE once rank 0 is gone
		w.Close()
	}()
	return r
}

// dupFile returns a copy of f that runRanks may close, or nil (/dev/null
// for rank 0) when f cannot be duplicated.
func dupFile(f *os.File) *os.File {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), f.Name())
}

// waitTimeout waits for wg, at most d.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
