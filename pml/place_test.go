package pml

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml/match"
)

// checkPrefix checks a receive of pattern(n, seed) into buf: ErrTruncate
// exactly when n is longer than buf, else no error; the count and the
// bytes of what fits.
func checkPrefix(t *testing.T, what string, st Status, err error, buf []byte, n, seed int) {
	t.Helper()
	want := min(n, len(buf))
	if (n > len(buf)) != errors.Is(err, errs.ErrTruncate) || n <= len(buf) && err != nil {
		t.Errorf("%s (%d bytes into %d): error %v", what, n, len(buf), err)
	}
	if st.Count != want || !bytes.Equal(buf[:want], pattern(n, seed)[:want]) {
		t.Errorf("%s (%d bytes into %d): count %d, bytes right %v", what, n, len(buf), st.Count, bytes.Equal(buf[:want], pattern(n, seed)[:want]))
	}
}

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
				checkPrefix(t, "the receive", st, err, buf, tc.n, 7)
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

// TestPlacedMessages: with a BTL that reads MATCH and RNDV payloads
// straight into a posted receive (placeMsg), eager, synchronous and
// rendezvous messages to posted receives (specific, AnyTag, AnySource)
// arrive whole and in order; those that cannot be placed (no receive
// posted yet, a buffer too short) take the usual path.
func TestPlacedMessages(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	net.place = true
	type msg struct {
		n, buf, tag int
		sync        bool
		late        bool // received after it arrived (unexpected)
	}
	ms := []msg{{100, 100, 1, false, false}, {256, 4000, 2, true, false}, {3000, 3000, 1, false, false},
		{9000, 5000, 3, false, false}, {200, 100, 1, false, false}, {700, 700, 1, true, false},
		{5000, 8000, 2, false, true}, {50, 50, 4, false, true}, {2048, 2048, 5, false, false}}
	posted, sent := make(chan struct{}), make(chan struct{})
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() == 0 {
			<-posted
			isendAll(t, c, len(ms), func(i int) (int, int, bool) { return ms[i].n, ms[i].tag, ms[i].sync }, sent)
			return
		}
		reqs := make([]Request, len(ms))
		bufs := make([][]byte, len(ms))
		for i, m := range ms {
			bufs[i] = make([]byte, m.buf)
			if m.late {
				continue
			}
			src, tag := 0, m.tag
			switch i % 3 {
			case 1:
				tag = match.AnyTag
			case 2:
				src = match.AnySource
			}
			if err := c.Irecv(&reqs[i], bufs[i], src, tag); err != nil {
				t.Fatal(err)
			}
		}
		close(posted)
		<-sent
		for i, m := range ms {
			if m.late {
				if err := c.Irecv(&reqs[i], bufs[i], 0, m.tag); err != nil {
					t.Fatal(err)
				}
			}
			st, err := reqs[i].Wait(nil)
			checkPrefix(t, fmt.Sprint("message ", i), st, err, bufs[i], m.n, i)
			if st.Tag != m.tag || st.Source != 0 {
				t.Errorf("message %d: status %+v, want tag %d from rank 0", i, st, m.tag)
			}
		}
	})
	if net.placed.Load() < 5 {
		t.Errorf("%d payloads placed; want the posted eager and rendezvous ones at least", net.placed.Load())
	}
}

// TestPlaceMsgDeclines: placeMsg matches nothing and changes nothing for
// a message that is not its source's turn, that no receive takes, that
// does not fit the receive's buffer, or whose header is malformed; the
// message then arrives as usual. One it places that is lost before it
// lands fails its receive with ErrPeerLost.
func TestPlaceMsgDeclines(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() != 1 {
			return
		}
		p := c.p
		var r Request
		buf := make([]byte, 1000)
		if err := c.Irecv(&r, buf, 0, 7); err != nil {
			t.Fatal(err)
		}
		hdr := func(tag int32, seq uint32) []byte {
			h := matchHdr{ctx: c.ctx, tag: tag, seq: seq}
			return h.encodeMatch(make([]byte, 64))
		}
		p.progMu.Lock()
		for _, tc := range []struct {
			name string
			hdr  []byte
			n    int
		}{
			{"ahead of its turn", hdr(7, 1), 500},
			{"no receive", hdr(8, 0), 500},
			{"too long", hdr(7, 0), 1001},
			{"empty", hdr(7, 0), 0},
			{"malformed", hdr(7, 0)[:5], 500},
		} {
			if dst := p.placeMsg(0, tc.hdr, tc.n, false); dst != nil {
				t.Errorf("%s: a place of %d bytes", tc.name, len(dst))
			}
		}
		dst := p.placeMsg(0, hdr(7, 0), 600, false)
		if len(dst) != 600 || &dst[0] != &buf[0] || p.peers[0].landing != &r {
			t.Fatalf("a place of %d bytes, landing %p; want the receive's buffer", len(dst), p.peers[0].landing)
		}
		if again := p.placeMsg(0, hdr(7, 1), 10, false); again != nil {
			t.Error("a second place while one is landing")
		}
		p.onPeerLost(0)
		p.progMu.Unlock()
		if !r.Done() || !errors.Is(r.err, errs.ErrPeerLost) || p.peers[0].landing != nil {
			t.Errorf("after the loss: done %v, error %v, landing %p", r.Done(), r.err, p.peers[0].landing)
		}
	})
}
