package pml

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// TestSendHandleSlabs: sendHandle gives every sequence number its own
// Handle, slabLen of them per slab, a new slab for each generation
// (including across the wrap of the sequence numbers), and a Handle of its
// own to a send whose generation was replaced already.
func TestSendHandleSlabs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first uint32
	}{{"from 0", 0}, {"across the wrap", 1<<32 - 3*slabLen/2}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Comm{sendSlabs: make([]sendSlabSlot, 2)}
			seen := map[*Handle]uint32{}
			take := func(seq uint32) *Handle {
				h := c.sendHandle(1, seq)
				if prev, dup := seen[h]; dup {
					t.Fatalf("seq %d got the Handle of seq %d", seq, prev)
				}
				seen[h] = seq
				return h
			}
			var prev *sendSlab
			for i := range uint32(3 * slabLen) {
				seq := tc.first + i
				h := take(seq)
				s := c.sendSlabs[1].Load()
				if s == nil || s.gen != seq/slabLen || h != &s.h[seq%slabLen] {
					t.Fatalf("seq %d: not entry %d of the slab of generation %d", seq, seq%slabLen, seq/slabLen)
				}
				if seq%slabLen == 0 && s == prev {
					t.Fatalf("seq %d: no new slab for generation %d", seq, seq/slabLen)
				}
				if seq%slabLen != 0 && i > 0 && s != prev {
					t.Fatalf("seq %d: a new slab within generation %d", seq, seq/slabLen)
				}
				prev = s
			}
			// A send numbered one generation back (overtaken): its own Handle.
			late := tc.first + 3*slabLen - 1 - slabLen
			cur := c.sendSlabs[1].Load()
			h := take(late)
			if c.sendSlabs[1].Load() != cur {
				t.Fatal("an overtaken send replaced the current slab")
			}
			for i := range cur.h {
				if h == &cur.h[i] {
					t.Fatalf("the overtaken send %d got entry %d of the current slab", late, i)
				}
			}
			if c.sendSlabs[0].Load() != nil {
				t.Error("another destination's slab was touched")
			}
			if h := (&Comm{}).sendHandle(1, 5); h == nil {
				t.Error("a communicator without slabs gave no Handle")
			}
		})
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
	// Two slabs per slabLen pairs; under -race sync.Pool drops some of the
	// Requests a receive may need (see TestHandleRecyclesRequests).
	if a := testing.AllocsPerRun(10*slabLen, cycle); a > 0.5 {
		t.Errorf("%.2f allocations per Irecv+Isend pair; want about %.2f (two slabs per %d pairs)", a, 2.0/slabLen, slabLen)
	}
}
