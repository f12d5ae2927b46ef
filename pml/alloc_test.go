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
func smCommsSpin(t testing.TB, spin int) [2]*Comm { return smCommsWith(t, spin, 64<<20) }

// smCommsWith is smComms with a SpinCount of spin and an unexpected limit
// of limit bytes.
func smCommsWith(t testing.TB, spin int, limit int64) [2]*Comm {
	return smCommsTuned(t, func(c *Config) { c.SpinCount, c.UnexpectedLimit = spin, limit })
}

// smCommsTuned is smComms with tune applied to each rank's Config.
func smCommsTuned(t testing.TB, tune func(*Config)) [2]*Comm {
	hangGuard(t, hangDeadline)
	mods := smPair(t)
	var comms [2]*Comm
	for r := range 2 {
		loop, err := self.NewWithConfig(r, self.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Rank: r, Size: 2, Modules: []btl.Module{loop, mods[r]}, SpinCount: 1 << 30, UnexpectedLimit: 64 << 20, DirectPolls: Params.Defaults().DirectPolls}
		tune(&cfg)
		p, err := New(cfg)
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

// TestIsendWithoutRequest: an eager Isend the sm BTL copies at once takes
// no Request (btl.TrySender): its handle is settled at the start with a
// send's zero Status, Wait and Test return it at once, Cancel refuses, the
// handle's header scratch is back to zero, and a burst that fills the
// receiver's box and FIFO (so that later sends are queued as copies)
// arrives whole and in order.
func TestIsendWithoutRequest(t *testing.T) {
	c := smComms(t)
	if c[0].p.peers[1].try == nil {
		t.Fatal("sm is not a btl.TrySender")
	}
	const count = 2000
	hs := make([]Handle, count)
	tried := 0
	for i := range hs {
		buf := []byte{byte(i), byte(i >> 8), 7, 7}
		if err := c[0].StartIsend(&hs[i], buf, 1, 5, false); err != nil {
			t.Fatal(err)
		}
		if hs[i].r == nil {
			tried++
			buf[2] = 0 // copied already: the message must not see this
			if h := &hs[i]; h.word.Load() != 0 || h.src != 0 || h.tag != 0 || h.count != 0 || !h.send {
				t.Fatalf("send %d: handle word %#x src %d tag %d count %d send %v after a send without a Request, want only send set",
					i, h.word.Load(), h.src, h.tag, h.count, h.send)
			}
			if st, done, err := hs[i].Test(); !done || err != nil || st != (Status{}) {
				t.Fatalf("send %d: Test = %+v, %v, %v; want zero Status, done, nil", i, st, done, err)
			}
			if err := hs[i].Cancel(); err == nil {
				t.Fatalf("send %d: Cancel of a send succeeded", i)
			}
		}
	}
	if tried == 0 {
		t.Fatal("no Isend went without a Request")
	}
	rbuf := make([]byte, 4)
	for i := 0; i < count; i++ {
		var rh Handle
		if err := c[1].StartIrecv(&rh, rbuf, 0, 5); err != nil {
			t.Fatal(err)
		}
		for { // one goroutine drives both ranks: the sender's queue drains in its Progress
			c[0].p.Progress()
			st, done, err := rh.Test()
			if !done {
				continue
			}
			if err != nil || st.Count != 4 || rbuf[0] != byte(i) || rbuf[1] != byte(i>>8) || rbuf[2] != 7 {
				t.Fatalf("receive %d: %v, %+v, % x", i, err, st, rbuf)
			}
			break
		}
	}
	for i := range hs {
		if _, err := hs[i].Wait(nil); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	t.Logf("%d of %d sends took no Request", tried, count)
}
