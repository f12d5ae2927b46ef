package pml

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// Goroutines sharing a Comm over sm, where eager sends are numbered,
// credited and sent under the BTL's own lock (eagerNow with a
// btl.LockedSender): each goroutine's messages arrive whole and in its
// order, whatever mix of sizes (up to the eager limit) and calls (Send,
// Isend, NewIsend, Ssend) the others make at the same time, and every
// message was numbered once.
func TestLockedSendsConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	comms := smComms(t)
	pe := &comms[0].p.peers[1]
	if pe.locked == nil || pe.sendMu != pe.locked.SendLock(1) {
		t.Fatalf("rank 0's peer 1 (sm) sends under its own lock: locked %v, sendMu %p", pe.locked, pe.sendMu)
	}
	if self := &comms[0].p.peers[0]; self.locked != nil || self.sendMu != &self.ownSendMu {
		t.Fatalf("rank 0's own peer (self) is not a LockedSender, yet locked %v, sendMu %p", self.locked, self.sendMu)
	}
	sizes := []int{0, 8, 16, 17, 100, 1000, pe.lim.eager}
	sendConcurrently(t, comms, sizes, 400)
}

// Every protocol at once, from goroutines sharing a Comm over sm: eager
// messages, rendezvous (pipeline, single-copy read, stream) up to 40 KB,
// Ssends, and eager-sized sends that find the credit (an 8 KiB unexpected
// limit) used up and go by rendezvous. Under the race detector this
// checks that the goroutine that answers a message (an ACK handled in
// another goroutine's wait) is ordered after the one that sent it, which
// it sees only through btl/sm's race.go.
func TestSendsConcurrentEveryProtocol(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	comms := smCommsWith(t, 1<<30, 8<<10)
	sendConcurrently(t, comms, []int{0, 8, 100, 3000, 9000, 20000, 40000}, 150)
}

// sendConcurrently runs six goroutines on each rank: each one on rank 0
// sends M messages (sizes in turn) to its peer goroutine on rank 1 on its
// own tag, by Send, Isend, NewIsend and Ssend, and its peer checks that
// they arrive whole and in order; every message must be numbered once.
func sendConcurrently(t *testing.T, comms [2]*Comm, sizes []int, M int) {
	const G = 6
	most := 0
	for _, n := range sizes {
		most = max(most, n)
	}
	var wg sync.WaitGroup
	for g := range G {
		wg.Add(2)
		go func() { // sender g on rank 0
			defer wg.Done()
			c := comms[0]
			for i := range M {
				buf := pattern(sizes[(i+g)%len(sizes)], g*M+i)
				var err error
				switch i % 4 {
				case 0, 1:
					err = c.Send(buf, 1, g, false)
				case 2:
					var r Request
					if err = c.Isend(&r, buf, 1, g, false); err == nil {
						_, err = r.Wait(nil)
					}
				default:
					h, e := c.NewIsend(buf, 1, g, i%8 == 7)
					if err = e; err == nil {
						_, err = h.Wait(nil)
					}
				}
				if err != nil {
					t.Errorf("sender %d message %d: %v", g, i, err)
					return
				}
			}
		}()
		go func() { // receiver g on rank 1
			defer wg.Done()
			c := comms[1]
			buf := make([]byte, most)
			for i := range M {
				want := pattern(sizes[(i+g)%len(sizes)], g*M+i)
				st, err := c.Recv(buf, 0, g)
				if err != nil || st.Count != len(want) || !bytes.Equal(buf[:st.Count], want) {
					t.Errorf("receiver %d message %d: %d bytes, %v; want %d bytes in order", g, i, st.Count, err, len(want))
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := comms[0].sendSeq[1]; got != uint32(G*M) {
		t.Errorf("rank 0 numbered %d messages to rank 1, want %d", got, G*M)
	}
}

// Eager credit taken under the peer's send lock runs out and comes back:
// Isends of eager-sized messages, none received, take all of it and the
// rest go by rendezvous (waiting for the receiver); once every message is
// received, the credit outstanding is within the limit again.
func TestLockedSendCreditShort(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	comms := smCommsWith(t, 1<<30, 8<<10)
	p, pe := comms[0].p, &comms[0].p.peers[1]
	n := pe.lim.eager
	k := int(p.creditLimit)/n + 3
	var hs []*Handle
	for i := range k {
		h, err := comms[0].NewIsend(pattern(n, i), 1, 100, false)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if !p.creditWarned.Load() {
		t.Fatalf("%d eager-sized Isends of %d bytes, none received, with %d bytes of credit: never out of credit", k, n, p.creditLimit)
	}
	recvd := make(chan error, 1)
	go func() { // rank 1 receives while rank 0 waits (a rendezvous needs both)
		buf := make([]byte, n)
		for i := range k {
			if st, err := comms[1].Recv(buf, 0, 100); err != nil || !bytes.Equal(buf[:st.Count], pattern(n, i)) {
				recvd <- fmt.Errorf("message %d: %+v %v", i, st, err)
				return
			}
		}
		recvd <- comms[1].Send(nil, 0, 99, false) // after rank 1's credit returns
	}()
	for _, h := range hs {
		if _, err := h.Wait(nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := comms[0].Recv(nil, 1, 99); err != nil {
		t.Fatal(err)
	}
	if err := <-recvd; err != nil {
		t.Fatal(err)
	}
	pe.sendMu.Lock()
	out := pe.creditTaken - pe.creditBack.Load()
	pe.sendMu.Unlock()
	if out < 0 || out > p.creditLimit {
		t.Errorf("credit outstanding towards rank 1 after every message matched: %d, want 0..%d", out, p.creditLimit)
	}
	if got := comms[0].sendSeq[1]; got != uint32(k) {
		t.Errorf("rank 0 numbered %d messages to rank 1, want %d", got, k)
	}
}
