package pml

import (
	"bytes"
	"testing"
)

// Eager credit comes back: a sender that has sent many times its credit in
// eager messages, all received, still holds most of its credit (at most a
// quarter of it is owed back at any time), so its small messages stay eager
// instead of falling back to rendezvous for good.
func TestEagerCreditReturns(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	net.limit = 64 << 10
	const rounds, perRound, size = 20, 100, 200 // 400 KB in all, 20 KB a round
	job(t, net, func(t *testing.T, c *Comm) {
		limit := c.p.creditLimit
		if limit == 0 {
			t.Fatal("flow control is off with an unexpected limit set")
		}
		for round := 0; round < rounds; round++ {
			if c.Rank() == 0 {
				for i := 0; i < perRound; i++ {
					if err := c.Send(pattern(size, round*perRound+i), 1, 1, false); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := c.Recv(nil, 1, 2); err != nil { // all received
					t.Fatal(err)
				}
				continue
			}
			buf := make([]byte, size)
			for i := 0; i < perRound; i++ {
				if st, err := c.Recv(buf, 0, 1); err != nil || !bytes.Equal(buf[:st.Count], pattern(size, round*perRound+i)) {
					t.Fatalf("round %d message %d: %+v %v", round, i, st, err)
				}
			}
			if err := c.Send(nil, 0, 2, false); err != nil {
				t.Fatal(err)
			}
		}
		if c.Rank() == 0 {
			// The receiver's returns travel before its last reply.
			pe := &c.p.peers[1]
			pe.sendMu.Lock()
			got := limit + pe.creditBack.Load() - pe.creditTaken
			pe.sendMu.Unlock()
			if got < limit-limit/4 {
				t.Errorf("after %d KB of eager messages, all received: credit %d of %d; the receiver does not return credit",
					rounds*perRound*size>>10, got, limit)
			}
		}
	})
}
