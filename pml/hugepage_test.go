package pml

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// TestRgetHugepage: a send buffer read again and again by the peer
// (single copy over sm) is offered to the PML's Collapser, which tries to
// collapse its regions (pml_ob1_rget_hugepage); every message arrives
// whole before and after, whatever the kernel did. Without the PML's
// offers no collapse is tried (checked: the offer in startSend removed,
// it fails).
func TestRgetHugepage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smCommsTuned(t, func(cfg *Config) { cfg.RgetLimit, cfg.RgetHugepage = 4096, 2 })
	if !c[0].p.peers[1].lim.rget {
		t.Skip("no single copy (process_vm_readv) here")
	}
	const n, rounds = 3 << 20, 6
	sbuf, rbuf := make([]byte, n), make([]byte, n)
	for i := range rounds {
		copy(sbuf, pattern(n, i))
		var wg sync.WaitGroup
		wg.Add(1)
		var st Status
		var rerr error
		go func() {
			defer wg.Done()
			st, rerr = c[1].Recv(rbuf, 0, 3)
		}()
		if err := c[0].Send(sbuf, 1, 3, false); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if rerr != nil || st.Count != n || !bytes.Equal(rbuf, sbuf) {
			t.Fatalf("round %d: status %+v, err %v, or wrong bytes", i, st, rerr)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		tried, ok, refused := c[0].p.huge.Stats()
		if tried > 0 {
			t.Logf("collapses tried %d, done %d, refused as unavailable %d", tried, ok, refused)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no collapse tried after the buffer was read 6 times (offered from 2)")
		}
		time.Sleep(time.Millisecond)
	}
	if tried, _, _ := c[1].p.huge.Stats(); tried != 0 {
		t.Errorf("the receiving rank tried %d collapses; it offered nothing", tried)
	}
}
