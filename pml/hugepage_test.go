package pml

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRgetHugepage: a send buffer read again and again by the peer
// (single copy over sm) is offered to the PML's Collapser, which tries to
// collapse its regions (pml_ob1_rget_hugepage); every message arrives
// whole before and after, whatever the kernel did. Without the PML's
// offers no collapse is tried (checked: the offer in startSend removed,
// it fails).
func TestRgetHugepage(t *testing.T) {
	c := hugepagePair(t)
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

// TestHugepageRetryIsQuiet: a region the kernel refused as busy (a
// peer's read in flight) is tried again only by a send that starts while
// no other send of the rank is in flight: windows of 4 single-copy sends
// of one buffer, each window waited for, and every try after a region's
// first refusal sees this rank's only send in flight (the one offering),
// inside it. Checked: with the offer's quiet argument always true the
// retries come from the middle of windows, always false there are none.
func TestHugepageRetryIsQuiet(t *testing.T) {
	c := hugepagePair(t)
	var mu sync.Mutex
	refused := map[uintptr]bool{}
	var retries []int64 // the sender's active sends at each retry
	retried := map[uintptr]bool{}
	c[0].p.huge.SetCollapse(func(a uintptr) error {
		mu.Lock()
		defer mu.Unlock()
		if !refused[a] {
			refused[a] = true
			return unix.EAGAIN // busy: the first try of each region
		}
		retries = append(retries, c[0].p.activeSends.Load())
		retried[a] = true
		return nil
	})
	const n, window, windows = 3 << 20, 4, 12
	sbuf := make([]byte, n)
	copy(sbuf, pattern(n, 1))
	rbufs := make([][]byte, window)
	for i := range rbufs {
		rbufs[i] = make([]byte, n)
	}
	for w := range windows {
		var wg sync.WaitGroup
		wg.Add(1)
		var rerr error
		go func() {
			defer wg.Done()
			var hs [window]*Handle
			for i := range hs {
				if hs[i], rerr = c[1].NewIrecv(rbufs[i], 0, 5); rerr != nil {
					return
				}
			}
			for _, h := range hs {
				if _, rerr = h.Wait(nil); rerr != nil {
					return
				}
			}
		}()
		var hs [window]*Handle
		for i := range hs {
			var err error
			if hs[i], err = c[0].NewIsend(sbuf, 1, 5, false); err != nil {
				t.Fatal(err)
			}
		}
		for _, h := range hs {
			if _, err := h.Wait(nil); err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
		if rerr != nil {
			t.Fatalf("window %d: %v", w, rerr)
		}
		for i, b := range rbufs {
			if !bytes.Equal(b, sbuf) {
				t.Fatalf("window %d: receive %d has the wrong bytes", w, i)
			}
		}
	}
	c[0].p.huge.Close() // waits for the worker's tries
	mu.Lock()
	defer mu.Unlock()
	if len(refused) == 0 || len(retried) != len(refused) {
		t.Fatalf("%d regions refused, %d of them tried again: want every one", len(refused), len(retried))
	}
	for i, a := range retries {
		if a != 1 {
			t.Errorf("retry %d made with %d sends in flight; want 1 (the offering send alone)", i, a)
		}
	}
}

// hugepagePair is a pair of ranks over sm whose sends of 4 KiB and more
// are read by the peer (single copy) and whose regions are collapsed
// after 2 offers; it skips where there is no single copy.
func hugepagePair(t *testing.T) [2]*Comm {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smCommsTuned(t, func(cfg *Config) { cfg.RgetLimit, cfg.RgetHugepage = 4096, 2 })
	if !c[0].p.peers[1].lim.rget {
		t.Skip("no single copy (process_vm_readv) here")
	}
	return c
}
