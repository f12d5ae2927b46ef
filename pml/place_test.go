package pml

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/gorun-mpi/gorun/internal/errs"
)

// TestPlacedFrags: with a BTL that reads FRAG payloads straight into the
// receive buffer (btl.Placer), pipelined receives get the right bytes,
// truncated ones keep the prefix and report ErrTruncate, and later traffic
// is unaffected; the FRAGs did go through the placing path.
func TestPlacedFrags(t *testing.T) {
	for _, tc := range []struct{ n, buf int }{{5000, 5000}, {4096 + 1, 8192}, {20000, 3000}, {20000, 1500}} {
		t.Run(fmt.Sprint(tc.n, "into", tc.buf), func(t *testing.T) {
			net := newFakeNet(2, 256, 1024)
			net.place = true
			job(t, net, func(t *testing.T, c *Comm) {
				if c.Rank() == 0 {
					if err := c.Send(pattern(tc.n, 7), 1, 3, false); err != nil {
						t.Errorf("sender: %v", err)
					}
					if err := c.Send([]byte("next"), 1, 4, false); err != nil {
						t.Errorf("sender: %v", err)
					}
					return
				}
				buf := make([]byte, tc.buf)
				st, err := c.Recv(buf, 0, 3)
				want := min(tc.n, tc.buf)
				if tc.n > tc.buf && !errors.Is(err, errs.ErrTruncate) || tc.n <= tc.buf && err != nil {
					t.Errorf("receive of %d bytes into %d: error %v", tc.n, tc.buf, err)
				}
				if st.Count != want || !bytes.Equal(buf[:want], pattern(tc.n, 7)[:want]) {
					t.Errorf("receive of %d bytes into %d: count %d, bytes differ: %v", tc.n, tc.buf, st.Count, !bytes.Equal(buf[:want], pattern(tc.n, 7)[:want]))
				}
				st, err = c.Recv(buf, 0, 4)
				if err != nil || string(buf[:st.Count]) != "next" {
					t.Errorf("after it: %+v %v", st, err)
				}
			})
			if net.placed.Load() == 0 {
				t.Errorf("no FRAG was placed (%d FRAGs sent)", net.frags.Load())
			}
		})
	}
}

// TestPlaceFragDeclines: placeFrag gives no place to a FRAG that names no
// receive, names another rank's, or does not fit the receive; fragLanded
// for such a FRAG changes nothing.
func TestPlaceFragDeclines(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() != 1 {
			return
		}
		p := c.p
		r := &Request{peer: 0, want: 3000, buf: make([]byte, 3000)}
		p.mu.Lock()
		p.recvs[77] = r
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.recvs, 77)
			p.mu.Unlock()
		}()
		hb := make([]byte, 64)
		for _, tc := range []struct {
			name      string
			src       int
			rreq, off uint64
			n         int
			ok        bool
		}{
			{"fits", 0, 77, 1000, 2000, true},
			{"unknown receive", 0, 78, 0, 100, false},
			{"another rank's receive", 1, 77, 0, 100, false},
			{"past the end", 0, 77, 2000, 1001, false},
			{"offset past the end", 0, 77, 3001, 0, false},
		} {
			dst := p.placeFrag(tc.src, encodeFrag(hb, tc.rreq, tc.off), tc.n)
			if tc.ok != (dst != nil) || dst != nil && (len(dst) != tc.n || &dst[0] != &r.buf[tc.off]) {
				t.Errorf("%s: place of %d bytes = %d bytes (nil %v); want a place: %v", tc.name, tc.n, len(dst), dst == nil, tc.ok)
			}
		}
		if _, _, _, err := decodeFrag(hb[:3]); err == nil {
			t.Fatal("decodeFrag accepted 3 bytes")
		}
		if dst := p.placeFrag(0, hb[:3], 10); dst != nil {
			t.Errorf("place of a malformed header = %d bytes; want nil", len(dst))
		}
		p.fragLanded(0, encodeFrag(hb, 78, 0), 100)
		if r.received != 0 {
			t.Errorf("a landed FRAG of an unknown receive counted %d bytes into another", r.received)
		}
	})
}

// TestPlaceEndsBatch: the module calls placeFrag and fragLanded from inside
// a poll that may hold mu for its batch of eager deliveries (an arrive of
// a streaming pass leaves it held, recv.go). Both take mu themselves, so
// each must end the batch first; otherwise the poll deadlocks on its own
// lock (an 8-rank alltoall over tcp hung so in Finalize's barrier, 5551579).
// A deadlock here ends the job after hangDeadline with every stack.
func TestPlaceEndsBatch(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() != 1 {
			return
		}
		p := c.p
		r := &Request{peer: 0, want: 3000, buf: make([]byte, 3000)}
		p.mu.Lock()
		p.recvs[77] = r
		p.mu.Unlock()
		hb := make([]byte, 64)
		p.progMu.Lock()
		p.lockDelivery() // as the poll's earlier eager delivery left it
		dst := p.placeFrag(0, encodeFrag(hb, 77, 0), 3000)
		held := p.delivering
		p.lockDelivery() // another eager delivery before the payload is in
		copy(dst, pattern(3000, 5))
		p.fragLanded(0, encodeFrag(hb, 77, 0), 3000)
		held = held || p.delivering
		p.progMu.Unlock()
		if held {
			t.Error("placeFrag or fragLanded returned with the batch's hold of mu")
		}
		if len(dst) != 3000 || !r.Done() || !bytes.Equal(r.buf, pattern(3000, 5)) {
			t.Errorf("placed receive: place of %d bytes, done %v", len(dst), r.Done())
		}
		p.mu.Lock()
		_, still := p.recvs[77]
		p.mu.Unlock()
		if still {
			t.Error("the completed receive is still in recvs")
		}
	})
}
