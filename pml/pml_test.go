package pml

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml/match"
)

// job runs body once per rank, each rank with its own PML over one fakeNet.
func job(t *testing.T, net *fakeNet, body func(t *testing.T, c *Comm)) {
	t.Helper()
	n := len(net.mods)
	pmls := make([]*PML, n)
	for i := range pmls {
		var mod btl.Module = net.mods[i]
		if net.runners {
			mod = runnerMod{net.mods[i]}
		}
		if net.sourcePoll {
			mod = sourceMod{net.mods[i]}
		}
		if net.direct {
			mod = directMod{sourceMod{net.mods[i]}}
		}
		if net.vec {
			mod = vecMod{net.mods[i]}
		}
		cfg := Config{Rank: i, Size: n, Modules: []btl.Module{mod}, SpinCount: 50,
			UnexpectedLimit: net.limit, RgetLimit: 1, SleepTimeout: 5 * time.Millisecond}
		if net.tune != nil {
			net.tune(&cfg)
		}
		p, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		pmls[i] = p
	}
	var wg sync.WaitGroup
	errc := make(chan string, n)
	for i := range pmls {
		wg.Add(1)
		go func(p *PML) {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					errc <- fmt.Sprint("rank ", p.Rank(), " panicked: ", r)
				}
			}()
			body(t, p.World())
		}(pmls[i])
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(hangDeadline):
		t.Fatalf("job hung: not done after %v; every goroutine:\n\n%s", hangDeadline, allStacks())
	}
	close(errc)
	for e := range errc {
		t.Error(e)
	}
}

func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + seed)
	}
	return b
}

// MPI non-overtaking: messages between one pair on one communicator are
// received in send order across the eager/rendezvous boundary.
func TestOrderAcrossProtocols(t *testing.T) {
	sizes := []int{0, 1, 100, 256, 257, 1000, 5000, 256, 0, 70000, 3}
	for _, starve := range []bool{false, true} {
		t.Run(fmt.Sprint("starve=", starve), func(t *testing.T) {
			net := newFakeNet(2, 256, 1024)
			net.starve = starve
			job(t, net, func(t *testing.T, c *Comm) {
				if c.Rank() == 0 {
					reqs := make([]*Request, len(sizes))
					for i, n := range sizes {
						reqs[i] = new(Request)
						if err := c.Isend(reqs[i], pattern(n, i), 1, 5, false); err != nil {
							t.Error(err)
						}
					}
					for _, r := range reqs {
						if _, err := r.Wait(nil); err != nil {
							t.Error(err)
						}
					}
					return
				}
				time.Sleep(10 * time.Millisecond) // let them arrive unexpected
				for i, n := range sizes {
					buf := make([]byte, 80000)
					st, err := c.Recv(buf, 0, 5)
					if err != nil || st.Count != n || !bytes.Equal(buf[:n], pattern(n, i)) {
						t.Errorf("message %d: status %+v err %v, want %d bytes of pattern %d", i, st, err, n, i)
					}
				}
			})
		})
	}
}

// MPI truncation: the buffer keeps the prefix, the error names sizes, the
// sender completes normally, and later traffic is unaffected.
func TestTruncationThenMoreTraffic(t *testing.T) {
	for _, n := range []int{50, 300, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
				if c.Rank() == 0 {
					if err := c.Send(pattern(n, 1), 1, 3, false); err != nil {
						t.Errorf("sender: %v", err)
					}
					if err := c.Send([]byte("next"), 1, 4, false); err != nil {
						t.Errorf("sender: %v", err)
					}
					return
				}
				buf := make([]byte, 20)
				st, err := c.Recv(buf, 0, 3)
				if !errors.Is(err, errs.ErrTruncate) || st.Count != 20 || !bytes.Equal(buf, pattern(n, 1)[:20]) {
					t.Errorf("got %+v %v", st, err)
				}
				if err != nil && !bytes.Contains([]byte(err.Error()), []byte(fmt.Sprint(n))) {
					t.Errorf("error %q does not name the message length %d", err, n)
				}
				st, err = c.Recv(buf, 0, 4)
				if err != nil || string(buf[:st.Count]) != "next" {
					t.Errorf("after truncation: %+v %v", st, err)
				}
			})
		})
	}
}

// MPI Ssend: completes only after the receive matched, even for 0 bytes.
func TestSsendWaitsForMatch(t *testing.T) {
	for _, n := range []int{0, 10, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
				if c.Rank() == 0 {
					r := new(Request)
					if err := c.Isend(r, pattern(n, 0), 1, 1, true); err != nil {
						t.Error(err)
					}
					ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
					_, err := r.Wait(ctx)
					cancel()
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("Ssend completed before the receive was posted: %v", err)
					}
					if err := c.Send(nil, 1, 2, false); err != nil { // tell rank 1 to post
						t.Error(err)
					}
					if _, err := r.Wait(nil); err != nil {
						t.Error(err)
					}
					return
				}
				if _, err := c.Recv(nil, 0, 2); err != nil {
					t.Error(err)
				}
				buf := make([]byte, n)
				if st, err := c.Recv(buf, 0, 1); err != nil || st.Count != n {
					t.Errorf("%+v %v", st, err)
				}
			})
		})
	}
}

// MPI wildcards: AnySource/AnyTag receives report the real source and tag;
// a receive posted first wins over a later, more specific one.
func TestWildcardsPostingOrder(t *testing.T) {
	job(t, newFakeNet(3, 256, 1024), func(t *testing.T, c *Comm) {
		switch c.Rank() {
		case 0:
			var wild, spec Request
			bw, bs := make([]byte, 8), make([]byte, 8)
			if err := c.Irecv(&wild, bw, -1, -1); err != nil {
				t.Error(err)
			}
			if err := c.Irecv(&spec, bs, 2, 9); err != nil {
				t.Error(err)
			}
			if err := c.Send(nil, 2, 0, false); err != nil { // go
				t.Error(err)
			}
			st, err := wild.Wait(nil)
			if err != nil || st.Source != 2 || st.Tag != 9 || string(bw[:st.Count]) != "first" {
				t.Errorf("wildcard got %+v %v %q", st, err, bw)
			}
			st, err = spec.Wait(nil)
			if err != nil || st.Source != 2 || string(bs[:st.Count]) != "second" {
				t.Errorf("specific got %+v %v %q", st, err, bs)
			}
		case 2:
			if _, err := c.Recv(nil, 0, 0); err != nil {
				t.Error(err)
			}
			c.Send([]byte("first"), 0, 9, false)
			c.Send([]byte("second"), 0, 9, false)
		}
	})
}

// Probe then receive: probe reports the full length and does not consume.
func TestProbeThenRecv(t *testing.T) {
	job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
		if c.Rank() == 1 {
			var a, b Request
			c.Isend(&a, pattern(3000, 4), 0, 6, false)
			c.Isend(&b, pattern(10, 5), 0, 7, false)
			a.Wait(nil)
			b.Wait(nil)
			return
		}
		st, err := c.Probe(-1, 7)
		if err != nil || st.Count != 10 || st.Source != 1 || st.Tag != 7 {
			t.Errorf("probe tag 7: %+v %v", st, err)
		}
		st, err = c.Probe(1, -1)
		if err != nil || st.Count != 3000 || st.Tag != 6 {
			t.Errorf("probe any tag: %+v %v", st, err)
		}
		buf := make([]byte, st.Count)
		if st2, err := c.Recv(buf, st.Source, st.Tag); err != nil || !bytes.Equal(buf, pattern(3000, 4)) {
			t.Errorf("recv after probe: %+v %v", st2, err)
		}
		if _, ok, _ := c.Iprobe(1, 6); ok {
			t.Error("Iprobe still sees a received message")
		}
		if st, ok, err := c.Iprobe(1, 7); !ok || err != nil || st.Count != 10 {
			t.Errorf("Iprobe tag 7: %+v %v %v", st, ok, err)
		}
		c.Recv(buf, 1, 7)
	})
}

// MPI cancel: a cancelled receive completes with ErrCanceled, its buffer is
// untouched, and the message goes to the next receive.
func TestCancel(t *testing.T) {
	job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
		if c.Rank() == 1 {
			c.Recv(nil, 0, 1)
			c.Send([]byte("data"), 0, 2, false)
			return
		}
		var r Request
		buf := []byte("xxxx")
		c.Irecv(&r, buf, 1, 2)
		if err := r.Cancel(); err != nil {
			t.Error(err)
		}
		if _, err := r.Wait(nil); !errors.Is(err, errs.ErrCanceled) {
			t.Errorf("cancelled receive: %v", err)
		}
		if err := r.Cancel(); err != nil {
			t.Errorf("second cancel: %v", err)
		}
		c.Send(nil, 1, 1, false)
		b2 := make([]byte, 4)
		if st, err := c.Recv(b2, 1, 2); err != nil || string(b2[:st.Count]) != "data" || string(buf) != "xxxx" {
			t.Errorf("after cancel: %v %q %q", err, b2, buf)
		}
		var s Request
		c.Isend(&s, nil, 1, 3, false)
		if err := s.Cancel(); err == nil {
			t.Error("Cancel of a send returned nil")
		}
	})
}

// Dup isolation: the same (source, tag) on two communicators never cross.
func TestDupIsolation(t *testing.T) {
	job(t, newFakeNet(3, 256, 1024), func(t *testing.T, c *Comm) {
		d, err := c.Dup()
		if err != nil {
			t.Fatal(err)
		}
		d2, err := c.Dup()
		if err != nil || d2.ctx == d.ctx || d.ctx == c.ctx {
			t.Fatalf("contexts %d %d %d err %v", c.ctx, d.ctx, d2.ctx, err)
		}
		if c.Rank() == 0 {
			d.Send([]byte("dup"), 1, 1, false)
			c.Send([]byte("world"), 1, 1, false)
		}
		if c.Rank() == 1 {
			b := make([]byte, 8)
			st, _ := c.Recv(b, 0, 1)
			if string(b[:st.Count]) != "world" {
				t.Errorf("world comm got %q", b[:st.Count])
			}
			st, _ = d.Recv(b, 0, 1)
			if string(b[:st.Count]) != "dup" {
				t.Errorf("dup comm got %q", b[:st.Count])
			}
		}
		if err := c.Barrier(); err != nil {
			t.Error(err)
		}
	})
}

// Many goroutines share one Comm; every message arrives exactly once.
func TestManyGoroutines(t *testing.T) {
	const G, M = 8, 200
	job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
		var wg sync.WaitGroup
		for g := 0; g < G; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < M; i++ {
					n := (i * 37) % 700
					if c.Rank() == 0 {
						if err := c.Send(pattern(n, g+i), 1, g, false); err != nil {
							t.Error(err)
						}
					} else {
						buf := make([]byte, 700)
						st, err := c.Recv(buf, 0, g)
						if err != nil || st.Count != n || !bytes.Equal(buf[:n], pattern(n, g+i)) {
							t.Errorf("goroutine %d message %d: %+v %v", g, i, st, err)
							return
						}
					}
				}
			}(g)
		}
		wg.Wait()
	})
}

// Peer loss: pending operations with a dead peer complete with ErrPeerLost.
func TestPeerLost(t *testing.T) {
	net := newFakeNet(3, 256, 1024)
	job(t, net, func(t *testing.T, c *Comm) {
		switch c.Rank() {
		case 0:
			var r Request
			c.Irecv(&r, make([]byte, 4), 2, 1)
			var s Request
			c.Isend(&s, pattern(5000, 0), 2, 1, false) // rendezvous: waits for an ACK that never comes
			c.Send(nil, 1, 0, false)
			if _, err := r.Wait(nil); !errors.Is(err, errs.ErrPeerLost) {
				t.Errorf("receive from the dead rank: %v", err)
			}
			if _, err := s.Wait(nil); !errors.Is(err, errs.ErrPeerLost) {
				t.Errorf("send to the dead rank: %v", err)
			}
			if err := c.Send(nil, 2, 1, false); !errors.Is(err, errs.ErrPeerLost) {
				t.Errorf("later send to the dead rank: %v", err)
			}
		case 1:
			c.Recv(nil, 0, 0)
			net.kill(2)
		}
	})
}

// Invalid arguments are reported before anything is sent.
func TestInvalidArgs(t *testing.T) {
	job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
		if c.Rank() != 0 {
			return
		}
		cases := []struct {
			name string
			err  error
			want error
		}{
			{"send to rank -1", c.Send(nil, -1, 0, false), errs.ErrInvalidRank},
			{"send to rank size", c.Send(nil, 2, 0, false), errs.ErrInvalidRank},
			{"send tag -1", c.Send(nil, 1, -1, false), errs.ErrInvalidTag},
			{"send tag MaxTag+1", c.Send(nil, 1, MaxTag+1, false), errs.ErrInvalidTag},
			{"recv from rank -2", c.Irecv(new(Request), nil, -2, 0), errs.ErrInvalidRank},
			{"recv tag -2", c.Irecv(new(Request), nil, 0, -2), errs.ErrInvalidTag},
			{"recv tag MaxTag+1", c.Irecv(new(Request), nil, 0, MaxTag+1), errs.ErrInvalidTag},
			{"recv from rank size", c.Irecv(new(Request), nil, 2, 0), errs.ErrInvalidRank},
			// The bounds themselves are valid (checkSend and checkRecv
			// test them with unsigned compares).
			{"send to rank size-1, tag MaxTag", c.CheckSend(1, MaxTag), nil},
			{"send to rank 0, tag 0", c.CheckSend(0, 0), nil},
			{"recv from AnySource, AnyTag", c.CheckRecv(match.AnySource, match.AnyTag), nil},
			{"recv from rank size-1, tag MaxTag", c.CheckRecv(1, MaxTag), nil},
		}
		for _, tc := range cases {
			if !errors.Is(tc.err, tc.want) || tc.want == nil && tc.err != nil {
				t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
			}
		}
	})
}

// Unexpected memory is bounded: past the limit senders switch to rendezvous.
func TestUnexpectedBackPressure(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	net.limit = 64 << 10
	const N = 3000
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() == 0 {
			reqs := make([]Request, N)
			for i := range reqs {
				c.Isend(&reqs[i], pattern(200, i), 1, 1, false)
			}
			for i := range reqs {
				if _, err := reqs[i].Wait(nil); err != nil {
					t.Error(err)
				}
			}
			return
		}
		// Let rank 0 flood us before any receive is posted.
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			c.p.Progress()
			time.Sleep(time.Millisecond)
		}
		c.p.mu.Lock()
		held := c.p.unexpBytes
		c.p.mu.Unlock()
		if held > 64<<10 {
			t.Errorf("unexpected memory grew to %d bytes, limit 64 KiB", held)
		}
		buf := make([]byte, 200)
		for i := 0; i < N; i++ {
			if st, err := c.Recv(buf, 0, 1); err != nil || !bytes.Equal(buf[:st.Count], pattern(200, i)) {
				t.Fatalf("message %d: %+v %v", i, st, err)
			}
		}
	})
}

// Once every other rank is lost, AnySource receives and probes fail with
// ErrPeerLost (a pending one, a new one, a probe); a receive from self and
// a message already here are unaffected.
func TestAnySourceAllLost(t *testing.T) {
	net := newFakeNet(3, 256, 1024)
	job(t, net, func(t *testing.T, c *Comm) {
		switch c.Rank() {
		case 0:
			var any, self Request
			c.Irecv(&any, make([]byte, 4), match.AnySource, 9)
			c.Irecv(&self, make([]byte, 4), 0, 9)
			c.Send(nil, 1, 0, false)
			if _, err := any.Wait(nil); !errors.Is(err, errs.ErrPeerLost) {
				t.Errorf("pending match.AnySource receive: %v, want ErrPeerLost", err)
			}
			if _, err := c.Recv(nil, match.AnySource, 8); !errors.Is(err, errs.ErrPeerLost) {
				t.Errorf("new match.AnySource receive: %v, want ErrPeerLost", err)
			}
			if _, err := c.Probe(match.AnySource, match.AnyTag); err != nil {
				t.Errorf("probe of the message rank 1 sent before it left: %v", err)
			}
			if _, err := c.Recv(nil, match.AnySource, 3); err != nil {
				t.Errorf("receive of the message rank 1 sent before it left: %v", err)
			}
			if _, _, err := c.Iprobe(match.AnySource, match.AnyTag); !errors.Is(err, errs.ErrPeerLost) {
				t.Errorf("match.AnySource Iprobe: %v, want ErrPeerLost", err)
			}
			if self.Done() {
				t.Error("a receive from self failed with the other ranks")
			}
			c.Send(nil, 0, 9, false)
			if _, err := self.Wait(nil); err != nil {
				t.Errorf("receive from self: %v", err)
			}
		case 1:
			c.Send(nil, 0, 3, false)
			c.Recv(nil, 0, 0)
			net.kill(1)
			net.kill(2)
		}
	})
}

// After Close, a pending operation's Wait, a blocking Recv and a loop of
// Tests all end with ErrFinalized instead of waiting forever or reporting
// success.
func TestWaitsEndAtClose(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() != 0 {
			return
		}
		var h Handle
		if err := c.StartIrecv(&h, make([]byte, 4), 1, 1); err != nil {
			t.Fatal(err)
		}
		var s Request
		c.Isend(&s, pattern(5000, 0), 1, 2, true) // waits for a match that never comes
		recvErr := make(chan error)
		go func() { _, err := c.Recv(nil, 1, 3); recvErr <- err }()
		c.PML().Close()
		if _, err := s.Wait(nil); !errors.Is(err, errs.ErrFinalized) {
			t.Errorf("Wait on a pending send after Close: %v, want ErrFinalized", err)
		}
		if err := <-recvErr; !errors.Is(err, errs.ErrFinalized) {
			t.Errorf("Recv racing Close: %v, want ErrFinalized", err)
		}
		for {
			_, done, err := h.Test()
			if done {
				if !errors.Is(err, errs.ErrFinalized) {
					t.Errorf("Test after Close: %v, want ErrFinalized", err)
				}
				break
			}
		}
	})
}
