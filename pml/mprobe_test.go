package pml

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/gorun-mpi/gorun/internal/errs"
)

// MPI_Mprobe: the probed message leaves matching (no receive or probe sees
// it), its Recv delivers it whatever its protocol, and only once; later
// messages from the same source are matched after it.
func TestMatchedProbe(t *testing.T) {
	sizes := []int{10, 0, 3000, 256, 257, 70000} // eager and rendezvous over a 256-byte eager limit
	job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
		if c.Rank() == 1 {
			for i, n := range sizes {
				if err := c.Send(pattern(n, i), 0, 6, false); err != nil {
					t.Error(err)
				}
			}
			return
		}
		for i, n := range sizes {
			m, st, err := c.Mprobe(-1, 6)
			if err != nil || st.Count != n || st.Source != 1 || st.Tag != 6 {
				t.Errorf("Mprobe of message %d: %+v %v, want %d bytes from 1 with tag 6", i, st, err, n)
				return
			}
			if _, ok, err := c.Iprobe(1, 6); ok && i == len(sizes)-1 || err != nil {
				t.Errorf("Iprobe sees the last message, taken by Mprobe (err %v)", err)
			}
			buf := make([]byte, n+5)
			var h Handle
			if i%2 == 0 {
				st, err = m.Recv(buf)
			} else if err = m.StartRecv(&h, buf); err == nil {
				st, err = h.Wait(nil)
			}
			if err != nil || st.Count != n || st.Source != 1 || st.Tag != 6 || !bytes.Equal(buf[:n], pattern(n, i)) {
				t.Errorf("receive of Mprobed message %d (%d bytes): %+v %v", i, n, st, err)
			}
			if _, err := m.Recv(buf); !errors.Is(err, errs.ErrInvalidArg) {
				t.Errorf("second Recv of message %d: %v, want ErrInvalidArg", i, err)
			}
			if err := m.StartRecv(new(Handle), buf); !errors.Is(err, errs.ErrInvalidArg) {
				t.Errorf("StartRecv after Recv of message %d: %v, want ErrInvalidArg", i, err)
			}
		}
		if _, _, ok, err := c.Improbe(-1, -1); ok || err != nil {
			t.Errorf("Improbe after every message was taken: ok=%v err=%v", ok, err)
		}
	})
}

// A matched receive of a truncated message reports ErrTruncate like Recv.
func TestMatchedProbeTruncate(t *testing.T) {
	job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
		if c.Rank() == 1 {
			c.Send(pattern(100, 1), 0, 1, false)
			c.Send(pattern(5000, 2), 0, 1, false)
			return
		}
		for i, n := range []int{100, 5000} {
			m, _, err := c.Mprobe(1, 1)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			st, err := m.Recv(buf)
			if !errors.Is(err, errs.ErrTruncate) || st.Count != 64 || !bytes.Equal(buf, pattern(n, i+1)[:64]) {
				t.Errorf("matched receive of %d bytes into 64: %+v %v", n, st, err)
			}
		}
	})
}

// Many goroutines doing Improbe + Recv on one source: each message is
// received exactly once, by the goroutine that probed it.
func TestMatchedProbeGoroutines(t *testing.T) {
	const G, M = 8, 400
	job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
		if c.Rank() == 1 {
			for i := 0; i < M; i++ {
				n := 4 + (i*97)%600
				b := pattern(n, i)
				b[0], b[1] = byte(i), byte(i>>8)
				if err := c.Send(b, 0, 3, false); err != nil {
					t.Error(err)
				}
			}
			return
		}
		var mu sync.Mutex
		seen := make([]int, M)
		total := 0
		var wg sync.WaitGroup
		for g := 0; g < G; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 700)
				for {
					mu.Lock()
					finished := total == M
					mu.Unlock()
					if finished {
						return
					}
					m, st, ok, err := c.Improbe(1, 3)
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						continue
					}
					rst, err := m.Recv(buf)
					if err != nil || rst != st {
						t.Errorf("Recv of an Improbed message: %+v %v, probe said %+v", rst, err, st)
						return
					}
					i := int(buf[0]) | int(buf[1])<<8
					want := pattern(4+(i*97)%600, i)
					want[0], want[1] = byte(i), byte(i>>8)
					if i >= M || !bytes.Equal(buf[:rst.Count], want) {
						t.Errorf("message %d: corrupted", i)
						return
					}
					mu.Lock()
					seen[i]++
					total++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		for i, n := range seen {
			if n != 1 {
				t.Errorf("message %d received %d times, want once", i, n)
			}
		}
	})
}

// A rendezvous message probed before its sender died cannot be received:
// ErrPeerLost, not a hang. An eager one still can.
func TestMatchedProbePeerLost(t *testing.T) {
	net := newFakeNet(3, 256, 1024)
	job(t, net, func(t *testing.T, c *Comm) {
		switch c.Rank() {
		case 2:
			var a, b Request
			c.Isend(&a, pattern(50, 1), 0, 1, false)
			c.Isend(&b, pattern(5000, 2), 0, 2, false)
			c.Recv(nil, 0, 9) // rank 0 has probed both
			net.kill(2)
		case 0:
			me, _, err1 := c.Mprobe(2, 1)
			mr, _, err2 := c.Mprobe(2, 2)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			c.Send(nil, 2, 9, false)
			c.Recv(nil, 1, 0) // rank 1 saw the kill
			buf := make([]byte, 5000)
			if st, err := me.Recv(buf); err != nil || st.Count != 50 {
				t.Errorf("eager message of a dead rank: %+v %v", st, err)
			}
			if _, err := mr.Recv(buf); !errors.Is(err, errs.ErrPeerLost) {
				t.Errorf("rendezvous message of a dead rank: %v, want ErrPeerLost", err)
			}
		case 1:
			for !c.p.PeerLost(2) {
				c.p.Progress()
			}
			c.Send(nil, 0, 0, false)
		}
	})
}
