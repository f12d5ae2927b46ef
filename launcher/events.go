package launcher

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The exit rules of a running job, as a state machine without processes:
// runRanks feeds it events (a rank exited, a signal came, the timeout or
// the stop grace expired) and carries out the actions it returns. Only the
// first event that ends the job (a rank's failure, a signal, the timeout)
// decides gorun's status.

// Phases of a job.
const (
	phaseRunning = iota
	phaseFailed
	phaseInterrupted
	phaseTimedOut
)

// eventKind says what happened.
type eventKind int

const (
	evExit        eventKind = iota // rank ended: code (0 = success) and how
	evSignal                       // gorun got sig (SIGINT, SIGTERM, SIGHUP)
	evTimeout                      // --timeout expired
	evGraceOver                    // stopGrace passed since the ranks were told to stop
	evStartFailed                  // a rank could not be started
)

// event is one input of the state machine.
type event struct {
	kind eventKind
	rank int            // evExit
	code int            // evExit: gorun's status for the rank, 0 on success
	how  string         // evExit: "exited with status 3", "killed by signal SIGKILL"
	sig  syscall.Signal // evSignal
}

// actionKind says what runRanks must do.
type actionKind int

const (
	actRecordGone    actionKind = iota // rank ended with 0 while the job runs: tell the ranks waiting in Init
	actReportFailure                   // say on stderr that rank failed, and how (and its Abort code)
	actSignal                          // send sig to every rank not yet reaped
	actStartGrace                      // deliver evGraceOver after stopGrace
)

// action is one output of the state machine.
type action struct {
	kind actionKind
	rank int            // actRecordGone, actReportFailure
	how  string         // actRecordGone, actReportFailure
	sig  syscall.Signal // actSignal
}

// jobState is the state of the exit rules.
type jobState struct {
	phase     int
	status    int            // gorun's exit status once the job ends
	live      int            // ranks started and not yet reaped
	interrupt syscall.Signal // the signal that interrupted the job
}

func newJobState(started int) *jobState { return &jobState{live: started} }

// done reports whether every started rank has been reaped.
func (s *jobState) done() bool { return s.live == 0 }

// stop ends the job: every live rank gets sig, then SIGKILL after the grace.
func stop(sig syscall.Signal) []action {
	return []action{{kind: actSignal, sig: sig}, {kind: actStartGrace}}
}

// step applies one event and returns what to do, in order.
func (s *jobState) step(ev event) []action {
	switch ev.kind {
	case evExit:
		s.live--
		switch {
		case ev.code == 0 && s.phase == phaseRunning:
			return []action{{kind: actRecordGone, rank: ev.rank, how: ev.how}}
		case ev.code == 0 || s.phase != phaseRunning: // ended because we stopped it
			return nil
		}
		s.phase, s.status = phaseFailed, ev.code
		return append([]action{{kind: actReportFailure, rank: ev.rank, how: ev.how}}, stop(unix.SIGTERM)...)
	case evSignal:
		if s.phase != phaseRunning { // a second signal: no more grace
			return []action{{kind: actSignal, sig: unix.SIGKILL}}
		}
		s.phase, s.status, s.interrupt = phaseInterrupted, signalStatus(ev.sig), ev.sig
		return stop(ev.sig)
	case evTimeout:
		if s.phase != phaseRunning {
			return nil
		}
		s.phase, s.status = phaseTimedOut, ExitTimeout
		return stop(unix.SIGQUIT) // Go ranks dump every goroutine's stack
	case evGraceOver:
		return []action{{kind: actSignal, sig: unix.SIGKILL}}
	case evStartFailed:
		s.phase, s.status = phaseFailed, ExitUsage
		return []action{{kind: actSignal, sig: unix.SIGKILL}}
	}
	panic(fmt.Sprintf("launcher: unknown event kind %d", ev.kind))
}

// summary is gorun's last line for a job that timed out or was
// interrupted, or "" (a failure is reported when it happens).
func (s *jobState) summary(timeout time.Duration) string {
	switch s.phase {
	case phaseTimedOut:
		return fmt.Sprintf("gorun: job timed out after %v", timeout)
	case phaseInterrupted:
		return "gorun: job interrupted by " + signalName(s.interrupt)
	}
	return ""
}

// signalStatus is 128+N for signal N.
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
