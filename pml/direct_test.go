package pml

import (
	"bytes"
	"errors"

	"github.com/gorun-mpi/gorun/internal/errs"
	"testing"
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
