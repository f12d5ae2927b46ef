package pml

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/self"
)

// smComms builds two PMLs over one sm segment in this process.
func smComms(t testing.TB) [2]*Comm { return smCommsSpin(t, 1<<30) }

// smCommsSpin is smComms with a SpinCount of spin (1: a wait blocks after
// its first idle poll).
func smCommsSpin(t testing.TB, spin int) [2]*Comm {
	hangGuard(t, hangDeadline)
	mods := smPair(t)
	var comms [2]*Comm
	for r := range 2 {
		loop, err := self.NewWithConfig(r, self.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(Config{Rank: r, Size: 2, Modules: []btl.Module{loop, mods[r]}, SpinCount: spin, UnexpectedLimit: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		comms[r] = p.World()
	}
	return comms
}

// arrive polls c's rank until a message has arrived, so that the receive
// posted next finds it unexpected.
func arrive(c *Comm) {
	for c.p.Progress() == 0 {
	}
}

// TestHotPathAllocs pins the blocking and nonblocking eager paths at zero
// heap allocations per message, including a message that arrives before its
// receive (the unexpected path: its record and payload buffer are recycled).
func TestHotPathAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	for _, n := range []int{0, 8, 200, 4096} {
		sbuf, rbuf := make([]byte, n), make([]byte, n)
		cases := []struct {
			name string
			op   func()
		}{
			{"unexpected Send/Recv", func() {
				if err := c[0].Send(sbuf, 1, 3, false); err != nil {
					t.Fatal(err)
				}
				arrive(c[1])
				if _, err := c[1].Recv(rbuf, 0, 3); err != nil {
					t.Fatal(err)
				}
			}},
			{"unexpected Sendrecv", func() {
				// Rank 1's message is waiting when rank 0's Sendrecv posts.
				if err := c[1].Send(sbuf, 0, 4, false); err != nil {
					t.Fatal(err)
				}
				arrive(c[0])
				if _, err := c[0].Sendrecv(sbuf, 1, 4, rbuf, 1, 4); err != nil {
					t.Fatal(err)
				}
				if _, err := c[1].Recv(rbuf, 0, 4); err != nil {
					t.Fatal(err)
				}
			}},
		}
		for _, tc := range cases {
			tc.op() // warm the free lists
			if a := testing.AllocsPerRun(200, tc.op); a != 0 {
				t.Errorf("%s of %d bytes: %.1f allocations per message, want 0", tc.name, n, a)
			}
		}
	}
}

// TestSleepAllocs: a wait that sleeps in the transport and is woken by a
// message allocates nothing when it is the rank's only waiting goroutine
// (the sleeper role's hand-off makes a new channel only when another
// goroutine waited on the old one).
func TestSleepAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smCommsSpin(t, 1)
	sbuf, rbuf := make([]byte, 8), make([]byte, 8)
	var ready atomic.Bool
	kick, sent := make(chan struct{}), make(chan struct{})
	go func() {
		for range kick {
			time.Sleep(200 * time.Microsecond) // rank 1 goes to sleep meanwhile
			ready.Store(true)
			if err := c[0].Send(sbuf, 1, 5, false); err != nil {
				t.Error(err)
			}
			sent <- struct{}{}
		}
	}()
	defer close(kick)
	p := c[1].p
	op := func() {
		kick <- struct{}{}
		if err := p.WaitFor(ready.Load); err != nil {
			t.Fatal(err)
		}
		<-sent
		ready.Store(false)
		if _, err := c[1].Recv(rbuf, 0, 5); err != nil {
			t.Fatal(err)
		}
	}
	op() // warm the free lists
	if a := testing.AllocsPerRun(20, op); a != 0 {
		t.Errorf("%.1f allocations per sleeping wait, want 0", a)
	}
}

// TestUnexpectedPoolBounded: after a burst of unexpected eager messages is
// received, the recycled records keep at most unexpPoolBytes of buffers,
// and the count they keep is exact.
func TestUnexpectedPoolBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	sbuf, rbuf := make([]byte, 8<<10), make([]byte, 8<<10)
	for range 2 {
		const n = 400 // 3.2 MiB of unexpected payloads
		for range n {
			if err := c[0].Send(sbuf, 0, 6, false); err != nil { // to self: eager, unexpected
				t.Fatal(err)
			}
		}
		for range n {
			if _, err := c[0].Recv(rbuf, 0, 6); err != nil {
				t.Fatal(err)
			}
		}
		p := c[0].p
		p.mu.Lock()
		held := 0
		for _, u := range p.unexpFree {
			held += cap(u.payload)
		}
		pooled, recs := p.unexpPooled, len(p.unexpFree)
		p.mu.Unlock()
		if held != pooled || pooled > unexpPoolBytes || recs < n-1 { // the first may match the posted Recv
			t.Fatalf("after %d unexpected 8 KiB messages: %d records keep %d bytes (counted %d); want every record kept, at most %d bytes, counted exactly", n, recs, held, pooled, unexpPoolBytes)
		}
	}
}
