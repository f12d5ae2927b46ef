package sm

import (
	"testing"

	"github.com/gorun-mpi/gorun/btl"
)

// TestSkipSlotsOfLostPeer (issue 16 item 4): rank 1 claims slots of rank
// 0's FIFO and never publishes them (it died between claim and publish).
// While rank 1 is alive, rank 0 waits at those slots; once rank 1 is known
// to be lost, rank 0 skips them and delivers rank 2's messages queued
// behind them, in order.
func TestSkipSlotsOfLostPeer(t *testing.T) {
	for _, k := range []uint64{1, 3} {
		m := newJob(t, 3, DefaultConfig())
		var got []int
		m[0].Register(btl.TagPMLMatch, func(src int, data []byte) { got = append(got, src*1000+len(data)) })
		// Rank 1 claims k slots of rank 0's FIFO: its last act.
		if _, _, ok := m[1].peers[0].claimN(m[1].mask+1, k); !ok {
			t.Fatal("claim failed")
		}
		var d doneRec
		for i := 1; i <= 2; i++ {
			if ok, err := m[2].Send(0, btl.TagPMLMatch, make([]byte, 8), make([]byte, i), &d); !ok || err != nil {
				t.Fatalf("send %d: %v %v", i, ok, err)
			}
		}
		for i := 0; i < 100; i++ {
			m[0].Progress()
		}
		if len(got) != 0 {
			t.Fatalf("k=%d: delivered %v past an unpublished slot of a live peer", k, got)
		}
		m[0].monitor.markLost(&m[0].peers[1])
		pumpUntil(t, m[:1], func() bool { return len(got) == 2 })
		if got[0] != 2009 || got[1] != 2010 {
			t.Fatalf("k=%d: delivered %v; want rank 2's 9- then 10-byte message", k, got)
		}
	}
}

func TestClaimWordRoundTrip(t *testing.T) {
	for _, c := range []struct {
		dst  int
		h, k uint64
	}{{0, 0, 1}, {65535, claimSlotMod - 1, 1<<18 + 1}, {7, 1<<40 + 5, 3}} {
		dst, h, k := claimOf(claimWord(c.dst, c.h, c.k))
		if dst != c.dst || h != c.h%claimSlotMod || k != c.k {
			t.Errorf("claimOf(claimWord(%d, %d, %d)) = %d, %d, %d", c.dst, c.h, c.k, dst, h, k)
		}
	}
}
