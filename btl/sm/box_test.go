package sm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/internal/memcpy"
)

// testBox is a box in ordinary memory with both of its sides, and a module
// that has just enough to poll it (callbacks, limits, a logger).
type testBox struct {
	out  *boxOut
	in   *boxIn
	m    *Module
	log  *testLog
	got  [][]byte
	tags []btl.Tag
}

func newTestBox(size int) *testBox {
	mem := make([]uint64, (boxCtlSize+size)/8) // 8-aligned, zeroed like a fresh segment
	ring := newBoxRing(unsafe.Pointer(&mem[0]), unsafe.Pointer(&mem[boxCtlSize/8]), size)
	tb := &testBox{out: &boxOut{boxRing: ring}, in: &boxIn{boxRing: ring, src: 1, exp: 1}}
	tb.log = &testLog{Logger: hclog.NewNullLogger()}
	tb.m = &Module{log: tb.log, boxMsgMax: size / 4, boxSerMax: size / 4}
	tb.m.peers = make([]peer, 2)
	tb.m.peers[1].in = tb.in
	for tag := btl.Tag(0); tag < btl.NumTags; tag++ {
		tb.m.recv[tag] = func(src int, data []byte) {
			tb.got = append(tb.got, append([]byte(nil), data...))
			tb.tags = append(tb.tags, tag)
		}
	}
	return tb
}

// msg is message i of n bytes: its index, then a pattern.
func boxMsg(i, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*7 + j)
	}
	if n >= 4 {
		binary.LittleEndian.PutUint32(b, uint32(i))
	}
	return b
}

// TestBoxRing drives one box through many laps with several message mixes
// and receivers that poll at different rates: every message arrives once,
// intact and in order, and a put refused for lack of room succeeds once the
// receiver has polled.
func TestBoxRing(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		lens    []int
		pollMax int  // messages per pollBox call
		lineEnd bool // polls stop at a line's end (ping-pong style)
		hdrOnly bool // the whole message is the header (ACK, FIN, 0-byte sends)
	}{
		{"empty messages", 1024, []int{0}, 32, false, false},
		{"one record per line", 1024, []int{56}, 32, false, false},
		{"odd lengths", 1024, []int{1, 7, 9, 33, 250, 3}, 32, false, false},
		{"largest message, slow receiver", 1024, []int{256, 256, 255}, 1, false, false},
		{"mixed, 4 KiB box", 4096, []int{0, 1024, 17, 500, 1000, 8}, 3, false, false},
		{"records that end exactly at the lap", 512, []int{120}, 2, false, false},
		{"empty messages, polls stop at line ends", 1024, []int{0}, 32, true, false},
		{"odd lengths, polls stop at line ends", 1024, []int{1, 7, 9, 33, 250, 3}, 32, true, false},
		{"records that end exactly at the lap, polls stop at line ends", 512, []int{120}, 2, true, false},
		{"header-only messages", 512, []int{16}, 32, true, true},
		{"header-only, mixed lengths", 1024, []int{16, 40, 0, 56, 8}, 5, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTestBox(tt.size)
			const count = 2000
			seq := uint32(0)
			refused := 0
			for i := 0; i < count; i++ {
				n := tt.lens[i%len(tt.lens)]
				m := boxMsg(i, n)
				hdr, pay := m[:min(n, 3)], m[min(n, 3):]
				if tt.hdrOnly {
					hdr, pay = m, nil
				}
				seq = nextSeq(seq)
				for !tb.out.put(btl.Tag(i%int(btl.NumTags)), seq, hdr, pay, i%2 == 0) {
					refused++
					if refused > 10*count {
						t.Fatalf("message %d never fits", i)
					}
					tb.m.pollBox(tb.in, tt.pollMax, tt.lineEnd)
				}
			}
			for tb.m.pollBox(tb.in, tt.pollMax, tt.lineEnd) > 0 {
			}
			if len(tb.got) != count {
				t.Fatalf("%d messages delivered, want %d", len(tb.got), count)
			}
			for i, g := range tb.got {
				n := tt.lens[i%len(tt.lens)]
				if string(g) != string(boxMsg(i, n)) || tb.tags[i] != btl.Tag(i%int(btl.NumTags)) {
					t.Fatalf("message %d: got %d bytes tag %d, want %d bytes tag %d", i, len(g), tb.tags[i], n, i%int(btl.NumTags))
				}
			}
			if tb.log.errors.Load() != 0 {
				t.Fatalf("%d errors logged", tb.log.errors.Load())
			}
			if laps := tb.out.w / tb.out.size; laps < 3 {
				t.Fatalf("only %d laps: the test does not wrap", laps)
			}
			if refused == 0 {
				t.Fatal("the box never filled up")
			}
			// An idle box has published its read position: the sender's
			// next put finds room without polling.
			if tb.in.released != tb.in.r || tb.in.ctl.rd.Load() != tb.out.w {
				t.Fatalf("read position %d released %d published %d, written %d", tb.in.r, tb.in.released, tb.in.ctl.rd.Load(), tb.out.w)
			}
		})
	}
}

// TestBoxLineEnd: a ping-pong style poll delivers up to the first record
// whose successor is on another line, leaves that position alone (neither
// looks for a record there nor publishes the read position), and the next
// poll goes on from it; pollBoxes polls a box that way only when its last
// poll found nothing.
func TestBoxLineEnd(t *testing.T) {
	tb := newTestBox(1024)
	put := func(seq uint32) {
		if !tb.out.put(0, seq, nil, nil, false) { // 8 bytes: a 32-byte record
			t.Fatalf("put %d refused", seq)
		}
	}
	put(1) // at 0, successor at 32: the same line
	if n := tb.m.pollBox(tb.in, 32, true); n != 1 || tb.in.ctl.rd.Load() != 32 {
		t.Fatalf("first poll: %d delivered, read position %d published; want 1, 32", n, tb.in.ctl.rd.Load())
	}
	put(2) // at 32, successor at 64: the next line
	put(3) // at 64
	if n := tb.m.pollBox(tb.in, 32, true); n != 1 || tb.in.ctl.rd.Load() != 32 || tb.in.r != 64 {
		t.Fatalf("second poll: %d delivered, read position %d (published %d); want 1, 64 (32)", n, tb.in.r, tb.in.ctl.rd.Load())
	}
	if n := tb.m.pollBox(tb.in, 32, true); n != 1 || tb.in.ctl.rd.Load() != 96 {
		t.Fatalf("third poll: %d delivered, read position %d published; want 1, 96", n, tb.in.ctl.rd.Load())
	}
	if len(tb.got) != 3 {
		t.Fatalf("%d messages delivered, want 3", len(tb.got))
	}

	// pollBoxes: a box that delivered is drained as a burst next time.
	tb.m.prog.boxes = []*boxIn{tb.in}
	for seq := uint32(4); seq <= 8; seq++ { // at 96 (successor on the next line) to 224
		put(seq)
	}
	if n := tb.m.pollBoxes(); n != 1 || !tb.in.hot {
		t.Fatalf("pollBoxes of a quiet box: %d delivered (hot %v), want 1 (true)", n, tb.in.hot)
	}
	if n := tb.m.pollBoxes(); n != 4 || !tb.in.hot {
		t.Fatalf("pollBoxes of a hot box: %d delivered (hot %v), want 4 (true)", n, tb.in.hot)
	}
	if n := tb.m.pollBoxes(); n != 0 || tb.in.hot || tb.in.ctl.rd.Load() != tb.out.w {
		t.Fatalf("pollBoxes of an empty box: %d delivered (hot %v), published %d; want 0 (false), %d", n, tb.in.hot, tb.in.ctl.rd.Load(), tb.out.w)
	}
}

// TestBoxCapacity: the sender keeps room for the sentinel word, and reads
// the receiver's position only when its cached one says full.
func TestBoxCapacity(t *testing.T) {
	tests := []struct {
		size, n, fit int
	}{
		{1024, 56, 15},  // 64-byte records: 15 × 64 + 8 ≤ 1024, 16 × 64 + 8 > 1024
		{1024, 0, 31},   // 32-byte records
		{1024, 256, 3},  // 288-byte records
		{4096, 1024, 3}, // 1056-byte records
	}
	for _, tt := range tests {
		tb := newTestBox(tt.size)
		k := 0
		for tb.out.put(0, nextSeq(uint32(k)), nil, make([]byte, tt.n), false) {
			k++
		}
		if k != tt.fit {
			t.Errorf("box of %d, %d-byte messages: %d fit, want %d", tt.size, tt.n, k, tt.fit)
		}
		tb.in.exp = 1
		if got := tb.m.pollBox(tb.in, 1000, false); got != k {
			t.Errorf("box of %d: polled %d, want %d", tt.size, got, k)
		}
		if !tb.out.put(0, nextSeq(uint32(k)), nil, make([]byte, tt.n), false) {
			t.Errorf("box of %d: no room after the receiver emptied it", tt.size)
		}
	}
}

// TestBoxSeqGate: a box record whose sequence number is not the next one
// waits (its predecessor is in the FIFO); catchUp, called for the FIFO
// message, delivers the box's earlier records first.
func TestBoxSeqGate(t *testing.T) {
	tb := newTestBox(1024)
	// Sequence 1 and 2 go in the box, 3 "in the FIFO", 4 in the box.
	tb.out.put(1, 1, []byte("one"), nil, false)
	tb.out.put(1, 2, []byte("two"), nil, false)
	tb.out.put(1, 4, []byte("four"), nil, false)
	if n := tb.m.pollBox(tb.in, 32, false); n != 2 {
		t.Fatalf("poll delivered %d, want 2 (stop before 4)", n)
	}
	if n := tb.m.pollBox(tb.in, 32, false); n != 0 {
		t.Fatalf("poll delivered %d while 3 is missing", n)
	}
	tb.m.catchUp(1, 3)
	tb.got = append(tb.got, []byte("three")) // what deliver does next
	if n := tb.m.pollBox(tb.in, 32, false); n != 1 {
		t.Fatalf("poll after 3 delivered %d, want 1", n)
	}
	want := "[one two three four]"
	if got := fmt.Sprintf("%s", tb.got); got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
	// A FIFO message whose predecessors are in the box and not polled yet.
	tb.got = nil
	tb.out.put(1, 5, []byte("five"), nil, false)
	tb.out.put(1, 6, []byte("six"), nil, false)
	tb.m.catchUp(1, 7)
	if got := fmt.Sprintf("%s", tb.got); got != "[five six]" || tb.in.exp != 8 {
		t.Fatalf("catchUp delivered %s, next %d; want [five six], 8", got, tb.in.exp)
	}
	if tb.log.errors.Load() != 0 {
		t.Fatalf("%d errors logged", tb.log.errors.Load())
	}
	// Out of step (a forged or lost sequence number): logged, FIFO order kept.
	tb.m.catchUp(1, 100)
	if tb.log.errors.Load() != 1 || tb.in.exp != 101 {
		t.Fatalf("out of step: %d errors, next %d; want 1, 101", tb.log.errors.Load(), tb.in.exp)
	}
}

func TestNextSeqSkipsZero(t *testing.T) {
	for _, tt := range []struct{ in, want uint32 }{{0, 1}, {1, 2}, {1<<32 - 2, 1<<32 - 1}, {1<<32 - 1, 1}} {
		if got := nextSeq(tt.in); got != tt.want {
			t.Errorf("nextSeq(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestParseBoxHeader: the words an honest sender writes parse back; others
// are refused.
func TestParseBoxHeader(t *testing.T) {
	const size, max = 1024, 256
	tests := []struct {
		name string
		w    uint64
		off  uint64
		ok   bool
		want boxRecord
	}{
		{"data", boxHeader(boxKindData, 7, 100, 3), 0, true, boxRecord{boxID: boxID{kind: boxKindData, tag: 3, seq: 7}, n: 100, size: 128}},
		{"empty data", boxHeader(boxKindData, 1, 0, 0), 992, true, boxRecord{boxID: boxID{kind: boxKindData, seq: 1}, size: 32}},
		{"largest", boxHeader(boxKindData, 1, max, 0), 0, true, boxRecord{boxID: boxID{kind: boxKindData, seq: 1}, n: max, size: 288}},
		{"too long", boxHeader(boxKindData, 1, max+1, 0), 0, false, boxRecord{}},
		{"past the end", boxHeader(boxKindData, 1, 32, 0), 992, false, boxRecord{}},
		{"bad tag", boxHeader(boxKindData, 1, 1, btl.NumTags), 0, false, boxRecord{}},
		{"line data", boxHeader(boxKindDataLine, 7, 100, 3), 0, true, boxRecord{boxID: boxID{kind: boxKindDataLine, tag: 3, seq: 7}, n: 100, size: 128}},
		{"empty line data", boxHeader(boxKindDataLine, 1, 0, 0), 960, true, boxRecord{boxID: boxID{kind: boxKindDataLine, seq: 1}, size: 64}},
		{"line data in a line's second half", boxHeader(boxKindDataLine, 1, 0, 0), 992, true, boxRecord{boxID: boxID{kind: boxKindDataLine, seq: 1}, size: 32}},
		{"line data past the end", boxHeader(boxKindDataLine, 1, 32, 0), 992, false, boxRecord{}},
		{"largest line", boxHeader(boxKindDataLine, 1, max, 0), 0, true, boxRecord{boxID: boxID{kind: boxKindDataLine, seq: 1}, n: max, size: 320}},
		{"line too long", boxHeader(boxKindDataLine, 1, max+1, 0), 0, false, boxRecord{}},
		{"wrap", boxHeader(boxKindWrap, 0, 0, 0), 992, true, boxRecord{boxID: boxID{kind: boxKindWrap}, size: 32}},
		{"wrap at 0", boxHeader(boxKindWrap, 0, 0, 0), 0, false, boxRecord{}},
		{"wrap with data", boxHeader(boxKindWrap, 1, 0, 0), 8, false, boxRecord{}},
		{"unknown kind", boxHeader(9, 1, 1, 1), 0, false, boxRecord{}},
	}
	for _, tt := range tests {
		got, ok := parseBoxHeader(tt.w, tt.off, size, max)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("%s: parse = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzBoxRecord writes an arbitrary header word (and the word after it) at
// the receiver's read position, as a buggy or hostile sender could: the
// poll never panics, never hands out bytes outside the ring or more than
// the largest box message, and a box found corrupt is dropped, never
// followed.
func FuzzBoxRecord(f *testing.F) {
	f.Add(boxHeader(boxKindData, 1, 10, 1), uint64(0), uint16(0))
	f.Add(boxHeader(boxKindData, 1, 256, 1), uint64(0), uint16(992))
	f.Add(boxHeader(boxKindData, 1, 4000, 1), uint64(0), uint16(8))
	f.Add(boxHeader(boxKindWrap, 0, 0, 0), boxHeader(boxKindData, 1, 1, 1), uint16(512))
	f.Add(uint64(1<<63|1<<62), uint64(1), uint16(1016))
	f.Add(boxHeader(boxKindData, 2, 0, 0), uint64(0), uint16(40))
	f.Fuzz(func(t *testing.T, w, next uint64, at uint16) {
		const size = 1024
		tb := newTestBox(size)
		off := uint64(at) % size &^ (boxAlign - 1)
		tb.in.r, tb.in.released = off, off
		tb.in.word(off).Store(w)
		if off+8 < size {
			tb.in.word(off + 8).Store(next)
		}
		for i := 0; i < 4 && !tb.in.dead; i++ {
			tb.m.pollBox(tb.in, 32, false)
		}
		for _, g := range tb.got {
			if len(g) > tb.m.boxMsgMax {
				t.Fatalf("delivered %d bytes, more than %d", len(g), tb.m.boxMsgMax)
			}
		}
		if tb.in.r-off > 2*size {
			t.Fatalf("read position ran %d bytes ahead", tb.in.r-off)
		}
	})
}

// boxStressConfig: a small box (messages up to 256 B) that fills up often,
// a small FIFO and few fragments, so that box, FIFO (inline, multi-slot,
// fragment) and pending queue interleave.
func boxStressConfig() Config {
	c := DefaultConfig()
	c.FboxSize, c.FboxThreshold = 1024, 1
	c.FIFOSize, c.LazyFree = 16, 4
	c.InlineLimit = c.maxInlineLimit() // the most this FIFO allows
	c.FreeListNum, c.FreeListMax, c.FreeListInc, c.MaxFrags = 2, 4, 1, 4
	return c
}

// TestBoxFIFOOrderStress: several goroutines each send a stream whose
// message sizes alternate between the box, the FIFO's inline slots and
// fragments, while the receiver progresses at an irregular pace: every
// stream arrives complete and in order (MPI non-overtaking across the box
// and the FIFO). Run it with -race.
func TestBoxFIFOOrderStress(t *testing.T) {
	for _, round := range []int{1, 2} {
		t.Run(fmt.Sprintf("round=%d", round), func(t *testing.T) {
			mods := newJob(t, 2, boxStressConfig())
			a, b := mods[0], mods[1]
			const streams, count = 3, 1500
			lens := []int{0, 8, 100, 240, 90, 300, 2000, 40, 5000, 1}
			next := make([]int, streams)
			var bad string
			b.Register(btl.TagPMLMatch, func(src int, data []byte) {
				if len(data) < 8 {
					bad = fmt.Sprintf("message of %d bytes", len(data))
					return
				}
				s, i := int(binary.LittleEndian.Uint32(data)), int(binary.LittleEndian.Uint32(data[4:]))
				if s >= streams || i != next[s] || len(data) != 8+lens[i%len(lens)] {
					if bad == "" {
						bad = fmt.Sprintf("stream %d: message %d (%d bytes), want message %d", s, i, len(data), next[min(s, streams-1)])
					}
					return
				}
				next[s]++
			})
			var wg sync.WaitGroup
			errc := make(chan error, streams)
			for s := 0; s < streams; s++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					hdr := make([]byte, 8)
					for i := 0; i < count; i++ {
						binary.LittleEndian.PutUint32(hdr, uint32(s))
						binary.LittleEndian.PutUint32(hdr[4:], uint32(i))
						if _, err := a.Send(1, btl.TagPMLMatch, hdr, boxMsg(i, lens[i%len(lens)]), nil); err != nil {
							errc <- err
							return
						}
						if i%97 == 0 {
							time.Sleep(10 * time.Microsecond) // let the receiver catch up now and then
						}
					}
				}()
			}
			done := func() bool {
				for _, n := range next {
					if n != count {
						return bad != ""
					}
				}
				return true
			}
			stop := make(chan struct{})
			go func() { wg.Wait(); close(stop) }()
			deadline := time.Now().Add(60 * time.Second)
			for i := 0; !done(); i++ {
				a.Progress() // acks and a's pending queue
				if i%5 != 0 {
					b.Progress()
				}
				if time.Now().After(deadline) {
					t.Fatalf("stalled: next %v", next)
				}
			}
			<-stop
			close(errc)
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if bad != "" {
				t.Fatal(bad)
			}
			p := &a.peers[1]
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.out == nil || b.peers[0].in == nil || p.seq == 0 {
				t.Fatal("the pair never got a fast box")
			}
			if p.out.w < 4*p.out.size {
				t.Fatalf("the box carried only %d bytes", p.out.w)
			}
		})
	}
}

// TestBoxWakesSleeper: a receiver asleep with no timeout is woken by a
// message that goes into its fast box (no FIFO claim involved).
func TestBoxWakesSleeper(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FboxThreshold = 1
	mods := newJob(t, 2, cfg)
	a, b := mods[0], mods[1]
	got := 0
	b.Register(btl.TagPMLMatch, func(int, []byte) { got++ })
	for i := 0; i < 50; i++ {
		done := make(chan struct{})
		go func() {
			for got != i+1 {
				b.Sleep(0)
				b.Progress()
			}
			close(done)
		}()
		time.Sleep(time.Millisecond) // usually asleep by now
		a.Send(1, btl.TagPMLMatch, []byte("ping"), nil, nil)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("message %d: Sleep(0) not woken by a box message", i)
		}
	}
	if a.peers[1].out == nil || a.peers[1].out.w == 0 {
		t.Fatal("the messages did not go through the box")
	}
}

// TestBoxesPerRegion: at most min(btl_sm_fbox_max, ranks-1) senders get a
// box in one receiver's region; the others keep using the FIFO, and all
// messages arrive.
func TestBoxesPerRegion(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FboxThreshold, cfg.FboxMax = 2, 2
	mods := newJob(t, 4, cfg)
	got := make([]int, 4)
	mods[0].Register(btl.TagPMLMatch, func(src int, data []byte) {
		if int(data[0]) != got[src] {
			t.Errorf("from %d: message %d, want %d", src, data[0], got[src])
		}
		got[src]++
	})
	for i := 0; i < 20; i++ {
		for r := 1; r < 4; r++ {
			mods[r].Send(0, btl.TagPMLMatch, []byte{byte(i)}, nil, nil)
		}
		pumpUntil(t, mods, func() bool { return got[1] == i+1 && got[2] == i+1 && got[3] == i+1 })
	}
	boxes := 0
	for r := 1; r < 4; r++ {
		p := &mods[r].peers[0]
		if p.out != nil {
			boxes++
		} else if !p.noBox {
			t.Errorf("rank %d has no box and was not told none is left", r)
		}
	}
	if boxes != 2 || len(mods[0].prog.boxes) != 2 {
		t.Fatalf("%d senders with a box, %d boxes polled; want 2, 2", boxes, len(mods[0].prog.boxes))
	}
	if mods[1].peers[2].out != nil {
		t.Fatal("a pair that never talked has a box")
	}
}

// TestBoxDisabled: btl_sm_fbox_max=0 lays out no box and sends as before.
func TestBoxDisabled(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FboxMax, cfg.FboxThreshold = 0, 1
	mods := newJob(t, 2, cfg)
	got := 0
	mods[1].Register(btl.TagPMLMatch, func(int, []byte) { got++ })
	for i := 0; i < 40; i++ {
		mods[0].Send(1, btl.TagPMLMatch, []byte("x"), nil, nil)
	}
	pumpUntil(t, mods, func() bool { return got == 40 })
	if p := &mods[0].peers[1]; p.out != nil || !p.noBox {
		t.Fatal("a box with btl_sm_fbox_max=0")
	}
	if r := mods[0].peers[1].region; r.Eager != r.Box {
		t.Fatalf("box area of %d bytes with btl_sm_fbox_max=0", r.Eager-r.Box)
	}
}

// TestForgedBoxAnnouncement: an announcement for a box its sender never
// took (the box's owner word does not name it) is refused, and the real
// one that follows works.
func TestForgedBoxAnnouncement(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FboxThreshold = 1
	mods := newJob(t, 2, cfg)
	a, b := mods[0], mods[1]
	p := &a.peers[1]
	e, h, ok := p.claim(a.mask + 1)
	if !ok {
		t.Fatal("FIFO full")
	}
	e.setHeader(0, kindBox, 0, 0, 0, 0)
	a.publish(p, e, h)
	b.Progress()
	if b.peers[0].in != nil || len(b.prog.boxes) != 0 {
		t.Fatal("a forged announcement gave rank 0 a box")
	}
	got := 0
	b.Register(btl.TagPMLMatch, func(src int, data []byte) {
		if int(data[0]) != got {
			t.Errorf("message %d, want %d", data[0], got)
		}
		got++
	})
	for i := 0; i < 10; i++ {
		a.Send(1, btl.TagPMLMatch, []byte{byte(i)}, nil, nil)
	}
	pumpUntil(t, mods, func() bool { return got == 10 })
	if b.peers[0].in == nil || p.out == nil || p.out.w == 0 {
		t.Fatal("the real announcement did not give the pair a box")
	}
}

// TestBoxPeerLost: a peer found lost while it has a box to us and we have
// one to it: the loss is reported once, what it published before is still
// delivered in order, and sends to it fail with ErrPeerLost (the box path
// included).
func TestBoxPeerLost(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FboxThreshold = 1
	mods := newJob(t, 2, cfg)
	a, b := mods[0], mods[1]
	got := 0
	b.Register(btl.TagPMLMatch, func(src int, data []byte) {
		if int(data[0]) != got {
			t.Errorf("message %d, want %d", data[0], got)
		}
		got++
	})
	for i := 0; i < 5; i++ {
		a.Send(1, btl.TagPMLMatch, []byte{byte(i)}, nil, nil)
		b.Send(0, btl.TagPMLMatch, []byte{0}, nil, nil)
	}
	pumpUntil(t, mods, func() bool { return got == 5 })
	for i := 5; i < 8; i++ {
		a.Send(1, btl.TagPMLMatch, []byte{byte(i)}, nil, nil)
	}
	var lost []int
	b.OnPeerLost(func(p int) { lost = append(lost, p) })
	b.monitor.markLost(&b.peers[0])
	for i := 0; i < 10; i++ {
		b.Progress()
	}
	if len(lost) != 1 || lost[0] != 0 || got != 8 {
		t.Fatalf("OnPeerLost calls %v, %d messages; want [0], 8", lost, got)
	}
	if b.peers[0].out == nil {
		t.Fatal("rank 1 had no box to rank 0")
	}
	if _, err := b.Send(0, btl.TagPMLMatch, []byte{1}, nil, nil); !errors.Is(err, errs.ErrPeerLost) {
		t.Fatalf("Send to the lost peer: %v, want ErrPeerLost", err)
	}
}

// TestBoxDrainedBeforeLossReport: a peer that put messages in its box and
// then went (a rank leaving Finalize after its last barrier message) has
// every one of them delivered before its loss is reported, even when the
// receiver has more boxes than one Progress call polls.
func TestBoxDrainedBeforeLossReport(t *testing.T) {
	const n = 2 + boxPollBoxes // more senders with boxes than a Progress call polls
	for gone := 1; gone < n; gone++ {
		cfg := DefaultConfig()
		cfg.FboxThreshold = 1
		mods := newJob(t, n, cfg)
		r := mods[0]
		got := make([]int, n)
		r.Register(btl.TagPMLMatch, func(src int, data []byte) { got[src]++ })
		for s := 1; s < n; s++ { // every sender takes a box to rank 0
			mods[s].Send(0, btl.TagPMLMatch, []byte{0}, nil, nil)
		}
		pumpUntil(t, mods, func() bool {
			for s := 1; s < n; s++ {
				if got[s] != 1 || r.peers[s].in == nil || mods[s].peers[0].out == nil {
					return false
				}
			}
			return true
		})
		for i := 0; i < 3; i++ {
			if ok, err := mods[gone].Send(0, btl.TagPMLMatch, []byte{1}, nil, nil); !ok || err != nil {
				t.Fatalf("send: %v %v", ok, err)
			}
		}
		var atLoss []int
		r.OnPeerLost(func(p int) { atLoss = append(atLoss, p, got[p]) })
		r.monitor.markLost(&r.peers[gone])
		r.Progress()
		if len(atLoss) != 2 || atLoss[0] != gone || atLoss[1] != 4 {
			t.Fatalf("rank %d lost: OnPeerLost saw (rank, its messages delivered) %v; want [%d 4]", gone, atLoss, gone)
		}
	}
}

// TestPutMatch: records written by putMatch (TrySend's header of two
// words, then 0..TinyMax bytes padded to words) reach the receiver intact,
// in order, lap after lap, whether the receiver polls in bursts or stops at
// line ends, and a put refused for lack of room fits once it has polled.
func TestPutMatch(t *testing.T) {
	for _, lineEnd := range []bool{false, true} {
		t.Run(fmt.Sprint("lineEnd=", lineEnd), func(t *testing.T) {
			tb := newTestBox(1024)
			const count = 3000
			seq := uint32(0)
			refused := 0
			for i := 0; i < count; i++ {
				m := boxMsg(i, 16+i%(memcpy.TinyMax+1))
				seq = nextSeq(seq)
				for !tb.out.putMatch(btl.Tag(i%int(btl.NumTags)), seq, btl.Header16Of(m), m[16:], i%3 == 0) {
					if refused++; refused > 10*count {
						t.Fatalf("message %d never fits", i)
					}
					tb.m.pollBox(tb.in, 3, lineEnd)
				}
			}
			for tb.m.pollBox(tb.in, 32, lineEnd) > 0 {
			}
			if len(tb.got) != count {
				t.Fatalf("%d messages delivered, want %d", len(tb.got), count)
			}
			for i, g := range tb.got {
				if want := boxMsg(i, 16+i%(memcpy.TinyMax+1)); !bytes.Equal(g, want) || tb.tags[i] != btl.Tag(i%int(btl.NumTags)) {
					t.Fatalf("message %d: got % x tag %d, want % x tag %d", i, g, tb.tags[i], want, i%int(btl.NumTags))
				}
			}
			if tb.log.errors.Load() != 0 {
				t.Fatalf("%d errors logged", tb.log.errors.Load())
			}
			if laps := tb.out.w / tb.out.size; laps < 3 || refused == 0 {
				t.Fatalf("%d laps, %d refusals: the test neither wraps nor fills the box", laps, refused)
			}
		})
	}
}

// TestPutJoined: hdr then payload land in d whole, on every path: the
// MATCH header alone, with 1..TinyMax bytes (word stores), both parts up
// to joinMax bytes (on the stack), and the direct copy.
func TestPutJoined(t *testing.T) {
	cases := []struct{ h, p int }{
		{0, 0}, {0, 8}, {1, 1}, {8, 8}, {16, joinMax - 16}, {16, joinMax - 15}, {8, 200}, {24, 16},
	}
	for p := 0; p <= memcpy.TinyMax+1; p++ {
		cases = append(cases, struct{ h, p int }{16, p})
	}
	for _, tt := range cases {
		src := boxMsg(tt.h+tt.p, tt.h+tt.p)
		d := make([]byte, tt.h+tt.p+8)
		for i := range d {
			d[i] = 0xee
		}
		putJoined(d[:tt.h+tt.p], src[:tt.h], src[tt.h:])
		if !bytes.Equal(d[:tt.h+tt.p], src) {
			t.Errorf("hdr %d + payload %d: got % x, want % x", tt.h, tt.p, d[:tt.h+tt.p], src)
		}
		for i := tt.h + tt.p; i < len(d); i++ {
			if d[i] != 0xee {
				t.Fatalf("hdr %d + payload %d: byte %d past the message written", tt.h, tt.p, i)
			}
		}
	}
}

// FuzzDataRecord: pollBox's inline check of a data record (dataRecord)
// accepts exactly the data words parseBoxHeader accepts, with the same
// record size.
func FuzzDataRecord(f *testing.F) {
	f.Add(boxHeader(boxKindData, 7, 100, 3), uint16(0))
	f.Add(boxHeader(boxKindData, 1, 257, 3), uint16(0))
	f.Add(boxHeader(boxKindData, 1, 32, 0), uint16(992))
	f.Add(boxHeader(boxKindWrap, 0, 0, 0), uint16(992))
	f.Add(boxHeader(boxKindData, 1, 1, btl.NumTags), uint16(0))
	f.Fuzz(func(t *testing.T, w uint64, at uint16) {
		const size, max = 1024, 256
		if w == 0 {
			return // an empty position: never parsed
		}
		off := uint64(at) % size &^ 7
		rs, ok := dataRecord(w, off, size, max)
		rec, pok := parseBoxHeader(w, off, size, max)
		want := pok && rec.kind == boxKindData
		if ok != want || ok && rs != rec.size {
			t.Fatalf("word %#x at %d: dataRecord = %d, %v; parseBoxHeader = %+v, %v", w, off, rs, ok, rec, pok)
		}
	})
}

// boxJob builds a job of n ranks whose pairs get a box at their first
// message; rank 1 keeps a copy of every message of tag it receives, in
// order, in *got.
func boxJob(t *testing.T, n int, tag btl.Tag) ([]*Module, *[][]byte) {
	cfg := DefaultConfig()
	cfg.FboxThreshold = 1
	mods := newJob(t, n, cfg)
	got := new([][]byte)
	mods[1].Register(tag, func(src int, data []byte) { *got = append(*got, append([]byte(nil), data...)) })
	return mods, got
}

// TestTrySendBox: TrySend's fast path (the pair's box) delivers every
// message in order, header and payload of every length a small message
// has (the inline word copies of 0..16-byte payloads included), in bursts
// and one by one; a lost peer and a closed module are still refused with
// their errors.
func TestTrySendBox(t *testing.T) {
	mods, got := boxJob(t, 3, btl.TagPMLMatch)
	a, e := mods[0], mods[1]
	var want [][]byte
	hdr := make([]byte, 16)
	for i := 0; i < 600; i++ {
		n := i % 40
		binary.LittleEndian.PutUint32(hdr, uint32(i))
		pay := boxMsg(i, n)
		ok, err := a.TrySend(1, btl.TagPMLMatch, btl.Header16Of(hdr), pay)
		if err != nil || !ok {
			t.Fatalf("TrySend %d (%d bytes): %v, %v", i, n, ok, err)
		}
		want = append(want, append(append([]byte(nil), hdr...), pay...))
		if i%7 == 0 { // one by one now and then: the ping-pong's joined copy
			for len(*got) < len(want) {
				e.Progress()
			}
		}
	}
	for len(*got) < len(want) {
		e.Progress()
	}
	if a.peers[1].out == nil {
		t.Fatal("the pair never got a box: the fast path was not taken")
	}
	for i := range want {
		if !bytes.Equal((*got)[i], want[i]) {
			t.Fatalf("message %d: got %x, want %x", i, (*got)[i], want[i])
		}
	}
	for i := 0; i < 4; i++ { // rank 2 gets a box too
		if ok, err := a.TrySend(2, btl.TagPMLMatch, btl.Header16Of(hdr), nil); !ok || err != nil {
			t.Fatalf("TrySend to rank 2: %v, %v", ok, err)
		}
	}
	a.monitor.markLost(&a.peers[2])
	if _, err := a.TrySend(2, btl.TagPMLMatch, btl.Header16Of(hdr), nil); !errors.Is(err, errs.ErrPeerLost) {
		t.Errorf("TrySend to a lost peer: %v, want ErrPeerLost", err)
	}
	a.Close()
	if _, err := a.TrySend(1, btl.TagPMLMatch, btl.Header16Of(hdr), nil); !errors.Is(err, errs.ErrFinalized) {
		t.Errorf("TrySend after Close: %v, want ErrFinalized", err)
	}
}

// TestTrySendBytesSerial: TrySendBytesLocked takes a record of up to
// BoxSerialMax bytes into the box when it is serial, up to BoxMsgMax
// otherwise; the receiver delivers either whole, in order with the
// FIFO's messages.
func TestTrySendBytesSerial(t *testing.T) {
	mods, got := boxJob(t, 2, btl.TagPMLRndv)
	a, e := mods[0], mods[1]
	if _, err := a.Send(1, btl.TagPMLRndv, []byte{0}, nil, nil); err != nil { // the pair's box
		t.Fatal(err)
	}
	if a.peers[1].out == nil {
		t.Fatal("no box after the first send")
	}
	hdr := make([]byte, btl.MaxHeader)
	want := [][]byte{{0}}
	lock := a.SendLock(1)
	for i, tt := range []struct {
		n      int
		serial bool
		box    bool
	}{
		{a.boxMsgMax - len(hdr), false, true},
		{a.boxMsgMax - len(hdr) + 1, false, false},
		{a.boxMsgMax - len(hdr) + 1, true, true},
		{a.boxSerMax - len(hdr), true, true},
		{a.boxSerMax - len(hdr) + 1, true, false},
		{16 << 10, true, true},
		{16 << 10, false, false},
	} {
		hdr[0] = byte(i + 1)
		pay := boxMsg(i, tt.n)
		lock.Lock()
		ok := a.TrySendBytesLocked(1, btl.TagPMLRndv, hdr, pay, tt.serial)
		lock.Unlock()
		if ok != tt.box {
			t.Fatalf("%d bytes after a %d-byte header, serial %v: taken %v, want %v (box records up to %d, serial %d)",
				tt.n, len(hdr), tt.serial, ok, tt.box, a.boxMsgMax, a.boxSerMax)
		}
		if !ok {
			if _, err := a.Send(1, btl.TagPMLRndv, hdr, pay, nil); err != nil {
				t.Fatal(err)
			}
		}
		want = append(want, append(append([]byte(nil), hdr...), pay...))
	}
	for k := 0; k < 1000 && len(*got) < len(want); k++ {
		e.Progress()
	}
	if len(*got) != len(want) {
		t.Fatalf("%d messages delivered, want %d", len(*got), len(want))
	}
	for i := range want {
		if !bytes.Equal((*got)[i], want[i]) {
			t.Fatalf("message %d (%d bytes): delivered %d bytes, not the ones sent", i, len(want[i]), len((*got)[i]))
		}
	}
}

// TestPollFrom: PollFrom(src) delivers src's box records, in order, and
// whatever waits in the FIFO (after the box records that precede it), but
// leaves other peers' boxes to Progress; it does nothing while another
// goroutine progresses, or once closed.
func TestPollFrom(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FboxThreshold = 1
	mods := newJob(t, 3, cfg)
	r := mods[0]
	got := make([]int, 3)
	r.Register(btl.TagPMLMatch, func(src int, data []byte) {
		if int(data[0]) != got[src] {
			t.Errorf("from %d: message %d, want %d", src, data[0], got[src])
		}
		got[src]++
	})
	for i := 0; i < 4; i++ {
		for s := 1; s < 3; s++ {
			if _, err := mods[s].Send(0, btl.TagPMLMatch, []byte{byte(i)}, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k := 0; k < 10 && got[1] < 4; k++ {
		r.PollFrom(1)
	}
	if got[1] != 4 || got[2] != 0 {
		t.Fatalf("after PollFrom(1): %d messages from rank 1, %d from rank 2; want 4 and 0 (its box is not polled)", got[1], got[2])
	}
	if r.peers[1].in == nil || r.peers[2].in == nil {
		t.Fatal("the FIFO's box announcements were not taken")
	}
	// Too large for a box: through the FIFO, after rank 2's box records,
	// which PollFrom(1) then delivers first.
	big := make([]byte, r.boxMsgMax)
	if _, err := mods[2].Send(0, btl.TagPMLMatch, []byte{4}, big, nil); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 10 && got[2] < 5; k++ {
		r.PollFrom(1)
	}
	if got[2] != 5 {
		t.Fatalf("after PollFrom(1) with rank 2's FIFO slot waiting: %d messages from rank 2, want 5", got[2])
	}
	mods[2].Send(0, btl.TagPMLMatch, []byte{5}, nil, nil)
	r.PollFrom(1)
	if got[2] != 5 {
		t.Fatalf("PollFrom(1) took rank 2's box record")
	}
	r.Progress()
	if got[2] != 6 {
		t.Fatalf("after Progress: %d messages from rank 2, want 6", got[2])
	}
	mods[1].Send(0, btl.TagPMLMatch, []byte{4}, nil, nil)
	r.progMu.Lock() // another goroutine progressing
	if n := r.PollFrom(1); n != 0 || got[1] != 4 {
		t.Fatalf("PollFrom while progMu is held: %d delivered, %d messages; want 0, 4", n, got[1])
	}
	r.progMu.Unlock()
	if n := r.PollFrom(1); n != 1 || got[1] != 5 {
		t.Fatalf("PollFrom: %d delivered, %d messages; want 1, 5", n, got[1])
	}
	if n := r.PollFrom(7); n != 0 {
		t.Fatalf("PollFrom of a rank outside the job delivered %d", n)
	}
	mods[1].Send(0, btl.TagPMLMatch, []byte{5}, nil, nil)
	r.Close()
	if n := r.PollFrom(1); n != 0 {
		t.Fatalf("PollFrom after Close delivered %d", n)
	}
}

// TestWaiting: Waiting says yes for a FIFO slot (from anyone), a record
// in src's box and sends queued to src, and no once a poll has drained
// them (the poll publishes the released positions it reads).
func TestWaiting(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FboxThreshold = 1
	mods := newJob(t, 3, cfg)
	r := mods[0]
	got := 0
	r.Register(btl.TagPMLMatch, func(src int, data []byte) { got++ })
	drain := func(src int) {
		t.Helper()
		for k := 0; k < 10 && r.Waiting(src); k++ {
			r.PollFrom(src)
		}
		if r.Waiting(src) {
			t.Fatalf("Waiting(%d) still says yes after 10 polls", src)
		}
	}
	for src := 0; src < 8; src++ {
		if r.Waiting(src) {
			t.Fatalf("Waiting(%d) of an idle module said yes", src)
		}
	}
	// The first message announces rank 1's box through the FIFO: a slot
	// waits there, which a wait for anyone's message must poll for.
	if _, err := mods[1].Send(0, btl.TagPMLMatch, []byte{0}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !r.Waiting(1) || !r.Waiting(2) {
		t.Fatalf("with a FIFO slot waiting: Waiting(1) %v, Waiting(2) %v; want both true", r.Waiting(1), r.Waiting(2))
	}
	drain(1)
	if r.peers[1].inPub.Load() == nil {
		t.Fatal("rank 1's box was not announced")
	}
	// Box records: for rank 1 alone.
	for i := 0; i < 3; i++ {
		before := got
		if _, err := mods[1].Send(0, btl.TagPMLMatch, []byte{byte(i)}, nil, nil); err != nil {
			t.Fatal(err)
		}
		if !r.Waiting(1) || r.Waiting(2) {
			t.Fatalf("with a record in rank 1's box: Waiting(1) %v, Waiting(2) %v; want true, false", r.Waiting(1), r.Waiting(2))
		}
		drain(1)
		if got != before+1 {
			t.Fatalf("draining rank 1's box delivered %d messages, want 1", got-before)
		}
	}
	r.peers[2].npending.Store(1) // a send to rank 2 queued
	if !r.Waiting(2) || r.Waiting(1) {
		t.Fatalf("with a send queued to rank 2: Waiting(2) %v, Waiting(1) %v; want true, false", r.Waiting(2), r.Waiting(1))
	}
	r.peers[2].npending.Store(0)
}

// TestLineRecords: a ping-pong's record (put with join) runs to the end of
// a cache line, so that the next one starts a line; a burst's takes half
// lines; the receiver steps over both.
func TestLineRecords(t *testing.T) {
	tb := newTestBox(1024)
	steps := []struct {
		join bool
		n    int    // payload bytes, after a 16-byte header
		w    uint64 // the write position after the put
	}{
		{true, 8, 64},     // 8+16+8 bytes at 0: one line
		{false, 8, 96},    // half a line
		{true, 0, 128},    // 8+16 bytes at 96: the rest of that line
		{true, 100, 256},  // 8+16+100 at 128: two lines
		{false, 100, 384}, // 124 bytes in half lines: 128
		{true, 40, 448},   // 8+16+40 at 384: one line
	}
	for i, st := range steps {
		if !tb.out.put(0, nextSeq(uint32(i)), make([]byte, 16), make([]byte, st.n), st.join) {
			t.Fatalf("put %d refused", i)
		}
		if tb.out.w != st.w {
			t.Fatalf("put %d (join %v, %d bytes): write position %d, want %d", i, st.join, st.n, tb.out.w, st.w)
		}
	}
	if n := tb.m.pollBox(tb.in, 32, false); n != len(steps) || tb.in.r != tb.out.w {
		t.Fatalf("poll: %d delivered, read position %d; want %d, %d", n, tb.in.r, len(steps), tb.out.w)
	}
	for i, g := range tb.got {
		if len(g) != 16+steps[i].n {
			t.Errorf("message %d: %d bytes, want %d", i, len(g), 16+steps[i].n)
		}
	}
	// Wrapping: a line record that does not fit before the end goes to 0
	// with the space it takes there.
	tb = newTestBox(1024)
	for i := 0; i < 15; i++ { // 15 records of 64 bytes: 960
		if !tb.out.put(0, nextSeq(uint32(i)), make([]byte, 16), make([]byte, 8), true) {
			t.Fatalf("put %d refused", i)
		}
	}
	tb.m.pollBox(tb.in, 32, false)
	if !tb.out.put(0, nextSeq(15), make([]byte, 16), make([]byte, 100), true) || tb.out.w != 1024+128 {
		t.Fatalf("a 124-byte line record at 960: write position %d, want %d (a wrap, then 128 at 0)", tb.out.w, 1024+128)
	}
	if n := tb.m.pollBox(tb.in, 32, false); n != 1 || len(tb.got) != 16 || len(tb.got[15]) != 116 {
		t.Fatalf("after the wrap: %d delivered, %d in all; want 1, 16 (the last 116 bytes)", n, len(tb.got))
	}
}
