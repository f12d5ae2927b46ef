package sm

import (
	"testing"

	"github.com/gorun-mpi/gorun/btl"
)

// FuzzForgedSlot writes arbitrary slot contents into a receiver's FIFO, as a
// buggy or hostile process could, and checks that Progress never panics,
// never hands a callback bytes outside one fragment, that forged acks
// never put a fragment on the free list twice, and that the FIFO stays in
// step: a real message sent after the forged slot is delivered intact (a
// slot whose length claims continuation slots that were never written is
// dropped alone, never followed past the head).
func FuzzForgedSlot(f *testing.F) {
	mods := newJob(f, 2, DefaultConfig())
	a, b := mods[0], mods[1]
	r0 := a.peers[0].region
	es, ms := a.cfg.EagerFragSize(), a.cfg.MaxFragSize()
	// Seeds: a valid inline slot, a valid eager and max fragment of rank 0,
	// an ack for a fragment never lent, and offsets just off the edges.
	f.Add(uint32(0), uint32(10), uint64(0), uint8(1), kindData, uint64(0))
	f.Add(uint32(0), uint32(es), uint64(r0.Eager), uint8(2), kindData, uint64(0))
	f.Add(uint32(0), uint32(ms), uint64(r0.Max), uint8(3), kindData, uint64(0))
	f.Add(uint32(0), uint32(ms+1), uint64(r0.End-ms), uint8(3), kindData, uint64(0))
	f.Add(uint32(0), uint32(3), uint64(0), uint8(0), kindAck, uint64(r0.Eager))
	f.Add(uint32(0), uint32(1), uint64(r0.Eager+8), uint8(1), kindData, uint64(0))
	f.Add(uint32(1), uint32(1), uint64(0), uint8(200), uint8(7), uint64(1<<63))
	// Fast-box announcements nobody made: box 0 and 1 in the name of rank 0,
	// a box out of range, one in the name of the receiver itself.
	f.Add(uint32(0), uint32(0), uint64(0), uint8(0), kindBox, uint64(0))
	f.Add(uint32(0), uint32(0), uint64(1), uint8(0), kindBox, uint64(0))
	f.Add(uint32(0), uint32(0), uint64(1<<40), uint8(0), kindBox, uint64(0))
	f.Add(uint32(1), uint32(0), uint64(0), uint8(0), kindBox, uint64(0))
	// Inline lengths that claim continuation slots nobody wrote: one past a
	// slot, the largest inline message, one past that.
	gather := len(b.prog.gather)
	f.Add(uint32(0), uint32(inlineMax+1), uint64(0), uint8(1), kindData, uint64(7))
	f.Add(uint32(0), uint32(inlineMax+contBytes+1), uint64(0), uint8(1), kindData, uint64(7))
	f.Add(uint32(0), uint32(gather), uint64(0), uint8(1), kindData, uint64(7))
	f.Add(uint32(0), uint32(gather+1), uint64(0), uint8(1), kindData, uint64(7))
	bad := ""
	probe, gotProbe := []byte("probe-00"), false
	for tag := btl.Tag(0); tag < btl.NumTags; tag++ {
		b.Register(tag, func(src int, data []byte) {
			if src != 0 || len(data) > int(ms) {
				bad = "callback got a bad source or too much data"
			}
			if string(data) == string(probe) {
				gotProbe = true
			}
		})
	}
	seq := 0
	f.Fuzz(func(t *testing.T, src, length uint32, frag uint64, tag, kind uint8, word uint64) {
		p := &a.peers[1]
		e, h, ok := p.claim(a.mask + 1)
		if !ok {
			b.Progress()
			if e, h, ok = p.claim(a.mask + 1); !ok {
				t.Fatal("receiver FIFO stays full")
			}
		}
		e.frag, e.src, e.length, e.tag, e.kind = frag, src, length, tag, kind
		for i := range e.data {
			e.data[i] = word + uint64(i)*uint64(es)
		}
		a.publish(p, e, h)
		b.Progress()
		a.Progress() // acks of forged fragments come back here and must be refused
		if bad != "" {
			t.Fatal(bad)
		}
		if n := a.eager.inUse() + a.maxFrags.inUse(); n != 0 {
			t.Fatalf("forged slot changed rank 0's fragments in use to %d", n)
		}
		seq++
		probe[6], probe[7], gotProbe = byte('0'+seq%10), byte('0'+seq/10%10), false
		if _, err := a.Send(1, 0, probe[:4], probe[4:], nil); err != nil {
			t.Fatalf("real message after the forged slot: %v", err)
		}
		for i := 0; i < 1000 && !gotProbe; i++ {
			b.Progress()
			a.Progress()
		}
		if !gotProbe {
			t.Fatal("a real message sent after the forged slot was never delivered: the receiver left the FIFO's step")
		}
	})
}
