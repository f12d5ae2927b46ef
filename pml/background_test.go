package pml

import (
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/btl"
)

// progressorMod is a fake module that asks to be polled every `every`
// (btl.Progressor), as btl/tcp does.
type progressorMod struct {
	*fakeMod
	every time.Duration
}

func (m progressorMod) ProgressWithin() time.Duration { return m.every }

// eventually polls cond until it holds, failing after a generous bound (a
// liveness check, not a timing one).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(hangDeadline); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, hangDeadline)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBackgroundProgressDelivers: a rank whose module is a Progressor
// receives into a posted receive while none of its goroutines calls the
// PML (a program computing between calls), and the poller ends at Close;
// a rank without one starts no poller.
func TestBackgroundProgressDelivers(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	var pmls [2]*PML
	for i := range pmls {
		var m btl.Module = net.mods[i]
		if i == 1 {
			m = progressorMod{net.mods[i], time.Millisecond}
		}
		p, err := New(Config{Rank: i, Size: 2, Modules: []btl.Module{m}, SpinCount: 1, SleepTimeout: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		pmls[i] = p
	}
	if pmls[0].bgStop != nil {
		t.Error("a PML without a btl.Progressor started a background poller")
	}
	if pmls[1].bgStop == nil {
		t.Fatal("a PML over a btl.Progressor started no background poller")
	}
	var r Request
	buf := make([]byte, 3)
	if err := pmls[1].World().Irecv(&r, buf, 0, 5); err != nil {
		t.Fatal(err)
	}
	if err := pmls[0].World().Send([]byte("abc"), 1, 5, false); err != nil {
		t.Fatal(err)
	}
	// Done does not progress: only the poller can complete r.
	eventually(t, "the posted receive completed by background progress", r.Done)
	if string(buf) != "abc" {
		t.Errorf("received %q; want %q", buf, "abc")
	}
	for _, p := range pmls {
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-pmls[1].bgDone:
	default:
		t.Fatal("the background poller still runs after Close")
	}
	polls := net.mods[1].polls.Load()
	time.Sleep(20 * time.Millisecond)
	if n := net.mods[1].polls.Load(); n != polls {
		t.Errorf("%d module polls after Close", n-polls)
	}
}
