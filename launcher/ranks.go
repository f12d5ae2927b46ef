package launcher

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/jobenv"
	"github.com/gorun-mpi/gorun/rndv"
)

// runRanks starts the ranks, forwards their I/O and signals, applies the
// exit rules (jobState), and returns gorun's status once every rank is
// reaped.
func (j *job) runRanks(path, mcaEnc string, sigs <-chan os.Signal) int {
	lifeR, lifeW, err := os.Pipe() // both ends close-on-exec in gorun
	if err != nil {
		return j.fail("creating the lifeline pipe: %v", err)
	}
	defer lifeW.Close() // after every rank is reaped (defers run last-in first-out)

	sp := newSpawner()
	defer sp.stop()

	var output sync.WaitGroup
	exits := make(chan exitEvent, j.o.NP)
	startErr := j.startRanks(sp, path, j.rankEnv(mcaEnc), lifeR, &output, exits)
	st := newJobState(len(j.ranks))
	var timeoutC <-chan time.Time
	if startErr != nil {
		j.fail("%v", startErr)
		j.apply(st.step(event{kind: evStartFailed}), nil)
	} else if j.o.Timeout > 0 {
		timeoutC = time.After(j.o.Timeout)
	}
	j.eventLoop(st, exits, sigs, timeoutC)

	// Descendants the ranks left in their process groups go too.
	for _, r := range j.ranks {
		unix.Kill(-r.cmd.Process.Pid, unix.SIGKILL)
	}
	waitTimeout(&output, drainWait)
	if line := st.summary(j.o.Timeout); line != "" {
		j.stderr.printf("%s", line)
	}
	return st.status
}

// startRanks starts ranks 0..NP-1 in order, each reported on exits once
// reaped, and stops at the first that cannot start. It closes gorun's
// copies of the lifeline's read end and of rank 0's stdin.
func (j *job) startRanks(sp *spawner, path string, env []string, lifeR *os.File, output *sync.WaitGroup, exits chan<- exitEvent) error {
	stdin := j.rank0Stdin()
	defer lifeR.Close()
	if stdin != nil {
		defer stdin.Close()
	}
	for id := 0; id < j.o.NP; id++ {
		r, err := j.startRank(sp, id, path, env, lifeR, stdin, output)
		if err != nil {
			return err
		}
		j.ranks = append(j.ranks, r)
		go func() {
			r.cmd.Wait()
			exits <- exitEvent{r, r.cmd.ProcessState}
		}()
	}
	return nil
}

// eventLoop feeds st the job's events until every started rank is reaped.
func (j *job) eventLoop(st *jobState, exits <-chan exitEvent, sigs <-chan os.Signal, timeoutC <-chan time.Time) {
	var graceC <-chan time.Time
	for !st.done() {
		var ev event
		select {
		case x := <-exits:
			x.r.done = true
			code, how := exitStatus(x.state)
			if code == 0 && jobenv.Unfinalized(j.sess.dir, x.r.id) {
				// Called Init, never Finalize: its peers may be waiting
				// for it (Open MPI aborts the job then too).
				code, how = 1, how+" without calling Finalize"
			}
			j.log.Debug("rank exited", "rank", x.r.id, "pid", x.r.cmd.Process.Pid, "how", how)
			ev = event{kind: evExit, rank: x.r.id, code: code, how: how}
		case sig := <-sigs:
			j.log.Debug("forwarding signal", "signal", sig)
			ev = event{kind: evSignal, sig: sig.(syscall.Signal)}
		case <-timeoutC:
			ev = event{kind: evTimeout}
		case <-graceC:
			graceC = nil
			ev = event{kind: evGraceOver}
		}
		if c := j.apply(st.step(ev), nil); c != nil {
			graceC = c
		}
	}
}

// apply carries out actions; it returns the grace timer's channel when
// one of them starts it (else grace).
func (j *job) apply(actions []action, grace <-chan time.Time) <-chan time.Time {
	for _, a := range actions {
		switch a.kind {
		case actRecordGone:
			j.recordGone(a.rank, a.how)
		case actReportFailure:
			if code, err := jobenv.ReadAbort(j.sess.dir, a.rank); err == nil {
				j.stderr.printf("gorun: rank %d called Abort(%d)", a.rank, code)
			}
			j.stderr.printf("gorun: rank %d (pid %d) %s", a.rank, j.ranks[a.rank].cmd.Process.Pid, a.how)
		case actSignal:
			j.signalLive(a.sig)
		case actStartGrace:
			grace = time.After(stopGrace)
		}
	}
	return grace
}

// startRank starts rank id on the spawner's thread, with its own process
// group (so the terminal's Ctrl-C reaches gorun only), Pdeathsig, the
// lifeline as fd 3, and its output forwarded line by line.
func (j *job) startRank(sp *spawner, id int, path string, env []string, lifeline, stdin *os.File, output *sync.WaitGroup) (*rankProc, error) {
	cmd := exec.Command(path, j.o.Args...)
	cmd.Env = append(env[:len(env):len(env)], jobenv.EnvRank+"="+strconv.Itoa(id), jobenv.EnvLocalRank+"="+strconv.Itoa(id))
	cmd.ExtraFiles = []*os.File{lifeline} // fd 3 == jobenv.LifelineFD
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
	err := sp.start(cmd, bindable(j.cfg, j.o.Environ), j.o.NP, id)
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
// Init (plain programs) do not read it. A rank that finalized has its
// card renamed (jobenv.RecordFinalize): it joined too.
func (j *job) recordGone(id int, how string) {
	if jobenv.Joined(j.sess.dir, id) {
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
