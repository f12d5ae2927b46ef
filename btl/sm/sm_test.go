package sm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/btltest"
	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/mca"
	"github.com/gorun-mpi/gorun/mpool"
)

func TestConformance(t *testing.T)      { btltest.Run(t, newPair) }
func TestConformanceSmall(t *testing.T) { btltest.Run(t, smallPair) }

func TestSharedOffsets(t *testing.T) {
	var c ctl
	var e elem
	pins := []struct {
		name      string
		got, want uintptr
	}{
		{"ctl.head", unsafe.Offsetof(c.head), 0},
		{"ctl.tail", unsafe.Offsetof(c.tail), 128},
		{"ctl.armed", unsafe.Offsetof(c.armed), 256},
		{"ctl.wakeSeq", unsafe.Offsetof(c.wakeSeq), 260},
		{"ctl.pid", unsafe.Offsetof(c.pid), 320},
		{"ctl.magicAddr", unsafe.Offsetof(c.magicAddr), 328},
		{"ctl.running", unsafe.Offsetof(c.running), 336},
		{"ctl.claim", unsafe.Offsetof(c.claim), 344},
		{"ctl.boxNext", unsafe.Offsetof(c.boxNext), 352},
		{"sizeof ctl", unsafe.Sizeof(c), ctlSize},
		{"elem.seq", unsafe.Offsetof(e.seq), 0},
		{"elem.frag", unsafe.Offsetof(e.frag), 8},
		{"elem.src", unsafe.Offsetof(e.src), 16},
		{"elem.length", unsafe.Offsetof(e.length), 20},
		{"elem.tag", unsafe.Offsetof(e.tag), 24},
		{"elem.kind", unsafe.Offsetof(e.kind), 25},
		{"elem.pseq", unsafe.Offsetof(e.pseq), 28},
		{"elem.data", unsafe.Offsetof(e.data), elemHead},
		{"sizeof elem", unsafe.Sizeof(e), elemSize},
	}
	for _, p := range pins {
		if p.got != p.want {
			t.Errorf("%s at %d, want %d (bump mpool.LayoutVersion if intended)", p.name, p.got, p.want)
		}
	}
	if maxAcks != 12 || inlineMax != 96 {
		t.Errorf("inline %d bytes, %d acks per slot; want 96, 12", inlineMax, maxAcks)
	}
}

// TestSegmentBytesPerN pins the default segment size per number of ranks
// (the numbers quoted in mpool's doc), and the fast boxes' share of it:
// per rank, at most twice the segment without them (issue 14), at 64 ranks
// 1.87× (2,269,568 against 1,216,896 bytes). Up to smallJobRanks ranks a
// rank has twice the max-size fragments (MaxFragCount): 1.1 MiB more each.
// Below 18 ranks the boxes are larger (BoxSize: 256 KiB up to 5 ranks, at
// 8 ranks 128 KiB, 1.75× the segment without boxes).
func TestSegmentBytesPerN(t *testing.T) {
	cfg := DefaultConfig()
	noBox := cfg
	noBox.FboxMax = 0
	for _, tt := range []struct {
		n           int
		size, noBox int64
	}{{2, 5062656, 4538368}, {4, 12218368, 9072640}, {8, 17084416, 9736192}, {32, 71577600, 38944768}, {64, 145256448, 77885440}} {
		l, err := mpool.Plan(tt.n, cfg.LayoutParams(tt.n))
		if err != nil || l.Size != tt.size {
			t.Errorf("N=%d: %d bytes, %v; want %d", tt.n, l.Size, err, tt.size)
		}
		l0, err := mpool.Plan(tt.n, noBox.LayoutParams(tt.n))
		if err != nil || l0.Size != tt.noBox {
			t.Errorf("N=%d without boxes: %d bytes, %v; want %d", tt.n, l0.Size, err, tt.noBox)
		}
		if l.Size > 2*l0.Size {
			t.Errorf("N=%d: fast boxes more than double the segment (%d > 2 × %d)", tt.n, l.Size, l0.Size)
		}
		t.Logf("N=%d: %s, %d bytes per rank (%d without fast boxes, ×%.2f)", tt.n, mpool.FormatBytes(l.Size),
			l.Stride, l0.Stride, float64(l.Stride)/float64(l0.Stride))
	}
}

// TestBoxSize: btl_sm_fbox_size when set; by default the largest of 256,
// 128, 64 and 32 KiB whose boxes (one per other rank, at most
// btl_sm_fbox_max) take at most 1 MiB, 32 KiB when even those take more.
// A box takes messages of up to a quarter of it, at most 8 KiB and a
// header (btl.MaxHeader).
func TestBoxSize(t *testing.T) {
	for _, tt := range []struct{ set, max, n, want, msg, ser int }{
		{0, 32, 2, 256 << 10, 8 << 10, 16<<10 + btl.MaxHeader},
		{0, 32, 5, 256 << 10, 8 << 10, 16<<10 + btl.MaxHeader},
		{0, 32, 6, 128 << 10, 8 << 10, 16<<10 + btl.MaxHeader},
		{0, 32, 9, 128 << 10, 8 << 10, 16<<10 + btl.MaxHeader},
		{0, 32, 10, 64 << 10, 8 << 10, 16 << 10},
		{0, 32, 17, 64 << 10, 8 << 10, 16 << 10},
		{0, 32, 18, 32 << 10, 8 << 10, 8 << 10},
		{0, 32, 64, 32 << 10, 8 << 10, 8 << 10},
		{0, 32, 1024, 32 << 10, 8 << 10, 8 << 10},
		{0, 4, 1024, 256 << 10, 8 << 10, 16<<10 + btl.MaxHeader}, // btl_sm_fbox_max 4: four boxes
		{0, 0, 8, 256 << 10, 8 << 10, 16<<10 + btl.MaxHeader},    // no boxes: nothing to size
		{0, 32, 1, 256 << 10, 8 << 10, 16<<10 + btl.MaxHeader},
		{16 << 10, 32, 2, 16 << 10, 4 << 10, 4 << 10},
		{1 << 20, 32, 64, 1 << 20, 8 << 10, 16<<10 + btl.MaxHeader},
		{1 << 10, 32, 64, 1 << 10, 256, 256},
	} {
		c := DefaultConfig()
		c.FboxSize, c.FboxMax = tt.set, tt.max
		if got, msg, ser := c.BoxSize(tt.n), c.BoxMsgMax(tt.n), c.BoxSerialMax(tt.n); got != tt.want || msg != tt.msg || ser != tt.ser {
			t.Errorf("fbox_size %d, fbox_max %d, %d ranks: box %d, messages up to %d, serial ones %d; want %d, %d, %d", tt.set, tt.max, tt.n, got, msg, ser, tt.want, tt.msg, tt.ser)
		}
		if st := c.BoxStride(tt.n); st != boxCtlSize+int64(tt.want) {
			t.Errorf("fbox_size %d, %d ranks: stride %d, want %d", tt.set, tt.n, st, boxCtlSize+int64(tt.want))
		}
	}
}

// TestMaxFragCount: btl_sm_max_frags when set; by default
// btl_sm_free_list_max, twice that with at most smallJobRanks ranks.
func TestMaxFragCount(t *testing.T) {
	for _, tt := range []struct{ listMax, maxFrags, n, want int }{
		{32, 0, 1, 64}, {32, 0, 2, 64}, {32, 0, smallJobRanks, 64}, {32, 0, smallJobRanks + 1, 32}, {32, 0, 64, 32},
		{8, 0, 2, 16}, {32, 5, 2, 5}, {32, 100, 64, 100},
	} {
		c := DefaultConfig()
		c.FreeListMax, c.MaxFrags = tt.listMax, tt.maxFrags
		if got := c.MaxFragCount(tt.n); got != tt.want {
			t.Errorf("free_list_max %d, max_frags %d, %d ranks: %d max-size fragments, want %d", tt.listMax, tt.maxFrags, tt.n, got, tt.want)
		}
		if got := c.LayoutParams(tt.n).MaxFrags; got != int64(tt.want) {
			t.Errorf("free_list_max %d, max_frags %d, %d ranks: the layout reserves %d, want %d", tt.listMax, tt.maxFrags, tt.n, got, tt.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	mod := func(f func(c *Config)) Config { c := DefaultConfig(); f(&c); return c }
	tests := []struct {
		name string
		c    Config
		want string // "" = valid
	}{
		{"defaults", DefaultConfig(), ""},
		{"eager above max", mod(func(c *Config) { c.EagerLimit = 64 << 10 }), `btl_sm_eager_limit="64k" and btl_sm_max_send_size="32k" cannot work together`},
		{"fifo not power of two", mod(func(c *Config) { c.FIFOSize = 100 }), `btl_sm_fifo_size="100" cannot work: the FIFO size must be a power of two`},
		{"lazy free too big", mod(func(c *Config) { c.LazyFree = 200 }), `btl_sm_fifo_lazy_free="200" and btl_sm_fifo_size="256"`},
		{"num above list max", mod(func(c *Config) { c.FreeListNum = 33 }), `btl_sm_free_list_num="33" and btl_sm_free_list_max="32"`},
		{"zero inc", mod(func(c *Config) { c.FreeListInc = 0 }), `btl_sm_free_list_inc="0": out of range`},
		{"bad single copy", mod(func(c *Config) { c.SingleCopy = "always" }), `btl_sm_single_copy="always"`},
		{"eager 0 is fine", mod(func(c *Config) { c.EagerLimit = 0 }), ""},
		{"fbox size not a power of two", mod(func(c *Config) { c.FboxSize = 3000 }), `btl_sm_fbox_size="3000" cannot work: the fast box size must be 0 (by the ranks on the node) or a power of two of at least 1k`},
		{"fbox size too small", mod(func(c *Config) { c.FboxSize = 512 }), `btl_sm_fbox_size="512" cannot work`},
		{"fbox size too large", mod(func(c *Config) { c.FboxSize = 2 << 20 }), `btl_sm_fbox_size="2m": out of range`},
		{"fbox size by the ranks is fine", mod(func(c *Config) { c.FboxSize = 0 }), ""},
		{"no fast boxes is fine", mod(func(c *Config) { c.FboxMax = 0 }), ""},
		{"num above max frags", mod(func(c *Config) { c.MaxFrags = 4 }), `btl_sm_free_list_num="8" and btl_sm_max_frags="4"`},
		{"max frags at num is fine", mod(func(c *Config) { c.MaxFrags = 8 }), ""},
	}
	for _, tt := range tests {
		err := tt.c.Validate()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestEagerLimitPayloadOnly: a payload of exactly the eager limit plus the
// largest header fits one eager fragment (the header does not count).
func TestEagerLimitPayloadOnly(t *testing.T) {
	m := newJob(t, 2, DefaultConfig())
	a := m[0]
	got := 0
	m[1].Register(btl.TagPMLMatch, func(src int, data []byte) { got = len(data) })
	copied, err := a.Send(1, btl.TagPMLMatch, make([]byte, btl.MaxHeader), make([]byte, a.cfg.EagerLimit), nil)
	if err != nil || !copied {
		t.Fatalf("Send of eager_limit bytes = %v, %v", copied, err)
	}
	if a.eager.inUse() != 1 || a.maxFrags.inUse() != 0 {
		t.Fatalf("eager fragments in use %d, max-size %d; want 1, 0", a.eager.inUse(), a.maxFrags.inUse())
	}
	pumpUntil(t, m, func() bool { return got == btl.MaxHeader+a.cfg.EagerLimit && a.eager.inUse() == 0 })
}

// TestFullFIFOPendingKeepsOrder fills the receiver's FIFO, checks that later
// sends queue (even small ones that would fit once space frees) and arrive
// in order.
func TestFullFIFOPendingKeepsOrder(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FIFOSize, cfg.LazyFree = 8, 4
	cfg.InlineLimit = cfg.maxInlineLimit() // the most this FIFO allows
	m := newJob(t, 2, cfg)
	a, b := m[0], m[1]
	var got []uint64
	b.Register(btl.TagPMLMatch, func(src int, data []byte) { got = append(got, binary.LittleEndian.Uint64(data)) })
	hdr := make([]byte, 8)
	for i := uint64(0); i < 50; i++ {
		binary.LittleEndian.PutUint64(hdr, i)
		if copied, err := a.Send(1, btl.TagPMLMatch, hdr, nil, nil); err != nil || !copied {
			t.Fatalf("Send %d = %v, %v; small sends are always copied", i, copied, err)
		}
		if i == 7 && a.peers[1].npending.Load() != 0 {
			t.Fatal("queued before the FIFO was full")
		}
	}
	if q := a.peers[1].npending.Load(); q != 42 {
		t.Fatalf("%d sends pending, want 42 (8 slots)", q)
	}
	// Drain one batch at the receiver: the sender's next send must still
	// queue behind the pending ones.
	b.Progress()
	binary.LittleEndian.PutUint64(hdr, 50)
	a.Send(1, btl.TagPMLMatch, hdr, nil, nil)
	pumpUntil(t, m, func() bool { return len(got) == 51 })
	for i, v := range got {
		if v != uint64(i) {
			t.Fatalf("arrival %d is message %d: order broken", i, v)
		}
	}
}

// TestFreeListExhaustion: with no fragment left, a large Send returns
// copied=false, keeps the payload, and calls SendDone once after an ack.
func TestFreeListExhaustion(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FreeListNum, cfg.FreeListMax, cfg.FreeListInc, cfg.MaxFrags = 1, 1, 1, 1
	cfg.InlineLimit = 0 // every message over one slot takes a fragment
	m := newJob(t, 2, cfg)
	a, b := m[0], m[1]
	var got [][]byte
	b.Register(btl.TagPMLFrag, func(src int, data []byte) { got = append(got, bytes.Clone(data)) })
	p1 := bytes.Repeat([]byte{1}, 1000)
	p2 := bytes.Repeat([]byte{2}, 20000) // max-size pool
	p3 := bytes.Repeat([]byte{3}, 1000)  // both pools out
	var d1, d2, d3 doneRec
	c1, _ := a.Send(1, btl.TagPMLFrag, nil, p1, &d1)
	c2, _ := a.Send(1, btl.TagPMLFrag, nil, p2, &d2)
	c3, err := a.Send(1, btl.TagPMLFrag, nil, p3, &d3)
	if !c1 || !c2 || c3 || err != nil {
		t.Fatalf("copied = %v, %v, %v (%v); want true, true, false", c1, c2, c3, err)
	}
	a.Progress()
	if d3.n.Load() != 0 {
		t.Fatal("SendDone before any fragment came back")
	}
	pumpUntil(t, m, func() bool { return len(got) == 3 })
	if d1.n.Load() != 0 || d2.n.Load() != 0 || d3.n.Load() != 1 || d3.err != nil {
		t.Fatalf("SendDone counts %d, %d, %d (err %v); want 0, 0, 1 (nil)", d1.n.Load(), d2.n.Load(), d3.n.Load(), d3.err)
	}
	if !bytes.Equal(got[0], p1) || !bytes.Equal(got[1], p2) || !bytes.Equal(got[2], p3) {
		t.Fatal("payloads differ or out of order")
	}
}

// TestBadOffsetRejected forges slots that point outside the sender's
// fragments: they are logged and dropped, later good slots still arrive.
func TestBadOffsetRejected(t *testing.T) {
	cfg := DefaultConfig()
	cfg.InlineLimit = 0 // the test forges fragment offsets
	m := newJob(t, 2, cfg)
	a, b := m[0], m[1]
	log := &testLog{Logger: b.log}
	b.log = log
	delivered := 0
	b.Register(btl.TagPMLMatch, func(int, []byte) { delivered++ })
	es := a.cfg.EagerFragSize()
	r1, r0 := a.peers[1].region, a.peers[0].region
	forged := []struct {
		name string
		src  uint32
		off  int64
		n    uint32
		kind uint8
	}{
		{"receiver's own fragment", 0, r1.Eager, 10, kindData},
		{"misaligned", 0, r0.Eager + 64, 10, kindData},
		{"inside the FIFO", 0, r0.FIFO, 10, kindData},
		{"past the segment", 0, 1 << 40, 10, kindData},
		{"too long for an eager fragment", 0, r0.Eager, uint32(es + 1), kindData},
		{"bad sender rank", 7, r0.Eager, 10, kindData},
		{"inline too long", 0, 0, 200, kindData},
		{"unknown kind", 0, 0, 1, 9},
		{"ack for a fragment never lent", 0, 0, 1, kindAck},
	}
	p := &a.peers[1]
	for _, f := range forged {
		e, h, ok := p.claim(a.mask + 1)
		if !ok {
			t.Fatal("FIFO full")
		}
		e.frag, e.src, e.length, e.tag, e.kind = uint64(f.off), f.src, f.n, uint8(btl.TagPMLMatch), f.kind
		e.data[0] = uint64(r1.Eager) // for the ack: b's own fragment, never handed out
		a.publish(p, e, h)
	}
	a.Send(1, btl.TagPMLMatch, []byte("ok"), nil, nil)
	pumpUntil(t, m, func() bool { return delivered == 1 })
	if n := int(log.errors.Load()); n != len(forged) {
		t.Fatalf("%d slots rejected with an error log, want %d", n, len(forged))
	}
}

// TestManyWriters: goroutines of several sender modules write one
// receiver's FIFO at once (run with -race); per-stream order holds and
// nothing is lost, across many wraparounds of a small FIFO.
func TestManyWriters(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FIFOSize, cfg.LazyFree = 16, 4
	cfg.FboxMax = 0                        // this test is about the FIFO's many writers: no fast boxes
	cfg.InlineLimit = cfg.maxInlineLimit() // the most this FIFO allows
	const ranks, goroutines, each = 3, 3, 400
	m := newJob(t, ranks+1, cfg)
	recv := m[0]
	next := map[[2]uint64]uint64{}
	total := 0
	bad := ""
	recv.Register(btl.TagPMLMatch, func(src int, data []byte) {
		k := [2]uint64{uint64(src), binary.LittleEndian.Uint64(data[8:])}
		if seq := binary.LittleEndian.Uint64(data); seq != next[k] && bad == "" {
			bad = "out of order"
		}
		next[k]++
		total++
	})
	done := make(chan error, ranks*goroutines)
	for r := 1; r <= ranks; r++ {
		for g := 0; g < goroutines; g++ {
			go func() {
				hdr := make([]byte, 16)
				pay := make([]byte, 200)
				for i := 0; i < each; i++ {
					binary.LittleEndian.PutUint64(hdr, uint64(i))
					binary.LittleEndian.PutUint64(hdr[8:], uint64(g))
					n := (i * 13) % 200
					if _, err := m[r].Send(0, btl.TagPMLMatch, hdr, pay[:n], nil); err != nil {
						done <- err
						return
					}
					m[r].Progress()
				}
				done <- nil
			}()
		}
	}
	finished := 0
	pumpUntil(t, m[:1], func() bool {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished++
		default:
		}
		if finished == ranks*goroutines {
			for _, s := range m[1:] {
				s.Progress() // drain what is still pending
			}
		}
		return total == ranks*goroutines*each
	})
	if bad != "" {
		t.Fatal(bad)
	}
	if head := recv.ctl.head.Load(); head <= uint64(cfg.FIFOSize)*10 {
		t.Fatalf("only %d slots used; the test must wrap the FIFO many times", head)
	}
}

func TestSendToLostPeer(t *testing.T) {
	m := newJob(t, 2, smallConfig())
	a := m[0]
	var lost []int
	a.OnPeerLost(func(p int) { lost = append(lost, p) })
	// Queue a by-reference send, then declare the peer lost.
	var d doneRec
	for i := 0; i < 10; i++ {
		a.Send(1, btl.TagPMLFrag, nil, make([]byte, 30000), &d)
	}
	a.monitor.markLost(&a.peers[1])
	a.Progress()
	a.Progress()
	if len(lost) != 1 || lost[0] != 1 {
		t.Fatalf("OnPeerLost calls %v, want [1]", lost)
	}
	if d.n.Load() == 0 || !errors.Is(d.err, errs.ErrPeerLost) {
		t.Fatalf("pending completions: %d calls, err %v; want ErrPeerLost", d.n.Load(), d.err)
	}
	if _, err := a.Send(1, btl.TagPMLMatch, nil, nil, nil); !errors.Is(err, errs.ErrPeerLost) {
		t.Fatalf("Send after loss: %v, want ErrPeerLost", err)
	}
	if a.eager.inUse()+a.maxFrags.inUse() > 2 {
		t.Fatalf("fragments of failed pending sends not returned: %d in use", a.eager.inUse()+a.maxFrags.inUse())
	}
}

func TestSteadyStateNoAllocs(t *testing.T) {
	m := newJob(t, 2, DefaultConfig())
	a, b := m[0], m[1]
	b.Register(btl.TagPMLMatch, func(int, []byte) {})
	hdr := make([]byte, 16)
	for _, n := range []int{8, 4096, 30000} {
		pay := make([]byte, n)
		allocs := testing.AllocsPerRun(500, func() {
			a.Send(1, btl.TagPMLMatch, hdr, pay, nil)
			b.Progress()
			a.Progress()
		})
		if allocs != 0 {
			t.Errorf("%d-byte messages: %v allocations per message, want 0", n, allocs)
		}
	}
}

func TestSleepTimesOut(t *testing.T) {
	m := newJob(t, 2, DefaultConfig())
	start := time.Now()
	m[0].Sleep(20 * time.Millisecond)
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Fatalf("Sleep(20ms) returned after %v with nothing to do", el)
	}
}

// TestConfigFrom: the resolved parameters fill Config, and DefaultConfig is
// what the declared defaults give.
func TestConfigFrom(t *testing.T) {
	set, _, err := mca.Resolve(mca.Inputs{Flags: [][2]string{{"btl_sm_fifo_size", "64"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ConfigFrom(set)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{EagerLimit: 4 << 10, MaxSendSize: 32 << 10, InlineLimit: 512, FIFOSize: 64,
		FreeListNum: 8, FreeListMax: 32, FreeListInc: 8, LazyFree: 32, BackingDir: "/dev/shm", SingleCopy: "auto",
		FboxThreshold: 16, FboxMax: 32, FboxSize: 0}
	if got != want {
		t.Fatalf("ConfigFrom = %+v\nwant %+v", got, want)
	}
	want.FIFOSize = 256
	if d := DefaultConfig(); d != want {
		t.Fatalf("DefaultConfig() = %+v\nwant %+v", d, want)
	}
}

// TestWithRndv runs the production descriptor exchange (package rndv).
func TestWithRndv(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rendezvous = mpool.RndvDir{}
	m := newJob(t, 3, cfg)
	got := 0
	m[2].Register(btl.TagPMLMatch, func(src int, data []byte) { got++ })
	m[0].Send(2, btl.TagPMLMatch, []byte("h"), make([]byte, 5000), nil)
	m[1].Send(2, btl.TagPMLMatch, []byte("h"), nil, nil)
	pumpUntil(t, m, func() bool { return got == 2 })
}

// TestRefAtFrontIsNotStarved: while a by-reference send waits at the front
// of a pending queue for a fragment, later sends must not take the
// fragments that come back (they would hold them behind it forever).
func TestRefAtFrontIsNotStarved(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FreeListNum, cfg.FreeListMax, cfg.FreeListInc, cfg.MaxFrags = 1, 1, 1, 1
	cfg.InlineLimit = 0 // every message over one slot takes a fragment
	m := newJob(t, 2, cfg)
	a, b := m[0], m[1]
	var got []byte
	b.Register(btl.TagPMLFrag, func(src int, data []byte) { got = append(got, data[0]) })
	send := func(id byte) bool {
		pay := bytes.Repeat([]byte{id}, 1000)
		copied, err := a.Send(1, btl.TagPMLFrag, nil, pay, &doneRec{})
		if err != nil {
			t.Fatal(err)
		}
		return copied
	}
	if !send(1) || !send(2) || send(3) {
		t.Fatal("want messages 1, 2 in the two fragments and 3 by reference")
	}
	b.Progress() // delivers 1, 2 and acks both fragments
	a.progMu.Lock()
	a.poll() // the fragments are free again; 3 still waits at the front
	a.progMu.Unlock()
	if send(4) || send(5) {
		t.Fatal("a send behind a by-reference op took a fragment")
	}
	pumpUntil(t, m, func() bool { return len(got) == 5 })
	if !bytes.Equal(got, []byte{1, 2, 3, 4, 5}) {
		t.Fatalf("arrival order %v", got)
	}
}

// TestPeerRunning: a rank's running flag is visible to its peers, and
// never for itself or an unknown rank.
func TestPeerRunning(t *testing.T) {
	mods := newJob(t, 2, DefaultConfig())
	if mods[0].PeerRunning(1) {
		t.Fatal("rank 1 running before it said so")
	}
	mods[1].SetRunning(true)
	if !mods[0].PeerRunning(1) {
		t.Error("rank 0 does not see rank 1 running")
	}
	mods[1].SetRunning(false)
	if mods[0].PeerRunning(1) {
		t.Error("rank 0 still sees rank 1 running after it yielded")
	}
	mods[1].YieldCore() // off the core while it yields, on again after
	if !mods[0].PeerRunning(1) {
		t.Error("rank 0 does not see rank 1 running after YieldCore")
	}
	mods[0].SetRunning(true)
	for _, r := range []int{0, -1, 2} {
		if mods[0].PeerRunning(r) {
			t.Errorf("PeerRunning(%d) from rank 0 = true; want false (self or not a rank)", r)
		}
	}
}

// TestInlineMultiSlot: payloads up to the inline limit travel in
// consecutive FIFO slots, with no fragment, intact and in order across
// the FIFO's wraparound (a 16-slot FIFO: 4 slots, 392 bytes at most).
func TestInlineMultiSlot(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FIFOSize, cfg.LazyFree = 16, 4
	cfg.InlineLimit = cfg.maxInlineLimit()
	if want := inlineMax + 3*contBytes - btl.MaxHeader; cfg.InlineLimit != want {
		t.Fatalf("the inline limit of 16 slots is %d; want %d", cfg.InlineLimit, want)
	}
	m := newJob(t, 2, cfg)
	a, b := m[0], m[1]
	var got [][]byte
	b.Register(btl.TagPMLMatch, func(src int, data []byte) { got = append(got, append([]byte(nil), data...)) })
	hdr := make([]byte, 16)
	var want [][]byte
	for i := 0; i < 300; i++ {
		n := (i * 37) % (a.inlineLimit + 1) // 0..392, every slot count, all offsets
		payload := make([]byte, n)
		for j := range payload {
			payload[j] = byte(i + j*7)
		}
		hdr[0] = byte(i)
		copied, err := a.Send(1, btl.TagPMLMatch, hdr, payload, nil)
		if err != nil || !copied {
			t.Fatalf("Send %d of %d bytes = %v, %v", i, n, copied, err)
		}
		want = append(want, append(append([]byte(nil), hdr...), payload...))
		if a.eager.inUse() != 0 || a.maxFrags.inUse() != 0 {
			t.Fatalf("send %d of %d bytes took a fragment", i, n)
		}
		pumpUntil(t, m, func() bool { return a.peers[1].npending.Load() == 0 && len(got) == len(want) })
	}
	// A burst: the FIFO fills, later sends queue (in fragments) behind it,
	// and the order holds across inline and queued messages.
	for i := 300; i < 600; i++ {
		n := (i * 53) % (a.inlineLimit + 1)
		payload := bytes.Repeat([]byte{byte(i)}, n)
		hdr[0] = byte(i)
		if _, err := a.Send(1, btl.TagPMLMatch, hdr, payload, nil); err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
		want = append(want, append(append([]byte(nil), hdr...), payload...))
	}
	pumpUntil(t, m, func() bool { return len(got) == len(want) })
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("message %d: got %d bytes %x..., want %d bytes %x...", i, len(got[i]), got[i][:min(8, len(got[i]))], len(want[i]), want[i][:8])
		}
	}
}

// TestInlineLimitRule: btl_sm_inline_limit is at most what a quarter of
// the FIFO carries (30 × slots − 88 bytes; one slot's 32 below 8 slots);
// more is refused, naming both parameters and the allowed range, instead
// of being capped as it was.
func TestInlineLimitRule(t *testing.T) {
	tests := []struct {
		fifo, limit int
		most        int // the allowed maximum
	}{
		{256, 1024, 7592},
		{256, 7592, 7592},
		{256, 7593, 7592},
		{256, 1 << 20, 7592},
		{16, 392, 392}, // 4 slots
		{16, 1024, 392},
		{8, 152, 152}, // 2 slots
		{4, 32, 32},   // one slot: single-slot messages only
		{4, 33, 32},
		{2, 0, 32}, // off
		{256, 0, 7592},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		c.FIFOSize, c.InlineLimit, c.LazyFree = tt.fifo, tt.limit, max(1, tt.fifo/2)
		if got := c.maxInlineLimit(); got != tt.most || (tt.fifo >= 8 && got != 30*tt.fifo-88) {
			t.Errorf("fifo %d: maxInlineLimit %d; want %d", tt.fifo, got, tt.most)
		}
		err := c.Validate()
		if tt.limit <= tt.most {
			if err != nil {
				t.Errorf("fifo %d, limit %d: %v; want it accepted", tt.fifo, tt.limit, err)
			}
			continue
		}
		want := fmt.Sprintf(" and btl_sm_fifo_size=%q cannot work together: an inline message takes at most a quarter of the FIFO's slots; allowed: btl_sm_inline_limit 0..%d with btl_sm_fifo_size=%d",
			strconv.Itoa(tt.fifo), tt.most, tt.fifo)
		if err == nil || !strings.Contains(err.Error(), "btl_sm_inline_limit=") || !strings.Contains(err.Error(), want) {
			t.Errorf("fifo %d, limit %d: %v; want an error containing %q", tt.fifo, tt.limit, err, want)
		}
	}
}

// TestFlushedByMark: a mark covers the sends queued before it only; they
// are flushed once the receiver has drained them, whatever was queued
// after.
func TestFlushedByMark(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FIFOSize, cfg.LazyFree = 8, 4
	cfg.InlineLimit = cfg.maxInlineLimit() // the most this FIFO allows
	m := newJob(t, 2, cfg)
	a, b := m[0], m[1]
	var got atomic.Int32
	b.Register(btl.TagPMLMatch, func(int, []byte) { got.Add(1) })
	send := func(k int) {
		for i := 0; i < k; i++ {
			if _, err := a.Send(1, btl.TagPMLMatch, make([]byte, 8), nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(20) // 8 in the FIFO, 12 queued
	mark := a.QueueMark(1)
	if mark != 12 || a.Flushed(1, mark) {
		t.Fatalf("mark %d flushed=%v; want 12 queued sends, not flushed", mark, a.Flushed(1, mark))
	}
	send(30) // queued behind the mark
	pumpUntil(t, m, func() bool { return got.Load() >= 20 && a.Flushed(1, mark) })
	if !a.Flushed(1, 0) || !a.Flushed(0, 99) {
		t.Error("a zero mark, or a mark for this rank itself, is not flushed")
	}
}

// TestCloseWhileSending: goroutines keep sending while Close unmaps the
// segment: no fault, and once Close has returned every Send fails with an
// error wrapping ErrFinalized (and Wake, SetRunning, YieldCore, PeerRunning
// do nothing). The sizes cover both guards (close.go): inline and box
// messages, which touch the segment only under the peer's lock, and one
// copied into a fragment before it (counted as a user).
func TestCloseWhileSending(t *testing.T) {
	m := newJob(t, 2, DefaultConfig())
	a := m[0]
	var wg sync.WaitGroup
	var stop atomic.Bool
	for _, n := range []int{100, 400, 2000, 16 << 10} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			payload := make([]byte, n)
			for !stop.Load() {
				a.Send(1, btl.TagPMLMatch, make([]byte, 8), payload, nil)
				a.Wake()
				a.SetRunning(true)
				a.YieldCore()
				a.PeerRunning(1)
			}
		}()
	}
	time.Sleep(5 * time.Millisecond)
	a.Close()
	for i := 0; i < 100; i++ {
		if _, err := a.Send(1, btl.TagPMLMatch, nil, nil, nil); !errors.Is(err, errs.ErrFinalized) {
			t.Fatalf("Send after Close: %v, want ErrFinalized", err)
		}
	}
	stop.Store(true)
	wg.Wait()
}
