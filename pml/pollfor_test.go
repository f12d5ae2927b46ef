package pml

import (
	"bytes"
	"testing"
	"time"
)

// A blocking receive from one rank polls that rank's channel alone
// (btl.SourcePoller) between full passes, one in passEvery.
func TestWaitPollsItsSource(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	net.sourcePoll = true
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() == 1 {
			time.Sleep(20 * time.Millisecond) // rank 0 polls meanwhile (and sleeps after SpinCount polls)
			if err := c.Send([]byte("hello"), 0, 3, false); err != nil {
				t.Error(err)
			}
			return
		}
		buf := make([]byte, 8)
		st, err := c.Recv(buf, 1, 3)
		if err != nil || st.Count != 5 || !bytes.Equal(buf[:5], []byte("hello")) {
			t.Errorf("Recv = %+v, %v, %q; want 5 bytes \"hello\"", st, err, buf[:st.Count])
		}
	})
	from, full := net.fromPolls[0].Load(), net.mods[0].polls.Load()
	if from == 0 {
		t.Fatalf("rank 0's wait for rank 1 made %d full passes and no source poll", full)
	}
	// Every passEvery-th poll of the wait is a full pass (and the wait's
	// sleeps add their own passes).
	if full < from/(passEvery-1)-1 {
		t.Errorf("rank 0's wait made %d source polls and %d full passes; want at least one full pass per %d polls", from, full, passEvery)
	}
}

// A wait for one rank's message still makes full passes: here its message
// comes only after another rank got ours, a rendezvous whose fragments go
// out when we see that rank's ACK, which a poll of the awaited rank's
// channel alone never would (with passEvery made huge, the job hangs).
func TestSourceWaitStillPassesAll(t *testing.T) {
	net := newFakeNet(3, 256, 1024) // no single copy: the rendezvous needs our FRAGs
	net.sourcePoll = true
	// No sleep, whose pass before it would see the ACK too: the wait's
	// own full passes must.
	net.tune = func(c *Config) { c.SpinCount = 1 << 30 }
	big := bytes.Repeat([]byte("0123456789abcdef"), 256) // 4 KiB: RNDV, ACK, then FRAGs
	job(t, net, func(t *testing.T, c *Comm) {
		one := make([]byte, 1)
		switch c.Rank() {
		case 0:
			h, err := c.NewIsend(big, 2, 1, false)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := c.Recv(one, 1, 2); err != nil {
				t.Error(err)
			}
			if _, err := h.Wait(nil); err != nil {
				t.Error(err)
			}
		case 1:
			if _, err := c.Recv(one, 2, 2); err != nil {
				t.Error(err)
			}
			if err := c.Send(one, 0, 2, false); err != nil {
				t.Error(err)
			}
		case 2:
			got := make([]byte, len(big))
			if _, err := c.Recv(got, 0, 1); err != nil || !bytes.Equal(got, big) {
				t.Errorf("rank 2's rendezvous receive: %v, payload equal %v", err, bytes.Equal(got, big))
			}
			if err := c.Send(one, 1, 2, false); err != nil {
				t.Error(err)
			}
		}
	})
	if net.fromPolls[0].Load() == 0 {
		t.Error("rank 0's wait for rank 1 made no source poll")
	}
}

// A blocking probe for one rank's message (Probe, Mprobe) is a wait too,
// and polls that rank's channel the same way. (Iprobe and Test keep full
// passes: a program that computes between two calls would otherwise move
// its other transfers on passEvery times less often.)
func TestProbesPollTheirSource(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	net.sourcePoll = true
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() == 1 {
			for tag := 1; tag <= 2; tag++ {
				time.Sleep(5 * time.Millisecond)
				if err := c.Send([]byte{byte(tag)}, 0, tag, false); err != nil {
					t.Error(err)
				}
			}
			return
		}
		polled := func(what string, before int64) {
			if net.fromPolls[0].Load() == before {
				t.Errorf("%s for rank 1's message made no source poll", what)
			}
		}
		n := net.fromPolls[0].Load()
		if st, err := c.Probe(1, 1); err != nil || st.Tag != 1 || st.Count != 1 {
			t.Errorf("Probe: %+v, %v; want tag 1, 1 byte", st, err)
		}
		polled("Probe", n)
		buf := make([]byte, 1)
		if _, err := c.Recv(buf, 1, 1); err != nil || buf[0] != 1 {
			t.Errorf("Recv of tag 1: %v, %d", err, buf[0])
		}
		n = net.fromPolls[0].Load()
		m, st, err := c.Mprobe(1, 2)
		if err != nil || st.Tag != 2 {
			t.Fatalf("Mprobe: %+v, %v; want tag 2", st, err)
		}
		polled("Mprobe", n)
		if _, err := m.Recv(buf); err != nil || buf[0] != 2 {
			t.Errorf("Mrecv of tag 2: %v, %d", err, buf[0])
		}
	})
}
