package pml

import (
	"bytes"
	"fmt"
	"testing"
	"time"
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
