package launcher

import (
	"reflect"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestJobState drives the exit rules with events alone, no processes.
func TestJobState(t *testing.T) {
	exit := func(rank, code int, how string) event { return event{kind: evExit, rank: rank, code: code, how: how} }
	sig := func(s unix.Signal) event { return event{kind: evSignal, sig: s} }
	stopWith := func(s unix.Signal) []action { return []action{{kind: actSignal, sig: s}, {kind: actStartGrace}} }
	kill := []action{{kind: actSignal, sig: unix.SIGKILL}}
	type step struct {
		ev   event
		want []action
	}
	tests := []struct {
		name    string
		ranks   int
		steps   []step
		status  int
		summary string
	}{
		{"all succeed", 2, []step{
			{exit(1, 0, "exited with status 0"), []action{{kind: actRecordGone, rank: 1, how: "exited with status 0"}}},
			{exit(0, 0, "exited with status 0"), []action{{kind: actRecordGone, rank: 0, how: "exited with status 0"}}},
		}, 0, ""},
		{"first failure decides, the rest are not reported", 3, []step{
			{exit(2, 3, "exited with status 3"), append([]action{{kind: actReportFailure, rank: 2, how: "exited with status 3"}}, stopWith(unix.SIGTERM)...)},
			{exit(0, 143, "killed by signal SIGTERM"), nil},
			{event{kind: evGraceOver}, kill},
			{exit(1, 137, "killed by signal SIGKILL"), nil},
		}, 3, ""},
		{"success after a failure records nothing", 2, []step{
			{exit(0, 1, "exited with status 1"), append([]action{{kind: actReportFailure, rank: 0, how: "exited with status 1"}}, stopWith(unix.SIGTERM)...)},
			{exit(1, 0, "exited with status 0"), nil},
		}, 1, ""},
		{"interrupt forwards the signal; a second one kills", 2, []step{
			{sig(unix.SIGINT), stopWith(unix.SIGINT)},
			{sig(unix.SIGINT), kill},
			{exit(0, 130, "killed by signal SIGINT"), nil},
			{exit(1, 137, "killed by signal SIGKILL"), nil},
		}, 130, "gorun: job interrupted by SIGINT"},
		{"timeout sends SIGQUIT; a later signal does not change the status", 1, []step{
			{event{kind: evTimeout}, stopWith(unix.SIGQUIT)},
			{sig(unix.SIGTERM), kill},
			{exit(0, 131, "killed by signal SIGQUIT"), nil},
		}, ExitTimeout, "gorun: job timed out after 1s"},
		{"timeout after a failure changes nothing", 2, []step{
			{exit(0, 2, "exited with status 2"), append([]action{{kind: actReportFailure, rank: 0, how: "exited with status 2"}}, stopWith(unix.SIGTERM)...)},
			{event{kind: evTimeout}, nil},
			{exit(1, 143, "killed by signal SIGTERM"), nil},
		}, 2, ""},
		{"a rank that cannot start", 1, []step{
			{event{kind: evStartFailed}, kill},
			{exit(0, 137, "killed by signal SIGKILL"), nil},
		}, ExitUsage, ""},
	}
	for _, tt := range tests {
		st := newJobState(tt.ranks)
		for i, s := range tt.steps {
			if st.done() {
				t.Fatalf("%s: done before step %d", tt.name, i)
			}
			if got := st.step(s.ev); !reflect.DeepEqual(got, s.want) {
				t.Errorf("%s: step %d (%+v) = %+v; want %+v", tt.name, i, s.ev, got, s.want)
			}
		}
		if !st.done() || st.status != tt.status || st.summary(time.Second) != tt.summary {
			t.Errorf("%s: done %v, status %d, summary %q; want true, %d, %q", tt.name, st.done(), st.status, st.summary(time.Second), tt.status, tt.summary)
		}
	}
}
