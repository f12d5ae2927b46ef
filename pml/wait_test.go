package pml

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/btl"
)

// stubMod is a module with no traffic; sleeper and watcher add the
// capabilities under test.
type stubMod struct {
	btl.Module // nil: only the methods below are called
	name       string
}

func (m *stubMod) Name() string  { return m.name }
func (m *stubMod) Progress() int { return 0 }

type sleeperMod struct {
	stubMod
	wakes atomic.Int32
	woken chan struct{}
}

func newSleeperMod(name string) *sleeperMod {
	return &sleeperMod{stubMod: stubMod{name: name}, woken: make(chan struct{}, 1)}
}

func (m *sleeperMod) Sleep(d time.Duration) {
	select {
	case <-m.woken:
	case <-time.After(d):
	}
}

func (m *sleeperMod) Wake() {
	m.wakes.Add(1)
	select {
	case m.woken <- struct{}{}:
	default:
	}
}

type watcherMod struct {
	*sleeperMod
	armed atomic.Pointer[func()]
}

func (m *watcherMod) Watch(wake func()) {
	if wake == nil {
		m.armed.Store(nil)
		return
	}
	m.armed.Store(&wake)
}

// arrive plays work arriving at the watcher: it wakes whoever armed it.
func (m *watcherMod) arrive() bool {
	if f := m.armed.Load(); f != nil {
		(*f)()
		return true
	}
	return false
}

func TestSleeperChoice(t *testing.T) {
	plain := &stubMod{name: "self"}
	sm1, sm2 := newSleeperMod("sm"), newSleeperMod("sm2")
	tcp := &watcherMod{sleeperMod: newSleeperMod("tcp")}
	tcp2 := &watcherMod{sleeperMod: newSleeperMod("tcp2")}
	cases := []struct {
		name     string
		mods     []btl.Module
		primary  btl.Sleeper // nil: the PML's own channel
		watchers int
		err      string
	}{
		{"no sleeper", []btl.Module{plain}, nil, 0, ""},
		{"one sleeper", []btl.Module{plain, sm1}, sm1, 0, ""},
		{"sleeper and watcher", []btl.Module{plain, tcp, sm1}, sm1, 1, ""},
		{"watchers only", []btl.Module{tcp, tcp2}, tcp, 1, ""},
		{"two blind sleepers", []btl.Module{sm1, tcp, sm2}, nil, 0, "sm, sm2"},
	}
	for _, c := range cases {
		var w waitState
		err := w.init(c.mods)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one naming %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if c.primary == nil {
			if _, ok := w.primary.(chanSleeper); !ok {
				t.Errorf("%s: primary %T, want the PML's channel", c.name, w.primary)
			}
		} else if w.primary != c.primary {
			t.Errorf("%s: primary %v, want %v", c.name, w.primary, c.primary)
		}
		if len(w.watchers) != c.watchers {
			t.Errorf("%s: %d watchers, want %d", c.name, len(w.watchers), c.watchers)
		}
	}
}

// TestWatcherEndsSleep: a rank with an sm-like sleeper and a tcp-like
// watcher sleeps in the first (for an hour, unless woken) and wakes when
// work arrives at the second.
//
// The fake watcher's work is a wake and nothing a poll would find, so
// work that "arrives" while it is not armed (between two sleeps: the
// first arrival below, which finds it armed, may come before the sleep
// begins, and so only shorten that one) is lost, where a real module's
// would be found by the poll the sleeper makes after arming. So the test
// lets work arrive until the wait ends: every arrival that finds the
// watcher armed must end the sleep, and one that does not is retried.
// (Arriving once, the test hung for its 20 s in a loaded CI run.)
func TestWatcherEndsSleep(t *testing.T) {
	sm := newSleeperMod("sm")
	tcp := &watcherMod{sleeperMod: newSleeperMod("tcp")}
	p := &PML{cfg: Config{SpinCount: 1, SleepTimeout: time.Hour}, mods: []btl.Module{sm, tcp}}
	if err := p.wait.init(p.mods); err != nil {
		t.Fatal(err)
	}
	var cond atomic.Bool
	done := make(chan error)
	go func() { done <- p.WaitFor(cond.Load) }()
	for !tcp.arrive() { // wait until the sleeper armed the watcher
		time.Sleep(time.Millisecond)
	}
	cond.Store(true)
	deadline := time.After(20 * time.Second)
	for ended := false; !ended; {
		tcp.arrive()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			ended = true
		case <-deadline:
			t.Fatal("the watcher's wakes did not end the sleep in the primary")
		case <-time.After(time.Millisecond):
		}
	}
	if tcp.armed.Load() != nil {
		t.Error("the watcher is still armed after the sleep")
	}
	if sm.wakes.Load() == 0 {
		t.Error("the primary was never woken")
	}
}

// TestSpinPhase: a Recv that waits longer than its spin count for a late
// sender sleeps in the transport at once when oversubscribed (Yield) or
// without a spin time, and polls on (no sleep) within pml_ob1_spin_time
// when the rank has a core of its own; past the spin time it sleeps.
func TestSpinPhase(t *testing.T) {
	hangGuard(t, hangDeadline)
	hour := int(time.Hour / time.Microsecond)
	cases := []struct {
		name      string
		yield     bool
		spinUsec  int
		wantSleep bool
	}{
		{"own core, within the spin time", false, hour, false},
		{"own core, no spin time", false, 0, true},
		{"own core, past the spin time", false, 1, true},
		{"oversubscribed", true, hour, true},
	}
	for _, c := range cases {
		net := newFakeNet(2, 64, 1024)
		var pmls [2]*PML
		for i := range pmls {
			p, err := New(Config{Rank: i, Size: 2, Modules: []btl.Module{net.mods[i]}, SpinCount: 1, Yield: c.yield,
				SpinUsec: c.spinUsec, SleepTimeout: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			pmls[i] = p
		}
		got := make(chan error, 1)
		go func() {
			buf := make([]byte, 8)
			_, err := pmls[0].World().Recv(buf, 1, 5)
			got <- err
		}()
		// The sender comes late: once rank 0 has slept, or after 5000
		// polls (it would have slept after its spin count of 1).
		m0 := net.mods[0]
		for m0.sleeps.Load() == 0 && m0.polls.Load() < 5000 {
			time.Sleep(50 * time.Microsecond) // not runnable: a waiter yields to runnable goroutines instead of sleeping
		}
		if err := pmls[1].World().Send([]byte("late"), 0, 5, false); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("%s: Recv: %v", c.name, err)
		}
		if s := m0.sleeps.Load(); (s != 0) != c.wantSleep {
			t.Errorf("%s: rank 0 slept %d times in a Recv that waited %d polls; want sleeping %v", c.name, s, m0.polls.Load(), c.wantSleep)
		}
		for _, p := range pmls {
			p.Close()
		}
	}
}

// TestProbeBesideATestLoop: with one P, a goroutine that loops on Test
// takes every arrival with its polls and is always ready to run; a Probe
// of another goroutine of the rank, which holds the sleeper role and
// yields to it, must still see the message another goroutine's poll
// delivered (it hung, and with it the job: soak with 4 ranks on 2 cores
// and pml_ob1_yield_when_idle no).
func TestProbeBesideATestLoop(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
		if c.Rank() == 0 {
			time.Sleep(100 * time.Millisecond) // the Probe is past its spin and yields
			if err := c.Send([]byte("probe me"), 1, 5, false); err != nil {
				t.Error(err)
				return
			}
			if _, err := c.Recv(nil, 1, 6); err != nil { // the Probe is done
				t.Error(err)
				return
			}
			if err := c.Send(nil, 1, 9, false); err != nil { // ends the Test loop
				t.Error(err)
			}
			return
		}
		var h Handle
		if err := c.StartIrecv(&h, nil, 0, 9); err != nil {
			t.Error(err)
			return
		}
		loop := make(chan struct{})
		go func() {
			defer close(loop)
			for {
				if _, done, err := h.Test(); done || err != nil {
					return
				}
			}
		}()
		st, err := c.Probe(0, 5)
		if err != nil || st.Count != 8 {
			t.Errorf("Probe: %+v, %v", st, err)
		}
		buf := make([]byte, 8)
		if _, err := c.Recv(buf, 0, 5); err != nil {
			t.Error(err)
		}
		if err := c.Send(nil, 0, 6, false); err != nil {
			t.Error(err)
		}
		<-loop
	})
}
