package pml

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/internal/errs"
)

// adaptiveNet is a 2-rank fake network with single copy, first chunks of
// 1024 bytes, and pml_ob1_rget_adaptive on (no band, no re-exploring).
func adaptiveNet() *fakeNet {
	net := newFakeNet(2, 256, 1024)
	net.rget = true
	net.tune = func(c *Config) { c.RgetLimit, c.RgetAdaptive, c.RgetExploreMs = 0, true, 1<<20 }
	return net
}

// pingPong sends n-byte messages back and forth rounds times and checks
// every byte.
func pingPong(t *testing.T, net *fakeNet, n, rounds int) {
	job(t, net, func(t *testing.T, c *Comm) {
		peer := 1 - c.Rank()
		buf := make([]byte, n)
		for i := 0; i < rounds; i++ {
			if c.Rank() == 0 {
				if err := c.Send(pattern(n, 2*i), peer, 1, false); err != nil {
					t.Error(err)
					return
				}
			}
			st, err := c.Recv(buf, peer, 1)
			if want := pattern(n, 2*i+c.Rank()^1); err != nil || st.Count != n || !bytes.Equal(buf, want) {
				t.Errorf("rank %d round %d: status %+v err %v, or wrong bytes", c.Rank(), i, st, err)
				return
			}
			if c.Rank() == 1 {
				if err := c.Send(pattern(n, 2*i+1), peer, 1, false); err != nil {
					t.Error(err)
					return
				}
			}
		}
	})
}

// In a ping-pong the receiver takes the path it measured faster: each rank
// tries the read, then the pipeline, once, then keeps to the faster one.
func TestAdaptiveTakesTheFasterPath(t *testing.T) {
	// 1024 B in the first chunk, 7 FRAGs of the rest; 8 when the message
	// arrived before its receive (its first chunk is dropped then).
	const n, rounds, fragsPerMsg = 8000, 20, 8
	t.Run("read faster", func(t *testing.T) {
		net := adaptiveNet()
		net.fragDelay = 3 * time.Millisecond
		pingPong(t, net, n, rounds)
		t.Logf("%d FRAGs, %d reads", net.frags.Load(), net.reads.Load())
		if f, r := net.frags.Load(), net.reads.Load(); f > 2*fragsPerMsg || r < 2*rounds-2 {
			t.Errorf("with slow FRAGs: %d FRAGs and %d reads for %d messages; want the pipeline tried once per rank (at most %d FRAGs), reads for the rest",
				f, r, 2*rounds, 2*fragsPerMsg)
		}
	})
	t.Run("pipeline faster", func(t *testing.T) {
		net := adaptiveNet()
		net.readDelay = 20 * time.Millisecond
		pingPong(t, net, n, rounds)
		t.Logf("%d FRAGs, %d reads", net.frags.Load(), net.reads.Load())
		if r := net.reads.Load(); r > 2 {
			t.Errorf("with slow reads: %d reads for %d messages; want one try per rank", r, 2*rounds)
		}
	})
}

// With several receives posted (a window), the pipeline is used: at most
// the last message of the window, matched when nothing else is posted, may
// choose.
func TestAdaptiveWindowUsesThePipeline(t *testing.T) {
	const n, window = 8000, 8
	net := adaptiveNet()
	job(t, net, func(t *testing.T, c *Comm) {
		reqs := make([]*Request, window)
		bufs := make([][]byte, window)
		for i := range reqs {
			reqs[i] = new(Request)
			var err error
			if c.Rank() == 1 {
				bufs[i] = make([]byte, n)
				err = c.Irecv(reqs[i], bufs[i], 0, 3)
			} else {
				time.Sleep(time.Millisecond)
				err = c.Isend(reqs[i], pattern(n, i), 1, 3, false)
			}
			if err != nil {
				t.Error(err)
			}
		}
		for i, r := range reqs {
			if st, err := r.Wait(nil); err != nil {
				t.Error(err)
			} else if c.Rank() == 1 && (st.Count != n || !bytes.Equal(bufs[i], pattern(n, i))) {
				t.Errorf("message %d: status %+v or wrong bytes", i, st)
			}
		}
	})
	t.Logf("%d FRAGs, %d reads", net.frags.Load(), net.reads.Load())
	if r := net.reads.Load(); r > 1 {
		t.Errorf("a window of %d posted receives made %d single-copy reads; want at most 1 (the last)", window, r)
	}
}

// Without pml_ob1_rget_adaptive nothing is read outside the band, and a
// message in the band is read whatever was measured.
func TestAdaptiveOffAndBand(t *testing.T) {
	for _, tt := range []struct {
		adaptive      bool
		limit, max, n int
		reads         bool
	}{
		{false, 0, 0, 8000, false},
		{false, 4096, 0, 8000, true},
		{true, 4096, 6000, 8000, true}, // outside the band: adaptive tries the read first
		{true, 4096, 0, 8000, true},
	} {
		t.Run(fmt.Sprintf("adaptive=%v,band=%d..%d", tt.adaptive, tt.limit, tt.max), func(t *testing.T) {
			net := adaptiveNet()
			net.tune = func(c *Config) { c.RgetLimit, c.RgetMax, c.RgetAdaptive = tt.limit, tt.max, tt.adaptive }
			pingPong(t, net, tt.n, 3)
			if r := net.reads.Load(); (r > 0) != tt.reads {
				t.Errorf("%d reads; want reads: %v", r, tt.reads)
			}
		})
	}
}

// TestSplitRead: a rendezvous read of at least pml_ob1_rget_split bytes
// into a posted receive is shared: the receiver reads the first half, the
// sender writes the rest into the receiver's buffer. Every byte arrives,
// and when the write or the read fails, the part it should have moved
// comes as FRAGs. Below the threshold, and with it 0, the receiver reads
// it all. Several messages of a window are in flight at once, and a
// receive shorter than the message truncates.
func TestSplitRead(t *testing.T) {
	for _, tt := range []struct {
		name                string
		split, n            int
		readFail, writeFail bool
		writes, frags       bool
	}{
		{"split", 4096, 100000, false, false, true, false},
		{"write fails", 4096, 100000, false, true, true, true},
		{"read fails", 4096, 100000, true, false, true, true},
		{"below the threshold", 200000, 100000, false, false, false, false},
		{"off", 0, 100000, false, false, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			net := newFakeNet(2, 256, 1024)
			net.rget, net.readFail, net.writeFail, net.runners = true, tt.readFail, tt.writeFail, true
			net.tune = func(c *Config) { c.RgetLimit, c.RgetSplit = 4096, tt.split }
			const window = 4
			job(t, net, func(t *testing.T, c *Comm) {
				if c.Rank() == 1 {
					var hs [window + 1]Handle
					bufs := make([][]byte, window+1)
					for i := range bufs {
						bufs[i] = make([]byte, tt.n)
						if i == window {
							bufs[i] = bufs[i][:tt.n-100] // truncates
						}
						if err := c.StartIrecv(&hs[i], bufs[i], 0, 5); err != nil {
							t.Error(err)
							return
						}
					}
					// The receives are posted: the messages find them
					// (a split needs a posted receive).
					if err := c.Send(nil, 0, 6, false); err != nil {
						t.Error(err)
						return
					}
					// A read is split only while its sender waits
					// (PeerRunning): let rank 0 start its Isends and
					// reach its Wait before this rank polls for them.
					// (Without it, 2 in 180 runs under -race read every
					// message whole while rank 0 was still between
					// Isends.)
					time.Sleep(20 * time.Millisecond)
					for i := range hs {
						st, err := hs[i].Wait(nil)
						want := pattern(tt.n, i)[:len(bufs[i])]
						if i == window {
							if !errors.Is(err, errs.ErrTruncate) || st.Count != len(bufs[i]) || !bytes.Equal(bufs[i], want) {
								t.Errorf("truncated message: status %+v err %v, or wrong bytes", st, err)
							}
							continue
						}
						if err != nil || st.Count != tt.n || !bytes.Equal(bufs[i], want) {
							t.Errorf("message %d: status %+v err %v, or wrong bytes", i, st, err)
						}
					}
					return
				}
				if _, err := c.Recv(nil, 1, 6); err != nil {
					t.Error(err)
					return
				}
				var hs [window + 1]Handle
				msgs := make([][]byte, window+1)
				for i := range hs {
					msgs[i] = pattern(tt.n, i)
					if err := c.StartIsend(&hs[i], msgs[i], 1, 5, false); err != nil {
						t.Error(err)
						return
					}
				}
				for i := range hs {
					if _, err := hs[i].Wait(nil); err != nil {
						t.Errorf("send %d: %v", i, err)
					}
				}
			})
			if w := net.writes.Load(); (w > 0) != tt.writes {
				t.Errorf("%d writes; want writes: %v", w, tt.writes)
			}
			if f := net.frags.Load(); (f > 0) != tt.frags {
				t.Errorf("%d FRAGs; want FRAGs: %v", f, tt.frags)
			}
			if r := net.reads.Load(); r == 0 {
				t.Error("no single-copy reads")
			}
		})
	}
}

// TestSplitReadPeerLost: a receive that has read its part of a split read
// and waits for the sender's fails with ErrPeerLost when the sender is
// lost before it answers.
func TestSplitReadPeerLost(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	net.rget, net.runners = true, true
	net.tune = func(c *Config) { c.RgetLimit, c.RgetSplit = 4096, 4096 }
	stop := make(chan struct{})
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() == 0 {
			defer func() { <-stop }() // lost: never polls again
			if _, err := c.Recv(nil, 1, 6); err != nil {
				t.Error(err)
				return
			}
			var h Handle
			if err := c.StartIsend(&h, pattern(100000, 0), 1, 5, false); err != nil {
				t.Error(err)
			}
			net.running[0].Store(true) // as if in a wait, so that the read is split
			return
		}
		defer close(stop)
		var h Handle
		if err := c.StartIrecv(&h, make([]byte, 100000), 0, 5); err != nil {
			t.Error(err)
			return
		}
		go func() {
			for net.reads.Load() == 0 { // our part is read: the sender's is awaited
				time.Sleep(time.Millisecond)
			}
			net.kill(0)
		}()
		if err := c.Send(nil, 0, 6, false); err != nil {
			t.Error(err)
			return
		}
		if _, err := h.Wait(nil); !errors.Is(err, errs.ErrPeerLost) {
			t.Errorf("receive from the lost rank: %v; want ErrPeerLost", err)
		}
		if w := net.writes.Load(); w != 0 {
			t.Errorf("the lost rank wrote %d times", w)
		}
	})
}

// TestSplitMin: the split read is off when the ranks outnumber the cores.
func TestSplitMin(t *testing.T) {
	for _, tt := range []struct {
		split int
		yield bool
		want  int
	}{{65536, false, 65536}, {65536, true, 0}, {0, false, 0}} {
		if got := splitMin(Config{RgetSplit: tt.split, Yield: tt.yield}); got != tt.want {
			t.Errorf("splitMin(RgetSplit %d, Yield %v) = %d; want %d", tt.split, tt.yield, got, tt.want)
		}
	}
}

// TestSplitReadSenderAway: a sender that has returned from its Isend and
// computes (it does not say it polls) gets no split ACK: the receiver
// reads the whole message and completes without it. The receive is posted
// before the message comes, so that the match happens in a poll, where a
// read may be split; the receiver first polls once the Isend has returned
// (a receiver that looks while the Isend is still starting may split, and
// then waits for the sender's next call: the flag's window, see startSend).
func TestSplitReadSenderAway(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	net.rget, net.runners = true, true
	net.tune = func(c *Config) { c.RgetLimit, c.RgetSplit = 4096, 4096 }
	stop := make(chan struct{})
	posted, returned := make(chan struct{}), make(chan struct{})
	msg := pattern(100000, 0)
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() == 0 {
			<-posted
			var h Handle
			err := c.StartIsend(&h, msg, 1, 5, false)
			close(returned)
			if err != nil {
				t.Error(err)
				return
			}
			<-stop // computing: no call, so no poll, until the receive is done
			if _, err := h.Wait(nil); err != nil {
				t.Errorf("send: %v", err)
			}
			return
		}
		defer close(stop)
		buf := make([]byte, len(msg))
		var h Handle
		err := c.StartIrecv(&h, buf, 0, 5)
		close(posted)
		if err != nil {
			t.Error(err)
			return
		}
		<-returned
		if st, err := h.Wait(nil); err != nil || st.Count != len(msg) || !bytes.Equal(buf, msg) {
			t.Errorf("receive: status %+v err %v, or wrong bytes", st, err)
		}
	})
	if w := net.writes.Load(); w != 0 {
		t.Errorf("%d writes by a sender that was computing; want none", w)
	}
}

// TestSplitFlagDown: a rank says it polls only while a send its receiver
// may split is starting or waited for: after an Isend's return, after
// its wait, and after a blocking Send that failed to start, it is down.
func TestSplitFlagDown(t *testing.T) {
	net := newFakeNet(3, 256, 1024)
	net.rget, net.runners = true, true
	net.tune = func(c *Config) { c.RgetLimit, c.RgetSplit = 4096, 4096 }
	job(t, net, func(t *testing.T, c *Comm) {
		switch c.Rank() {
		case 0:
			var h Handle
			if err := c.StartIsend(&h, pattern(100000, 0), 1, 5, false); err != nil {
				t.Error(err)
				return
			}
			if net.running[0].Load() {
				t.Error("flag up after the Isend returned")
			}
			if _, err := h.Wait(nil); err != nil {
				t.Error(err)
			}
			if net.running[0].Load() {
				t.Error("flag up after the wait")
			}
			net.kill(2) // not polled yet: the PML starts the send, the module refuses it
			if err := c.Send(pattern(100000, 1), 2, 5, false); !errors.Is(err, errs.ErrPeerLost) {
				t.Errorf("Send to a lost rank: %v; want ErrPeerLost", err)
			}
			if net.running[0].Load() {
				t.Error("flag up after a Send that failed")
			}
		case 1:
			buf := make([]byte, 100000)
			if _, err := c.Recv(buf, 0, 5); err != nil {
				t.Error(err)
			}
		}
	})
}

// TestStream: with pml_ob1_stream_limit, the mid-size messages of a
// one-way window of Isends (after the first window, and but the first of
// each) carry their payload in their rendezvous fragment, where every
// message of a ping-pong, of windows both ways, or with the limit at 0 is
// read (the rget band covers them all); a stream's sends still complete
// only once the receiver has matched them; every byte arrives in every
// pattern.
func TestStream(t *testing.T) {
	const n, window, windows = 800, 8, 6
	var windowsOfSize func(t *testing.T, net *fakeNet, both, hold bool, n int)
	// windowsOf runs windows of Isends from rank 0 (and rank 1 when both)
	// to the other, each answered with a 1-byte message. With hold, rank
	// 1 posts the last window's receives only after rank 0 has checked
	// that none of that window's sends completed.
	windowsOf := func(t *testing.T, net *fakeNet, both, hold bool) { windowsOfSize(t, net, both, hold, n) }
	windowsOfSize = func(t *testing.T, net *fakeNet, both, hold bool, n int) {
		posted := make(chan struct{})
		job(t, net, func(t *testing.T, c *Comm) {
			peer := 1 - c.Rank()
			sends, recvs := c.Rank() == 0 || both, c.Rank() == 1 || both
			for w := 0; w < windows; w++ {
				last := hold && w == windows-1
				if last && c.Rank() == 1 {
					<-posted
				}
				var reqs []*Request
				bufs := make([][]byte, window)
				for i := range bufs {
					if recvs {
						bufs[i] = make([]byte, n)
						r := new(Request)
						if err := c.Irecv(r, bufs[i], peer, 3); err != nil {
							t.Error(err)
							return
						}
						reqs = append(reqs, r)
					}
				}
				for i := 0; i < window && sends; i++ {
					r := new(Request)
					if err := c.Isend(r, pattern(n, w*window+i+c.Rank()<<10), peer, 3, false); err != nil {
						t.Error(err)
						return
					}
					reqs = append(reqs, r)
				}
				if last && c.Rank() == 0 {
					time.Sleep(20 * time.Millisecond)
					for i, r := range reqs {
						if r.Done() {
							t.Errorf("send %d of the last window completed before its receive was posted", i)
						}
					}
					close(posted)
				}
				for _, r := range reqs {
					if _, err := r.Wait(nil); err != nil {
						t.Error(err)
						return
					}
				}
				for i := range bufs {
					if recvs && !bytes.Equal(bufs[i], pattern(n, w*window+i+peer<<10)) {
						t.Errorf("rank %d window %d message %d: wrong bytes", c.Rank(), w, i)
					}
				}
				var ack [1]byte
				if recvs && c.Rank() == 1 {
					if err := c.Send(ack[:], peer, 4, false); err != nil {
						t.Error(err)
					}
				}
				if sends && c.Rank() == 0 {
					if _, err := c.Recv(ack[:], peer, 4); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	newNet := func(stream int) *fakeNet {
		net := newFakeNet(2, 256, 1024)
		net.rget = true
		net.tune = func(c *Config) { c.RgetLimit, c.StreamLimit = 257, stream }
		return net
	}
	t.Run("one way", func(t *testing.T) {
		net := newNet(1024)
		windowsOf(t, net, false, false)
		// The first window is read (no stream before it), then the first
		// message of each later one.
		if r := net.reads.Load(); r != window+windows-1 {
			t.Errorf("%d of %d messages read; want %d", r, window*windows, window+windows-1)
		}
		if f := net.frags.Load(); f != 0 {
			t.Errorf("%d FRAGs; want none (each stream message in its first fragment)", f)
		}
	})
	t.Run("one way, receives late", func(t *testing.T) {
		windowsOf(t, newNet(1024), false, true)
	})
	t.Run("both ways", func(t *testing.T) {
		net := newNet(1024)
		windowsOf(t, net, true, false)
		if r := net.reads.Load(); r != 2*window*windows {
			t.Errorf("%d of %d messages read; want all (the streams meet)", r, 2*window*windows)
		}
	})
	t.Run("off", func(t *testing.T) {
		net := newNet(0)
		windowsOf(t, net, false, false)
		if r := net.reads.Load(); r != window*windows {
			t.Errorf("%d of %d messages read; want all", r, window*windows)
		}
	})
	t.Run("ping-pong", func(t *testing.T) {
		net := newNet(1024)
		pingPong(t, net, n, 20)
		if r := net.reads.Load(); r != 40 {
			t.Errorf("%d of 40 messages read; want all", r)
		}
	})
	// pml_ob1_stream_adaptive: the first two one-way streams (the second
	// and third windows) carry their messages, the next two have them
	// read (the first of each way is not timed), and the later ones go
	// the way that took less time, here the one that the fake does not
	// slow down by 2 ms a message (explore is long enough that the slower
	// way is not tried again).
	adaptive := func(slowReads bool) *fakeNet {
		net := newNet(1024)
		net.tune = func(c *Config) {
			c.RgetLimit, c.StreamLimit, c.StreamAdaptive, c.RgetExploreMs = 257, 1024, true, 1_000_000
		}
		if slowReads {
			net.readDelay = 2 * time.Millisecond
		} else {
			net.carryDelay = 2 * time.Millisecond
		}
		windowsOf(t, net, false, false)
		return net
	}
	t.Run("adaptive, reads slower", func(t *testing.T) {
		net := adaptive(true)
		// Read: the first window, each later window's first message, and
		// the fourth and fifth windows' others (the read's tries).
		want := window + windows - 1 + 2*(window-1)
		if r, c := net.reads.Load(), net.carries.Load(); r != int64(want) || c != int64(window*windows-want) {
			t.Errorf("%d messages read, %d carried; want %d and %d", r, c, want, window*windows-want)
		}
	})
	t.Run("adaptive, carrying slower", func(t *testing.T) {
		net := adaptive(false)
		// Carried: the second and third windows' messages but their
		// first; every other message is read.
		if r, c := net.reads.Load(), net.carries.Load(); c != 2*(window-1) || r != int64(window*windows-2*(window-1)) {
			t.Errorf("%d messages read, %d carried; want %d and %d", r, c, window*windows-2*(window-1), 2*(window-1))
		}
	})
	// pml_ob1_stream_pipe_max: messages of 3000 bytes, above the stream
	// limit (1024) and up to the pipeline band's top (4096), which a
	// stream reads, are timed the same way, the read tried first: the
	// second and third windows read (as the first, which is no stream),
	// the fourth and fifth go by the pipeline (the first 1024 bytes with
	// the RNDV, then two FRAGs), and the sixth the faster way. Each
	// window's first message is read, as it starts its stream.
	pipeBand := func(slowReads bool) *fakeNet {
		net := newNet(1024)
		net.tune = func(c *Config) {
			c.RgetLimit, c.StreamLimit, c.StreamAdaptive, c.StreamPipeMax, c.RgetExploreMs = 257, 1024, true, 4096, 1_000_000
		}
		if slowReads {
			net.readDelay = 2 * time.Millisecond
		} else {
			net.fragDelay = time.Millisecond
		}
		windowsOfSize(t, net, false, false, 3000)
		return net
	}
	t.Run("pipeline band, reads slower", func(t *testing.T) {
		net := pipeBand(true)
		piped := int64(3 * (window - 1))
		if r, c, f := net.reads.Load(), net.carries.Load(), net.frags.Load(); c != piped || f != 2*piped || r != window*windows-piped {
			t.Errorf("%d messages read, %d piped, %d FRAGs; want %d, %d and %d", r, c, f, window*windows-piped, piped, 2*piped)
		}
	})
	t.Run("pipeline band, pipeline slower", func(t *testing.T) {
		net := pipeBand(false)
		piped := int64(2 * (window - 1))
		if r, c, f := net.reads.Load(), net.carries.Load(), net.frags.Load(); c != piped || f != 2*piped || r != window*windows-piped {
			t.Errorf("%d messages read, %d piped, %d FRAGs; want %d, %d and %d", r, c, f, window*windows-piped, piped, 2*piped)
		}
	})
	t.Run("pipeline band, not adaptive", func(t *testing.T) {
		net := newNet(1024)
		net.tune = func(c *Config) { c.RgetLimit, c.StreamLimit, c.StreamPipeMax = 257, 1024, 4096 }
		windowsOfSize(t, net, false, false, 3000)
		if r := net.reads.Load(); r != window*windows {
			t.Errorf("%d of %d messages read; want all (pml_ob1_stream_pipe_max needs pml_ob1_stream_adaptive)", r, window*windows)
		}
	})
}

// TestStreamSplit: a read of at least pml_ob1_rget_split_stream bytes (and
// below pml_ob1_rget_split) is shared with the sender only for a message
// of a one-way stream (flagStream): in windows of Isends after the first
// (every message but the first of each), not in a ping-pong. Every byte
// arrives either way.
func TestStreamSplit(t *testing.T) {
	const n, window, windows = 40000, 16, 4
	newNet := func() *fakeNet {
		net := newFakeNet(2, 256, 1024)
		net.rget, net.runners = true, true
		net.tune = func(c *Config) { c.RgetLimit, c.RgetSplit, c.RgetSplitStream = 4096, 65536, 32768 }
		return net
	}
	t.Run("windows", func(t *testing.T) {
		net := newNet()
		job(t, net, func(t *testing.T, c *Comm) {
			var one [1]byte
			for w := 0; w < windows; w++ {
				if c.Rank() == 1 {
					// Post the window's receives, then say so: the
					// messages find them, as a split needs.
					hs := make([]Handle, window)
					bufs := make([][]byte, window)
					for i := range hs {
						bufs[i] = make([]byte, n)
						if err := c.StartIrecv(&hs[i], bufs[i], 0, 5); err != nil {
							t.Error(err)
							return
						}
					}
					if err := c.Send(one[:], 0, 6, false); err != nil {
						t.Error(err)
						return
					}
					for i := range hs {
						if st, err := hs[i].Wait(nil); err != nil || st.Count != n || !bytes.Equal(bufs[i], pattern(n, w*window+i)) {
							t.Errorf("window %d message %d: status %+v err %v, or wrong bytes", w, i, st, err)
						}
					}
					continue
				}
				if _, err := c.Recv(one[:], 1, 6); err != nil {
					t.Error(err)
					return
				}
				hs := make([]Handle, window)
				for i := range hs {
					if err := c.StartIsend(&hs[i], pattern(n, w*window+i), 1, 5, false); err != nil {
						t.Error(err)
						return
					}
				}
				for i := range hs {
					if _, err := hs[i].Wait(nil); err != nil {
						t.Errorf("window %d send %d: %v", w, i, err)
					}
				}
			}
		})
		// The first window is no stream (none before it), and the first
		// send of each later one starts its stream unflagged.
		if w, most := net.writes.Load(), int64((windows-1)*(window-1)); w == 0 || w > most {
			t.Errorf("%d split writes; want 1..%d", w, most)
		}
	})
	t.Run("ping-pong", func(t *testing.T) {
		net := newNet()
		pingPong(t, net, n, 20)
		if w, r := net.writes.Load(), net.reads.Load(); w != 0 || r == 0 {
			t.Errorf("%d split writes and %d reads; want none and some", w, r)
		}
	})
}

// TestStreamAdaptiveLoneSends: a lone send that follows a timed stream
// starts a stream of one, whose "time" would run to the next window's
// start across whatever the program did in between; it is not counted.
// The fake slows each carried message by 1 ms, so the read wins the first
// tries (a carried window ~1.2 ns/B); then five rounds of a lone send, a
// 40 ms pause and a window (of 16, so that the stream after each lone
// send counts as one-way again), and two windows after them: both are
// read. (Counted, the lone sends' times, ~3 ns/B each, would have filled
// the read's samples and made both carry.)
func TestStreamAdaptiveLoneSends(t *testing.T) {
	const n, window = 800, 16
	net := newFakeNet(2, 256, 1024)
	net.rget, net.carryDelay = true, time.Millisecond
	net.tune = func(c *Config) {
		c.RgetLimit, c.StreamLimit, c.StreamAdaptive, c.RgetExploreMs = 257, 1024, true, 1_000_000
	}
	// Each step: a window (16 messages) or a lone send (1), then the ack.
	steps := []int{window, window, window, window, window}
	for i := 0; i < 5; i++ {
		steps = append(steps, -1, window) // -1: a lone send, then the pause
	}
	steps = append(steps, window, window)
	job(t, net, func(t *testing.T, c *Comm) {
		peer := 1 - c.Rank()
		for s, k := range steps {
			count := max(k, 1)
			var reqs []*Request
			bufs := make([][]byte, count)
			for i := range bufs {
				r := new(Request)
				var err error
				if c.Rank() == 1 {
					bufs[i] = make([]byte, n)
					err = c.Irecv(r, bufs[i], peer, 3)
				} else {
					err = c.Isend(r, pattern(n, s*window+i), peer, 3, false)
				}
				if err != nil {
					t.Error(err)
					return
				}
				reqs = append(reqs, r)
			}
			for _, r := range reqs {
				if _, err := r.Wait(nil); err != nil {
					t.Error(err)
					return
				}
			}
			for i := range bufs {
				if c.Rank() == 1 && !bytes.Equal(bufs[i], pattern(n, s*window+i)) {
					t.Errorf("step %d message %d: wrong bytes", s, i)
				}
			}
			var ack [1]byte
			if c.Rank() == 1 {
				if err := c.Send(ack[:], peer, 4, false); err != nil {
					t.Error(err)
				}
			} else if _, err := c.Recv(ack[:], peer, 4); err != nil {
				t.Error(err)
			}
			if k < 0 && c.Rank() == 0 {
				time.Sleep(40 * time.Millisecond)
			}
		}
	})
	// Carried: the second and third windows' messages but their first
	// (the carried way's tries); nothing after.
	if c := net.carries.Load(); c != 2*(window-1) {
		t.Errorf("%d messages carried; want %d (the tries of the second and third windows)", c, 2*(window-1))
	}
}

// A ping-pong's messages in the stream band (Config.SerialCarryMax) are
// carried or read, whichever completed faster lately, by each sender's
// own timing: with reads slowed, they are carried after the first run of
// each way; with carries slowed, they are read, the carried run cut short
// once it is timed (serialCut); without SerialCarryMax, always read. Every message arrives whole either way. A send that is
// not the rank's only one in flight is read and not timed.
func TestSerialCarry(t *testing.T) {
	const n, rounds = 1500, 150
	play := rally(n, rounds)
	pingPong := func(t *testing.T, net *fakeNet) { job(t, net, play) }
	newNet := func(adaptive bool) *fakeNet {
		net := newFakeNet(2, 256, 4096)
		net.rget = true
		net.tune = func(c *Config) {
			c.StreamLimit = 4096
			if adaptive {
				c.SerialCarryMax = 4096
			}
			c.RgetExploreMs = 1 << 20 // no second look within the test
		}
		return net
	}
	// Each rank's first run reads (the first read not counted), its second
	// carries: 2*serialRun of each way, then the faster one.
	first := int64(2 * serialRun)
	t.Run("reads slow", func(t *testing.T) {
		net := newNet(true)
		net.readDelay = 2 * time.Millisecond
		pingPong(t, net)
		if r, c := net.reads.Load(), net.carries.Load(); r != first || c != 2*rounds-first {
			t.Errorf("%d reads and %d carried sends, want %d and %d", r, c, first, 2*rounds-first)
		}
	})
	t.Run("carries slow", func(t *testing.T) {
		net := newNet(true)
		net.carryDelay = 2 * time.Millisecond
		pingPong(t, net)
		// Each rank's carried run: its first send (timed, dropped) and
		// the sends up to its next timed one, which ends the run.
		cut := int64(2 * (serialEvery + 1))
		if r, c := net.reads.Load(), net.carries.Load(); c != cut || r != 2*rounds-cut {
			t.Errorf("%d reads and %d carried sends, want %d and %d (the carried runs cut short)", r, c, 2*rounds-cut, cut)
		}
	})
	t.Run("off", func(t *testing.T) {
		net := newNet(false)
		net.readDelay = 2 * time.Millisecond
		pingPong(t, net)
		if r, c := net.reads.Load(), net.carries.Load(); r != 2*rounds || c != 0 {
			t.Errorf("%d reads and %d carried sends, want %d and none", r, c, 2*rounds)
		}
	})
	t.Run("not alone in flight", func(t *testing.T) {
		// Rank 0 keeps a send to rank 2 in flight while it ping-pongs
		// with rank 1: its pings are read, untimed; rank 1's pongs, its
		// only sends, adapt as above.
		net := newNet(true)
		net.mods = append(net.mods, &fakeMod{net: net, rank: 2, wake: make(chan struct{}, 1), peerDead: map[int]bool{}})
		net.readDelay = 2 * time.Millisecond
		job(t, net, func(t *testing.T, c *Comm) {
			switch c.Rank() {
			case 2:
				c.Recv(nil, 0, 9) // the end of the ping-pong
				buf := make([]byte, n)
				if _, err := c.Recv(buf, 0, 8); err != nil || !bytes.Equal(buf, pattern(n, 8)) {
					t.Errorf("rank 2: %v or wrong bytes", err)
				}
				return
			case 0:
				var r Request
				if err := c.Isend(&r, pattern(n, 8), 2, 8, false); err != nil {
					t.Error(err)
					return
				}
				defer r.Wait(nil)
				defer c.Send(nil, 2, 9, false)
			}
			play(t, c)
		})
		wantR, wantC := int64(rounds+serialRun+1), int64(rounds-serialRun)
		if r, c := net.reads.Load(), net.carries.Load(); r != wantR || c != wantC {
			t.Errorf("%d reads and %d carried sends, want %d and %d (rank 0's pings and its send to rank 2 read)", r, c, wantR, wantC)
		}
	})
}

// Windows both ways at once (osu bibw): while a poll brings rendezvous
// messages in runs, their reads are made together at the poll's end
// (Config.RgetBatchMax, queueRead, flushReads), a region the VecReader did
// not copy is read alone, and every message arrives whole.
func TestBatchedReads(t *testing.T) {
	const window, windows = 24, 6
	sizes := []int{300, 4000, 1000, 2500} // all rendezvous (eager 256), all read (RgetLimit 1)
	run := func(t *testing.T, net *fakeNet) {
		job(t, net, func(t *testing.T, c *Comm) {
			peer := 1 - c.Rank()
			reqs := make([]Request, 2*window)
			bufs := make([][]byte, window)
			for w := range windows {
				for i := range window {
					bufs[i] = make([]byte, sizes[i%len(sizes)])
					if err := c.Irecv(&reqs[i], bufs[i], peer, 7); err != nil {
						t.Error(err)
						return
					}
				}
				for i := range window {
					if err := c.Isend(&reqs[window+i], pattern(sizes[i%len(sizes)], w*window+i+peer), peer, 7, false); err != nil {
						t.Error(err)
						return
					}
				}
				for i := range reqs {
					if err := c.p.Wait(nil, &reqs[i]); err != nil || reqs[i].err != nil {
						t.Errorf("rank %d window %d request %d: %v, %v", c.Rank(), w, i, err, reqs[i].err)
						return
					}
					reset(&reqs[i])
				}
				for i := range window {
					if !bytes.Equal(bufs[i], pattern(sizes[i%len(sizes)], w*window+i+c.Rank())) {
						t.Errorf("rank %d window %d message %d: wrong bytes", c.Rank(), w, i)
						return
					}
				}
			}
		})
	}
	newNet := func(batch int) *fakeNet {
		net := newFakeNet(2, 256, 4096)
		net.rget, net.vec, net.vecMax = true, true, 16
		net.tune = func(c *Config) { c.RgetBatchMax = batch; c.StreamLimit = 0 }
		return net
	}
	const msgs = 2 * window * windows
	t.Run("batched", func(t *testing.T) {
		net := newNet(4096)
		run(t, net)
		calls, regions, reads := net.vecCalls.Load(), net.vecRegions.Load(), net.reads.Load()
		if regions+reads != msgs || regions <= calls {
			t.Errorf("%d ReadVec calls copied %d regions, and %d ReadFroms: want %d messages in all, more regions than calls", calls, regions, reads, msgs)
		}
	})
	t.Run("above the limit", func(t *testing.T) {
		net := newNet(2000) // 300 and 1000 batched (the rest after the first chunk: all of it)
		run(t, net)
		if regions, reads := net.vecRegions.Load(), net.reads.Load(); regions+reads != msgs || reads < msgs/2 {
			t.Errorf("%d regions batched and %d ReadFroms, want %d in all, at least half (2500 and 4000 B) read alone", regions, reads, msgs)
		}
	})
	t.Run("stopped short", func(t *testing.T) {
		net := newNet(4096)
		net.vecStop = 1000 // each call stops before a 1000-byte region, which is then read alone
		run(t, net)
		if regions, reads := net.vecRegions.Load(), net.reads.Load(); regions+reads != msgs || reads < msgs/4 {
			t.Errorf("%d regions batched and %d ReadFroms, want %d in all, at least the 1000-byte quarter read alone", regions, reads, msgs)
		}
	})
	t.Run("read fails", func(t *testing.T) {
		net := newNet(4096)
		net.vecMax, net.readFail = 0, true // nothing read at once: each read alone fails, the pipeline carries it
		run(t, net)
		if net.vecRegions.Load() != 0 || net.reads.Load() != msgs {
			t.Errorf("%d regions batched and %d ReadFroms, want 0 and %d", net.vecRegions.Load(), net.reads.Load(), msgs)
		}
	})
	t.Run("off", func(t *testing.T) {
		net := newNet(0)
		run(t, net)
		if net.vecCalls.Load() != 0 || net.reads.Load() != msgs {
			t.Errorf("%d ReadVec calls and %d ReadFroms, want 0 and %d", net.vecCalls.Load(), net.reads.Load(), msgs)
		}
	})
}

// TestBatchedReadThenPeerLost: a poll queues a read (batching) and then
// reports its sender lost; the read, made at the poll's end, fails, and
// so does the pipeline it falls back to: the receive fails with
// ErrPeerLost instead of waiting in recvs for FRAGs that never come
// (onPeerLost looked before it was there).
func TestBatchedReadThenPeerLost(t *testing.T) {
	net := newFakeNet(2, 256, 4096)
	net.rget, net.vec, net.readFail = true, true, true // vecMax 0: each read alone, and it fails
	net.tune = func(c *Config) { c.RgetBatchMax = 4096 }
	gone := make(chan struct{})
	msg := pattern(2000, 3)
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() == 1 {
			var r Request
			if err := c.Isend(&r, msg, 0, 1, false); err != nil {
				t.Error(err)
			}
			net.kill(1) // queued behind the RNDV in rank 0's module
			close(gone)
			return
		}
		streamingOn(c)
		<-gone
		var r Request
		if err := c.Irecv(&r, make([]byte, len(msg)), 1, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Wait(nil); !errors.Is(err, errs.ErrPeerLost) {
			t.Errorf("receive of the lost rank's message: %v; want ErrPeerLost", err)
		}
	})
	if net.vecCalls.Load() == 0 {
		t.Error("the read was not queued (no ReadVec call)")
	}
}

// A ping-pong's messages in the splittable band (Config.SerialSplit) ask
// for a split read or not, whichever completed faster: each rank's first
// run reads whole, its second asks for splits (the sender writes half:
// one WriteTo per split), then the faster way goes on.
func TestSerialSplit(t *testing.T) {
	const n, rounds = 3000, 150
	play := rally(n, rounds)
	newNet := func(on bool) *fakeNet {
		net := newFakeNet(2, 256, 4096)
		net.rget, net.runners = true, true
		net.tune = func(c *Config) {
			c.StreamLimit, c.RgetSplit, c.RgetSplitStream, c.SerialSplit = 1024, 4096, 2048, on
			c.RgetExploreMs = 1 << 20 // no second look within the test
			c.SpinUsec = 20000        // a sender waiting out a slow read polls on (a sleeping one is not asked to write)
		}
		return net
	}
	// What the senders chose is the RNDVs they flagged; the receiver may
	// still decline a split (its sender not seen polling at that instant,
	// more often under load), which makes it a whole read, timed as one:
	// the splits made count the way's measurements, the asks bound them
	// from above.
	first := int64(2 * serialRun) // each rank's run of splits
	t.Run("whole reads slow", func(t *testing.T) {
		net := newNet(true)
		// 10 ms: under a loaded CI a split (the sender descheduled
		// before its write) can take a few ms, and with 2 ms whole
		// reads won the choice and the asks stopped after the
		// exploring runs (50 and 123 asked, in 2 of ~10 full-suite runs
		// under -race on 2 cores).
		net.readDelay, net.readDelayMin = 10*time.Millisecond, n
		job(t, net, play)
		if a, w := net.streamFlagged.Load(), net.writes.Load(); a < 2*first || w > a {
			t.Errorf("%d sends asked for a split and %d were split, want more than the exploring runs' %d asked", a, w, first)
		}
	})
	t.Run("splits slow", func(t *testing.T) {
		net := newNet(true)
		// 20 ms: under a loaded CI a whole read's time (the receiver
		// descheduled) can reach a few ms, and with 2 ms splits won.
		net.writeDelay = 20 * time.Millisecond
		job(t, net, play)
		// Splits made are the exploring runs' (at most two each: a
		// warm-up's first time is dropped), which end once a split is
		// timed (serialCut). A declined ask is a whole read, timed as
		// one, and leaves the way unmeasured, so that under load the asks
		// go on (harmless: each is a whole read).
		cut := int64(2 * (serialEvery + 1))
		if a, w := net.streamFlagged.Load(), net.writes.Load(); a < cut || w > 2*first || w > a {
			t.Errorf("%d sends asked for a split and %d were split, want at least the cut exploring runs' %d asked and at most %d split", a, w, cut, 2*first)
		}
	})
	t.Run("declined", func(t *testing.T) {
		// Every ask declined: each was a whole read, and is timed as
		// one, never as a split.
		net := newNet(true)
		net.decline = true
		job(t, net, func(t *testing.T, c *Comm) {
			play(t, c)
			c.p.serialSplit.mu.Lock()
			e := c.p.serialSplit.est[rgetClass(n)]
			c.p.serialSplit.mu.Unlock()
			if e.last[pathPipe] != 0 || e.last[pathRead] == 0 {
				t.Errorf("rank %d: split timed %d ns, whole read %d ns; want no split and a whole read timed", c.Rank(), e.last[pathPipe], e.last[pathRead])
			}
		})
		if a, w := net.streamFlagged.Load(), net.writes.Load(); a < first || w != 0 {
			t.Errorf("%d sends asked for a split and %d were split, want at least %d asked and none split", a, w, first)
		}
	})
	t.Run("off", func(t *testing.T) {
		net := newNet(false)
		job(t, net, play)
		if a, w := net.streamFlagged.Load(), net.writes.Load(); a != 0 || w != 0 {
			t.Errorf("%d sends asked for a split and %d were split, want none", a, w)
		}
	})
}

// rally is a job body that plays rounds of ping-pong of n bytes between
// ranks 0 and 1 with blocking calls and checks every message's bytes.
func rally(n, rounds int) func(t *testing.T, c *Comm) {
	return func(t *testing.T, c *Comm) {
		peer := 1 - c.Rank()
		buf := make([]byte, n)
		for i := range rounds {
			if c.Rank() == 0 {
				if err := c.Send(pattern(n, i), peer, 5, false); err != nil {
					t.Error(err)
					return
				}
			}
			if _, err := c.Recv(buf, peer, 5); err != nil || !bytes.Equal(buf, pattern(n, i)) {
				t.Errorf("rank %d round %d: %v or wrong bytes", c.Rank(), i, err)
				return
			}
			if c.Rank() == 1 {
				if err := c.Send(buf, peer, 5, false); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}
}
