package pml

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml/match"
)

// streamingOn makes c's rank batch its next poll's deliveries, as after a
// poll that delivered a run (recv.go): the tests below exercise the held
// lock from the first poll on.
func streamingOn(c *Comm) {
	c.p.progMu.Lock()
	c.p.streaming = true
	c.p.progMu.Unlock()
}

// batchMsg is one message of the batch-delivery tests: its tag, size and
// whether it is sent synchronously.
type batchMsg struct {
	tag, n int
	sync   bool
}

// batchMix interleaves two tags, eager sizes and rendezvous ones (the fake
// net's eager limit is 256), and synchronous sends (an ACK sent under mu).
func batchMix() []batchMsg {
	var ms []batchMsg
	sizes := []int{0, 8, 100, 256, 300, 8, 2000, 1, 256, 5000}
	for i := range 60 {
		ms = append(ms, batchMsg{tag: 5 + i%2, n: sizes[i%len(sizes)], sync: i%7 == 3})
	}
	return ms
}

// isendAll sends count messages to rank 1 with Isends, message i being
// pattern(n, i) on tag, synchronous or not (spec(i)); closes sent once all
// are posted, then waits for them all.
func isendAll(t *testing.T, c *Comm, count int, spec func(i int) (n, tag int, sync bool), sent chan struct{}) {
	reqs := make([]Request, count)
	for i := range reqs {
		n, tag, sync := spec(i)
		if err := c.Isend(&reqs[i], pattern(n, i), 1, tag, sync); err != nil {
			t.Error(err)
		}
	}
	close(sent)
	for i := range reqs {
		if _, err := reqs[i].Wait(nil); err != nil {
			t.Errorf("send %d: %v", i, err)
		}
	}
}

// TestBatchDeliveryKeepsOrder: everything rank 0 sends is queued before
// rank 1 polls, so one poll delivers it all under one hold of mu (the fake
// net's Progress hands over its whole queue), across eager, rendezvous and
// synchronous messages, posted receives, unexpected ones and AnyTag ones.
// Each receive must get the message its posting order says (per (source,
// tag) send order): a batch that reordered deliveries fails here.
func TestBatchDeliveryKeepsOrder(t *testing.T) {
	ms := batchMix()
	sent := make(chan struct{})
	job(t, newFakeNet(2, 256, 1024), func(t *testing.T, c *Comm) {
		if c.Rank() == 0 {
			isendAll(t, c, len(ms), func(i int) (int, int, bool) { return ms[i].n, ms[i].tag, ms[i].sync }, sent)
			return
		}
		streamingOn(c)
		<-sent
		// Expected: per tag, the messages in send order.
		var byTag [2][]int
		for i, m := range ms {
			byTag[m.tag-5] = append(byTag[m.tag-5], i)
		}
		// The first half of each tag's messages goes to receives posted
		// before the poll, the two tags' posts interleaved.
		half := [2]int{len(byTag[0]) / 2, len(byTag[1]) / 2}
		type posted struct {
			r   *Request
			buf []byte
			msg int
		}
		var early []posted
		next := [2]int{}
		for k := 0; next[0] < half[0] || next[1] < half[1]; k++ {
			tg := k % 2
			if next[tg] >= half[tg] {
				tg = 1 - tg
			}
			i := byTag[tg][next[tg]]
			next[tg]++
			p := posted{r: new(Request), buf: make([]byte, 8000), msg: i}
			if err := c.Irecv(p.r, p.buf, 0, 5+tg); err != nil {
				t.Fatal(err)
			}
			early = append(early, p)
		}
		for _, p := range early {
			st, err := p.r.Wait(nil)
			m := ms[p.msg]
			if err != nil || st.Count != m.n || st.Tag != m.tag || !bytes.Equal(p.buf[:m.n], pattern(m.n, p.msg)) {
				t.Errorf("posted receive of message %d (tag %d, %d bytes): %+v, %v", p.msg, m.tag, m.n, st, err)
			}
		}
		// The rest arrived unexpected: receive them in global send order
		// with AnyTag, which must follow it.
		rest := map[int]bool{}
		for tg := range 2 {
			for _, i := range byTag[tg][half[tg]:] {
				rest[i] = true
			}
		}
		for i, m := range ms {
			if !rest[i] {
				continue
			}
			buf := make([]byte, 8000)
			st, err := c.Recv(buf, 0, match.AnyTag)
			if err != nil || st.Count != m.n || st.Tag != m.tag || !bytes.Equal(buf[:m.n], pattern(m.n, i)) {
				t.Errorf("unexpected message %d (tag %d, %d bytes): got %+v, %v", i, m.tag, m.n, st, err)
			}
		}
	})
}

// TestBatchDeliveryOverSM is the same check through the sm BTL: a window
// of eager messages of box, FIFO-slot and fragment sizes, all sent before
// the receiver polls, half to receives posted first and half unexpected.
func TestBatchDeliveryOverSM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	sizes := []int{8, 1, 200, 600, 2048, 0, 4000, 64}
	for round := range 3 {
		const n = 200
		recvs := make([]Request, n/2)
		bufs := make([][]byte, n)
		for i := range bufs {
			bufs[i] = make([]byte, 4096)
		}
		for i := range n / 2 {
			if err := c[1].Irecv(&recvs[i], bufs[i], 0, 11); err != nil {
				t.Fatal(err)
			}
		}
		// Rank 0 sends from a goroutine of its own: a send the BTL had to
		// queue (its fragments all in flight) moves on when rank 0 polls.
		started, sent := make(chan struct{}), make(chan error, 1)
		go func() {
			sends := make([]Request, n)
			for i := range n {
				if err := c[0].Isend(&sends[i], pattern(sizes[i%len(sizes)], i+round), 1, 11, false); err != nil {
					sent <- err
					return
				}
			}
			close(started)
			for i := range sends {
				if _, err := sends[i].Wait(nil); err != nil {
					sent <- err
					return
				}
			}
			sent <- nil
		}()
		<-started
		check := func(i int, st Status, err error) {
			t.Helper()
			want := pattern(sizes[i%len(sizes)], i+round)
			if err != nil || st.Count != len(want) || !bytes.Equal(bufs[i][:len(want)], want) {
				t.Fatalf("round %d message %d: %+v, %v; want %d bytes of pattern %d", round, i, st, err, len(want), i+round)
			}
		}
		for i := range recvs {
			st, err := recvs[i].Wait(nil)
			check(i, st, err)
		}
		for i := n / 2; i < n; i++ {
			st, err := c[1].Recv(bufs[i], 0, 11)
			check(i, st, err)
		}
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
	}
}

// TestBatchThenOtherCallbacks: a poll that delivered an eager message (and
// so holds mu for the next) then hands over ACKs (onAck) on one rank and
// FRAGs (onFrag) on the other. Each of those takes mu itself, so it must
// end the batch first; otherwise the poll deadlocks on its own lock. With
// place, the FRAGs go through placeFrag and fragLanded (btl.Placer), which
// take mu too.
func TestBatchThenOtherCallbacks(t *testing.T) {
	for _, place := range []bool{false, true} {
		t.Run(fmt.Sprint("place=", place), func(t *testing.T) { batchThenOtherCallbacks(t, place) })
	}
}

func batchThenOtherCallbacks(t *testing.T, place bool) {
	posted, acked, fragsSent := make(chan struct{}), make(chan struct{}), make(chan struct{})
	big := pattern(5000, 3)
	net := newFakeNet(2, 256, 1024)
	net.place = place
	job(t, net, func(t *testing.T, c *Comm) {
		streamingOn(c)
		if c.Rank() == 0 {
			var r, ss, rs, es Request
			buf := make([]byte, 8)
			if err := c.Irecv(&r, buf, 1, 1); err != nil {
				t.Fatal(err)
			}
			if err := c.Isend(&ss, pattern(8, 1), 1, 2, true); err != nil { // Ssend: ACK
				t.Fatal(err)
			}
			if err := c.Isend(&rs, big, 1, 3, false); err != nil { // rendezvous: ACK, then FRAGs
				t.Fatal(err)
			}
			close(posted)
			<-acked // rank 0's queue: the eager message, then both ACKs
			// Ahead of the FRAGs in rank 1's queue: an eager message.
			if err := c.Isend(&es, pattern(8, 4), 1, 4, false); err != nil {
				t.Fatal(err)
			}
			if _, err := rs.Wait(nil); err != nil { // the ACK is in: the FRAGs are queued
				t.Error(err)
			}
			close(fragsSent)
			for i, q := range []*Request{&r, &ss, &rs, &es} {
				if _, err := q.Wait(nil); err != nil {
					t.Errorf("request %d: %v", i, err)
				}
			}
			if !bytes.Equal(buf, pattern(8, 0)) {
				t.Errorf("eager message: %v", buf)
			}
			return
		}
		<-posted
		if err := c.Send(pattern(8, 0), 0, 1, false); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Recv(make([]byte, 8), 0, 2); err != nil { // delivers the RNDV too, unexpected
			t.Fatal(err)
		}
		var r Request
		got := make([]byte, len(big))
		if err := c.Irecv(&r, got, 0, 3); err != nil { // matches the RNDV: its ACK goes out now
			t.Fatal(err)
		}
		close(acked)
		<-fragsSent
		streamingOn(c)                                                   // the polls above delivered one message each
		if _, err := r.Wait(nil); err != nil || !bytes.Equal(got, big) { // one poll: the eager message, then the FRAGs
			t.Errorf("rendezvous: %v", err)
		}
		if _, err := c.Recv(make([]byte, 8), 0, 4); err != nil {
			t.Error(err)
		}
	})
	if place && net.placed.Load() == 0 {
		t.Error("no FRAG went through placeFrag")
	}
}

// TestBatchThenPeerLost: the poll that delivers a lost rank's last message
// (holding mu for the next) then reports the loss, whose handler takes mu:
// it must end the batch first. The message is received; the receive after
// it fails with ErrPeerLost.
func TestBatchThenPeerLost(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	gone := make(chan struct{})
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() == 1 {
			if err := c.Send(pattern(8, 9), 0, 1, false); err != nil {
				t.Error(err)
			}
			net.kill(1) // queued behind the message in rank 0's module
			close(gone)
			return
		}
		streamingOn(c)
		<-gone
		var r1, r2 Request
		buf := make([]byte, 8)
		if err := c.Irecv(&r1, buf, 1, 1); err != nil {
			t.Fatal(err)
		}
		if err := c.Irecv(&r2, make([]byte, 8), 1, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := r1.Wait(nil); err != nil || !bytes.Equal(buf, pattern(8, 9)) {
			t.Errorf("last message of the lost rank: %v, %v", buf, err)
		}
		if _, err := r2.Wait(nil); !errors.Is(err, errs.ErrPeerLost) {
			t.Errorf("receive after the loss: %v; want ErrPeerLost", err)
		}
	})
}

// TestBatchOnlyWhileStreaming: a rank batches its deliveries only after a
// poll that delivered more than one message; a poll with one (a
// ping-pong) turns batching off, and polls that deliver nothing leave it.
func TestBatchOnlyWhileStreaming(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	step, ack := make(chan int), make(chan struct{})
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() == 0 {
			for n := range step {
				for range n {
					if err := c.Send(pattern(8, n), 1, 1, false); err != nil {
						t.Error(err)
					}
				}
				ack <- struct{}{}
			}
			return
		}
		p := c.p
		for _, tc := range []struct {
			n    int
			want bool
		}{{1, false}, {3, true}, {0, true}, {1, false}, {2, true}} {
			step <- tc.n
			<-ack
			p.Progress()
			p.progMu.Lock()
			got, held := p.streaming, p.delivering
			p.progMu.Unlock()
			if got != tc.want || held {
				t.Errorf("after a poll of %d messages: streaming %v (want %v), mu still held %v", tc.n, got, tc.want, held)
			}
			for range tc.n {
				if _, err := c.Recv(make([]byte, 8), 0, 1); err != nil {
					t.Fatal(err)
				}
			}
		}
		close(step)
	})
}
