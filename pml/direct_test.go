package pml

import (
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/gorun-mpi/gorun/internal/errs"
)

// directTaken reports whether c's last blocking Recv was received directly
// (recvDirect: its request, now the spare, completed early; the posted
// path completes it with stDone).
func directTaken(t *testing.T, c *Comm) bool {
	t.Helper()
	r := c.p.spare.Load()
	if r == nil {
		t.Fatal("the Recv's request is not the spare")
	}
	return r.early
}

// TestDirectRecv: once the pair has a fast box, a blocking Recv takes its
// message from the box without posting (the right bytes, Status, no
// receive left posted), at every size up to the box's largest record.
func TestDirectRecv(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	comms := smComms(t)
	direct := 0
	for i := range 64 {
		n := []int{0, 1, 8, 16, 17, 64, 200, 1000}[i%8]
		want := pattern(n, i)
		if err := comms[0].Send(want, 1, i%3, false); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1024)
		st, err := comms[1].Recv(buf, 0, i%3)
		if err != nil || st.Source != 0 || st.Tag != i%3 || st.Count != n || !bytes.Equal(buf[:n], want) {
			t.Fatalf("message %d (%d B): Recv = %+v, %v; data ok %v", i, n, st, err, bytes.Equal(buf[:n], want))
		}
		if directTaken(t, comms[1]) {
			direct++
		}
		if posted, unexp, parked := comms[1].p.eng.Len(); posted+unexp+parked != 0 {
			t.Fatalf("message %d: engine holds %d posted, %d unexpected, %d parked; want none", i, posted, unexp, parked)
		}
	}
	// The first messages go by the FIFO (the box comes after a few), and a
	// full progress pass takes one in passEvery looks.
	if direct < 32 {
		t.Errorf("%d of 64 Recvs received directly; want most", direct)
	}
}

// TestDirectRecvFallsBack: whatever the direct receive must not take goes
// the usual way, with MPI's results: a message for another tag first (it
// waits unexpected, the Recv gets its own after it), a receive posted
// before for the same message (it gets the first), a longer message
// (ErrTruncate, the buffer's bytes), a synchronous send (whose Ssend
// returns once matched), and AnyTag takes the next one.
func TestDirectRecvFallsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	comms := smComms(t)
	send := func(b []byte, tag int) {
		t.Helper()
		if err := comms[0].Send(b, 1, tag, false); err != nil {
			t.Fatal(err)
		}
	}
	recv := func(n, tag int) ([]byte, Status, error) {
		buf := make([]byte, n)
		st, err := comms[1].Recv(buf, 0, tag)
		return buf[:min(n, max(st.Count, 0))], st, err
	}
	for i := range 40 { // past the box's threshold
		send([]byte{byte(i)}, 9)
		if _, _, err := recv(8, 9); err != nil {
			t.Fatal(err)
		}
	}

	send([]byte("other"), 2)
	send([]byte("mine"), 1)
	if b, st, err := recv(16, 1); err != nil || string(b) != "mine" || st.Tag != 1 {
		t.Fatalf("Recv tag 1 behind a tag 2 message: %q %+v %v", b, st, err)
	}
	if b, st, err := recv(16, 2); err != nil || string(b) != "other" || st.Tag != 2 {
		t.Fatalf("Recv of the tag 2 message left unexpected: %q %+v %v", b, st, err)
	}

	early := make([]byte, 16)
	h, err := comms[1].NewIrecv(early, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	send([]byte("first"), 3)
	send([]byte("second"), 3)
	if b, _, err := recv(16, 3); err != nil || string(b) != "second" {
		t.Fatalf("Recv after an Irecv posted for the same tag: %q %v; want the second message", b, err)
	}
	if st, err := h.Wait(nil); err != nil || string(early[:st.Count]) != "first" {
		t.Fatalf("the Irecv posted first: %q %v; want the first message", early[:st.Count], err)
	}

	send(pattern(100, 1), 4)
	if b, st, err := recv(10, 4); !errors.Is(err, errs.ErrTruncate) || st.Count != 10 || !bytes.Equal(b, pattern(100, 1)[:10]) {
		t.Fatalf("Recv of 100 bytes into 10: %q %+v %v; want the first 10 bytes and ErrTruncate", b, st, err)
	}

	done := make(chan error, 1)
	go func() { done <- comms[0].Send([]byte("sync"), 1, 5, true) }()
	if b, _, err := recv(16, 5); err != nil || string(b) != "sync" {
		t.Fatalf("Recv of an Ssend's message: %q %v", b, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Ssend: %v", err)
	}

	send([]byte("any"), 6)
	if b, st, err := recv(16, -1); err != nil || string(b) != "any" || st.Tag != 6 {
		t.Fatalf("Recv with AnyTag: %q %+v %v", b, st, err)
	}
	if posted, unexp, parked := comms[1].p.eng.Len(); posted+unexp+parked != 0 {
		t.Fatalf("engine holds %d posted, %d unexpected, %d parked at the end; want none", posted, unexp, parked)
	}
}

// TestDirectRecvStillPasses: a rank whose blocking Recvs all end directly
// still makes its full progress passes: a message it sent itself (the
// self BTL, which only a pass polls) arrives meanwhile.
func TestDirectRecvStillPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	comms := smComms(t)
	for range 40 { // past the box's threshold
		if err := comms[0].Send(nil, 1, 1, false); err != nil {
			t.Fatal(err)
		}
		if _, err := comms[1].Recv(nil, 0, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := comms[1].Send([]byte("self"), 1, 7, false); err != nil {
		t.Fatal(err)
	}
	direct := 0
	for range 4 * passEvery {
		if err := comms[0].Send(nil, 1, 1, false); err != nil {
			t.Fatal(err)
		}
		if _, err := comms[1].Recv(nil, 0, 1); err != nil {
			t.Fatal(err)
		}
		if directTaken(t, comms[1]) {
			direct++
		}
	}
	p := comms[1].p
	p.mu.Lock()
	_, arrived := p.eng.Probe(comms[1].ctx, 1, 7)
	p.mu.Unlock()
	if direct == 0 || !arrived {
		t.Fatalf("%d of %d Recvs direct; the message to self arrived: %v; want some direct and arrived", direct, 4*passEvery, arrived)
	}
}

// TestDirectRecvRndv: a blocking Recv takes a rendezvous from the box too
// and makes its single-copy read itself (the right bytes and Status, the
// sender's Isend completed by the FIN), except one whose read a poll would
// split with the sender (from pml_ob1_rget_split), which goes the usual
// way; so do a message longer than the buffer (ErrTruncate, the buffer's
// bytes) and one that a receive posted before accepts.
func TestDirectRecvRndv(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	const split = 64 << 10
	comms := smCommsTuned(t, func(c *Config) { c.RgetLimit, c.RgetSplit = 4096, split })
	for range 40 { // past the box's threshold
		if err := comms[0].Send(nil, 1, 9, false); err != nil {
			t.Fatal(err)
		}
		if _, err := comms[1].Recv(nil, 0, 9); err != nil {
			t.Fatal(err)
		}
	}
	splits := comms[1].p.peers[0].lim.splitMin > 0
	isend := func(b []byte, tag int) *Handle {
		t.Helper()
		h, err := comms[0].NewIsend(b, 1, tag, false)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	sendDone := func(h *Handle) {
		t.Helper()
		if _, err := h.Wait(nil); err != nil {
			t.Fatalf("Isend: %v", err)
		}
	}
	direct := 0
	for i := range 20 {
		n := []int{5000, 8192, 20000, 60000, split + 100}[i%5]
		want := pattern(n, i)
		h := isend(want, 2)
		buf := make([]byte, n+10)
		st, err := comms[1].Recv(buf, 0, 2)
		if err != nil || st.Source != 0 || st.Tag != 2 || st.Count != n || !bytes.Equal(buf[:n], want) {
			t.Fatalf("message %d (%d B): Recv = %+v, %v; data ok %v", i, n, st, err, bytes.Equal(buf[:n], want))
		}
		took := directTaken(t, comms[1])
		if took && n >= split && splits {
			t.Fatalf("message %d (%d B), whose read a poll may split, was taken directly", i, n)
		}
		if took {
			direct++
		}
		sendDone(h)
	}
	if direct < 8 {
		t.Errorf("%d of the 16 rendezvous below the split received directly; want most", direct)
	}

	h := isend(pattern(10000, 1), 4)
	buf := make([]byte, 5000)
	if st, err := comms[1].Recv(buf, 0, 4); !errors.Is(err, errs.ErrTruncate) || st.Count != 5000 || !bytes.Equal(buf, pattern(10000, 1)[:5000]) {
		t.Fatalf("Recv of 10000 bytes into 5000: %+v %v; want the first 5000 bytes and ErrTruncate", st, err)
	}
	sendDone(h)

	early := make([]byte, 20000)
	hr, err := comms[1].NewIrecv(early, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	h1, h2 := isend(pattern(20000, 1), 3), isend(pattern(20000, 2), 3)
	second := make([]byte, 20000)
	if _, err := comms[1].Recv(second, 0, 3); err != nil || !bytes.Equal(second, pattern(20000, 2)) {
		t.Fatalf("Recv after an Irecv posted for the same tag: %v, second message %v", err, bytes.Equal(second, pattern(20000, 2)))
	}
	if _, err := hr.Wait(nil); err != nil || !bytes.Equal(early, pattern(20000, 1)) {
		t.Fatalf("the Irecv posted first: %v, first message %v", err, bytes.Equal(early, pattern(20000, 1)))
	}
	sendDone(h1)
	sendDone(h2)
	if posted, unexp, parked := comms[1].p.eng.Len(); posted+unexp+parked != 0 {
		t.Fatalf("engine holds %d posted, %d unexpected, %d parked at the end; want none", posted, unexp, parked)
	}
}

// TestDirectRecvRndvReadFails: a rendezvous taken directly whose read
// fails goes by the sender's pipeline (the receive asks for FRAGs and waits
// for them), with every byte arriving.
func TestDirectRecvRndvReadFails(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	net.rget, net.readFail, net.direct = true, true, true
	net.tune = func(c *Config) { c.DirectPolls = 1 << 20 }
	const msgs, n = 8, 5000
	job(t, net, func(t *testing.T, c *Comm) {
		for i := range msgs {
			if c.Rank() == 0 {
				if err := c.Send(pattern(n, i), 1, 7, false); err != nil {
					t.Error(err)
				}
				continue
			}
			buf := make([]byte, n)
			if st, err := c.Recv(buf, 0, 7); err != nil || st.Count != n || !bytes.Equal(buf, pattern(n, i)) {
				t.Errorf("message %d: %+v %v, data ok %v", i, st, err, bytes.Equal(buf, pattern(n, i)))
			}
		}
	})
	if net.taken.Load() == 0 || net.reads.Load() == 0 {
		t.Fatalf("%d messages taken directly, %d reads tried; want some of each", net.taken.Load(), net.reads.Load())
	}
}

// TestSerialCarryBox: a ping-pong's rendezvous of 16 KiB, carried or read
// as the sender's timing chooses (Config.SerialCarryMax), arrives whole
// either way, both ways get timed, and a carried one travels in the
// pair's fast box (a serial record, larger than a one-way stream's may
// be), where a blocking Recv takes it directly.
func TestSerialCarryBox(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	const n = 16 << 10
	comms := smCommsTuned(t, func(c *Config) {
		c.RgetLimit, c.StreamLimit, c.SerialCarryMax = 4096, n, n
		c.RgetExploreMs = 1 << 20 // no second look within the test
		c.DirectPolls = 1 << 20   // a look until the message is in
	})
	const msgs = 40 + 3*serialRun // past the box's threshold; a run of reads, one carried, then the faster
	var carried, direct [msgs]bool
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, buf := comms[r], make([]byte, n)
			for i := range msgs {
				size := n
				if i < 40 {
					size = 0
				}
				if (i+r)%2 == 0 {
					if err := c.Send(pattern(size, i), 1-r, 2, false); err != nil {
						t.Errorf("rank %d, message %d: Send: %v", r, i, err)
						return
					}
					if sr := c.p.spare.Load(); size > 0 && sr != nil {
						carried[i] = sr.carried // the Send's request, kept as the spare
					}
					continue
				}
				st, err := c.Recv(buf, 1-r, 2)
				if err != nil || st.Count != size || !bytes.Equal(buf[:size], pattern(size, i)) {
					t.Errorf("rank %d, message %d: Recv = %+v, %v; data ok %v", r, i, st, err, bytes.Equal(buf[:size], pattern(size, i)))
					return
				}
				direct[i] = directTaken(t, c)
			}
		}()
	}
	wg.Wait()
	for r, c := range comms {
		s := &c.p.serial
		s.mu.Lock()
		e := s.est[rgetClass(n)]
		s.mu.Unlock()
		if e.cost(pathRead) == 0 || e.cost(pathPipe) == 0 {
			t.Errorf("rank %d's estimates of 16 KiB: read %.3f, carried %.3f ns/B; want both ways timed", r, e.cost(pathRead), e.cost(pathPipe))
		}
	}
	nc, nd := 0, 0
	for i := range msgs {
		if carried[i] {
			nc++
			if direct[i] {
				nd++
			}
		}
	}
	// Each rank carries a run of its sends, or the first serialEvery+1
	// of one when carrying was timed much slower (serialCut: -race).
	if least := 2 * (serialEvery + 1); nc < least || nd < nc/2 {
		t.Errorf("%d messages of 16 KiB carried, %d of them taken directly; want at least %d, most of them (in the box)", nc, nd, least)
	}
}
