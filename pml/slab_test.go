package pml

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// TestHandleSlab: a handleSlab hands out slabLen distinct zero Handles
// from each of its slabs, in order, and then starts a new slab.
func TestHandleSlab(t *testing.T) {
	var hs handleSlab
	got := map[*Handle]bool{}
	var slab *[slabLen]Handle
	for i := range 2*slabLen + 1 {
		h := hs.take()
		if got[h] || *h != (Handle{}) {
			t.Fatalf("Handle %d: handed out before %v, or not zero", i, got[h])
		}
		got[h] = true
		if i%slabLen == 0 {
			if hs.s == slab {
				t.Fatalf("Handle %d: no new slab", i)
			}
			slab = hs.s
		}
		if h != &slab[i%slabLen] {
			t.Fatalf("Handle %d: not entry %d of the current slab", i, i%slabLen)
		}
	}
}

// TestNewIsendHandleFromPeer: NewIsend's eager send takes its Handle from
// its destination's slab, whichever communicator it goes on, and NewIrecv
// from the PML's.
func TestNewIsendHandleFromPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	dup := dupPair(t, c)
	pe := &c[0].p.peers[1]
	for i, cc := range []*Comm{c[0], dup[0], c[0]} {
		h, err := cc.NewIsend([]byte("x"), 1, 3, false)
		if err != nil {
			t.Fatal(err)
		}
		if h != &pe.hslab.s[pe.hslab.next-1] {
			t.Fatalf("send %d: its Handle is not the peer slab's last", i)
		}
		if _, err := h.Wait(nil); err != nil {
			t.Fatal(err)
		}
	}
	rbuf := make([]byte, 1)
	for i, cc := range []*Comm{c[1], dup[1], c[1]} {
		h, err := cc.NewIrecv(rbuf, 0, 3)
		if err != nil {
			t.Fatal(err)
		}
		p := c[1].p
		if h != &p.hslab.s[p.hslab.next-1] {
			t.Fatalf("receive %d: its Handle is not the PML slab's last", i)
		}
		if _, err := h.Wait(nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNewHandlesConcurrent: goroutines sending to one destination at once
// and posting receives at once each get Handles no other operation has,
// and every message arrives (run under -race).
func TestNewHandlesConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	const senders, each = 4, 300
	var mu sync.Mutex
	seen := map[*Handle]string{}
	record := func(h *Handle, what string) {
		mu.Lock()
		defer mu.Unlock()
		if prev, dup := seen[h]; dup {
			t.Errorf("%s got the Handle of %s", what, prev)
		}
		seen[h] = what
	}
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range each {
				rbuf := make([]byte, 8)
				h, err := c[1].NewIrecv(rbuf, 0, g)
				if err != nil {
					t.Error(err)
					return
				}
				record(h, fmt.Sprintf("receive %d/%d", g, i))
				if st, err := h.Wait(nil); err != nil || st.Count != 8 {
					t.Errorf("receive %d/%d: %+v, %v", g, i, st, err)
					return
				}
				if want := fmt.Appendf(nil, "%02d/%05d", g, i); !bytes.Equal(rbuf, want) {
					t.Errorf("receive %d/%d: %q; want %q (tag order broken)", g, i, rbuf, want)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := range each {
				h, err := c[0].NewIsend(fmt.Appendf(nil, "%02d/%05d", g, i), 1, g, i%50 == 49)
				if err != nil {
					t.Error(err)
					return
				}
				record(h, fmt.Sprintf("send %d/%d", g, i))
				if _, err := h.Wait(nil); err != nil {
					t.Errorf("send %d/%d: %v", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != 2*senders*each {
		t.Errorf("%d distinct Handles for %d operations", len(seen), 2*senders*each)
	}
}

// TestNewHandlesAllocate: an eager Irecv+Isend pair through NewIrecv and
// NewIsend allocates its Handles a slab at a time, not one each.
func TestNewHandlesAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	sbuf, rbuf := []byte("12345678"), make([]byte, 8)
	cycle := func() {
		hr, err := c[1].NewIrecv(rbuf, 0, 7)
		if err != nil {
			t.Fatal(err)
		}
		hs, err := c[0].NewIsend(sbuf, 1, 7, false)
		if err != nil {
			t.Fatal(err)
		}
		waitPair(t, hs, hr, len(sbuf))
	}
	cycle()
	// One allocation per slabLen receives and one per slabLen sends;
	// under -race sync.Pool drops some of the Requests a receive may need
	// (see TestHandleRecyclesRequests).
	if a := testing.AllocsPerRun(4*slabLen, cycle); a > 0.5 {
		t.Errorf("%.3f allocations per Irecv+Isend pair; want about %.3f", a, 2.0/slabLen)
	}
}

// dupPair duplicates both ranks' communicators (Dup is collective: one
// goroutine per rank).
func dupPair(t *testing.T, c [2]*Comm) [2]*Comm {
	t.Helper()
	var dup [2]*Comm
	var errs [2]error
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dup[r], errs[r] = c[r].Dup()
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	return dup
}
