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
			gens := 0
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
				if s != prev {
					gens++
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
			// The generations' slabs were carved from one chunk, in turn.
			if c.slabs == nil || c.slabNext != gens || cur != &c.slabs[gens-1] {
				t.Errorf("the slabs of %d generations are not the first %d of one chunk (next %d)", gens, gens, c.slabNext)
			}
			if h := (&Comm{}).sendHandle(1, 5); h == nil {
				t.Error("a communicator without slabs gave no Handle")
			}
		})
	}
}

// TestSlabChunks: newSendSlab carves sendSlabChunk distinct slabs, of the
// generation asked for, from each allocation, and newHandleLocked hands
// out recvSlabLen distinct Handles from each of its slabs.
func TestSlabChunks(t *testing.T) {
	c := &Comm{}
	seen := map[*sendSlab]bool{}
	var chunk *[sendSlabChunk]sendSlab
	for i := range 2*sendSlabChunk + 1 {
		s := c.newSendSlab(uint32(100 + i))
		if seen[s] || s.gen != uint32(100+i) {
			t.Fatalf("slab %d: seen before %v, generation %d", i, seen[s], s.gen)
		}
		seen[s] = true
		if i%sendSlabChunk == 0 {
			if c.slabs == chunk {
				t.Fatalf("slab %d: no new chunk", i)
			}
			chunk = c.slabs
		}
		if s != &chunk[i%sendSlabChunk] {
			t.Fatalf("slab %d: not entry %d of the current chunk", i, i%sendSlabChunk)
		}
	}
	p := &PML{}
	got := map[*Handle]bool{}
	var slab *[recvSlabLen]Handle
	for i := range recvSlabLen + 1 {
		h := p.newHandleLocked()
		if got[h] {
			t.Fatalf("receive Handle %d handed out twice", i)
		}
		got[h] = true
		if i == 0 || i == recvSlabLen {
			if p.hslab == slab {
				t.Fatalf("Handle %d: no new slab", i)
			}
			slab = p.hslab
		}
		if h != &slab[i%recvSlabLen] {
			t.Fatalf("Handle %d: not entry %d of the current slab", i, i%recvSlabLen)
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
	// One allocation per recvSlabLen receives and one per
	// slabLen*sendSlabChunk sends; under -race sync.Pool drops some of the
	// Requests a receive may need (see TestHandleRecyclesRequests).
	want := 1.0/recvSlabLen + 1.0/(slabLen*sendSlabChunk)
	if a := testing.AllocsPerRun(4*recvSlabLen, cycle); a > 0.5 {
		t.Errorf("%.3f allocations per Irecv+Isend pair; want about %.3f", a, want)
	}
}
