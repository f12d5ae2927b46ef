package mpool

import (
	"errors"
	"testing"
	"unsafe"
)

// smDefaults mirrors btl/sm's default sizing (btl/sm pins the same numbers).
var smDefaults = Params{
	CtlSize: 256, Slots: 256, SlotSize: 128,
	EagerFrags: 32, EagerFragSize: 4096 + 64,
	MaxFrags: 32, MaxFragSize: 32768 + 64,
}

func TestHeaderOffsets(t *testing.T) {
	var h Header
	pins := []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"Magic", unsafe.Offsetof(h.Magic), 0},
		{"Version", unsafe.Offsetof(h.Version), 8},
		{"NLocal", unsafe.Offsetof(h.NLocal), 12},
		{"Size", unsafe.Offsetof(h.Size), 16},
		{"CreatorPid", unsafe.Offsetof(h.CreatorPid), 24},
		{"Token", unsafe.Offsetof(h.Token), 32},
		{"CtlSize", unsafe.Offsetof(h.CtlSize), 64},
		{"MaxFragSize", unsafe.Offsetof(h.MaxFragSize), 112},
		{"Attached", unsafe.Offsetof(h.Attached), 128},
		{"Arrived", unsafe.Offsetof(h.Arrived), 132},
		{"Released", unsafe.Offsetof(h.Released), 136},
		{"Boxes", unsafe.Offsetof(h.Boxes), 192},
		{"sizeof", unsafe.Sizeof(h), 256},
	}
	for _, p := range pins {
		if p.got != p.want {
			t.Errorf("Header.%s at %d, want %d (bump LayoutVersion if this is intended)", p.name, p.got, p.want)
		}
	}
}

// TestPlanBytesPerN pins the memory cost quoted in doc.go: O(N), one region per rank.
func TestPlanBytesPerN(t *testing.T) {
	tests := []struct {
		n    int
		size int64
	}{
		{1, 1220608},
		{2, 2437120},
		{8, 9736192},
		{32, 38940672},
		{64, 77877248},
	}
	for _, tt := range tests {
		l, err := Plan(tt.n, smDefaults)
		if err != nil {
			t.Fatalf("Plan(%d, smDefaults): %v", tt.n, err)
		}
		if l.Size != tt.size {
			t.Errorf("Plan(%d, smDefaults).Size = %d (%s), want %d", tt.n, l.Size, FormatBytes(l.Size), tt.size)
		}
		t.Logf("N=%d: %s (%d bytes), %d bytes per rank", tt.n, FormatBytes(l.Size), l.Size, l.Stride)
	}
}

func TestPlanErrors(t *testing.T) {
	mod := func(f func(p *Params)) Params { p := smDefaults; f(&p); return p }
	tests := []struct {
		name string
		n    int
		p    Params
		ok   bool
	}{
		{"defaults", 4, smDefaults, true},
		{"one rank", 1, smDefaults, true},
		{"zero ranks", 0, smDefaults, false},
		{"too many ranks", MaxLocal + 1, smDefaults, false},
		{"slots not a power of two", 2, mod(func(p *Params) { p.Slots = 100 }), false},
		{"one slot", 2, mod(func(p *Params) { p.Slots = 1 }), false},
		{"slot size not a cache-line multiple", 2, mod(func(p *Params) { p.SlotSize = 100 }), false},
		{"zero control block", 2, mod(func(p *Params) { p.CtlSize = 0 }), false},
		{"no fragments, zero size", 2, mod(func(p *Params) { p.EagerFrags, p.EagerFragSize = 0, 0 }), true},
		{"fragments of zero size", 2, mod(func(p *Params) { p.EagerFragSize = 0 }), false},
		{"negative fragments", 2, mod(func(p *Params) { p.MaxFrags = -1 }), false},
		{"odd fragment size", 2, mod(func(p *Params) { p.MaxFragSize = 32768 + 1 }), false},
		{"huge", MaxLocal, mod(func(p *Params) { p.MaxFrags, p.MaxFragSize = 1<<24, 1<<16 }), false},
		{"negative min size", 2, mod(func(p *Params) { p.MinSize = -1 }), false},
	}
	for _, tt := range tests {
		_, err := Plan(tt.n, tt.p)
		if (err == nil) != tt.ok {
			t.Errorf("%s: Plan(%d, %+v) error = %v, want ok=%v", tt.name, tt.n, tt.p, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrLayout) {
			t.Errorf("%s: error %v does not wrap ErrLayout", tt.name, err)
		}
	}
}

func TestPlanMinSize(t *testing.T) {
	p := smDefaults
	p.MinSize = 100 << 20
	l, err := Plan(2, p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Size != 100<<20 {
		t.Errorf("Plan with MinSize 100 MiB: Size = %d, want %d", l.Size, 100<<20)
	}
}

func TestRankOf(t *testing.T) {
	l, err := Plan(3, smDefaults)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		r := l.Rank(i)
		for _, off := range []int64{r.Ctl, r.FIFO, r.Eager, r.Max, r.End - 1} {
			if got := l.RankOf(off); got != i {
				t.Errorf("RankOf(%d) = %d, want %d", off, got, i)
			}
		}
	}
	for _, off := range []int64{0, HeaderSize - 1, l.Rank(2).End, -5} {
		if got := l.RankOf(off); got != -1 {
			t.Errorf("RankOf(%d) = %d, want -1", off, got)
		}
	}
}

// checkLayout verifies the invariants of a planned layout: regions in order,
// aligned, disjoint, inside the segment, and offset 0 never used.
func checkLayout(t *testing.T, l Layout) {
	t.Helper()
	prevEnd := int64(HeaderSize)
	for i := 0; i < l.NLocal; i++ {
		r := l.Rank(i)
		offs := []int64{r.Ctl, r.FIFO, r.Box, r.Eager, r.Max, r.End}
		if r.Ctl != prevEnd {
			t.Fatalf("rank %d starts at %d, previous region ends at %d", i, r.Ctl, prevEnd)
		}
		for j, o := range offs {
			if o%CacheLine != 0 || o <= 0 {
				t.Fatalf("rank %d offset #%d = %d: not a positive multiple of %d", i, j, o, CacheLine)
			}
			if j > 0 && o < offs[j-1] {
				t.Fatalf("rank %d offsets out of order: %v", i, offs)
			}
		}
		if r.FIFO-r.Ctl != l.Params.CtlSize || r.Box-r.FIFO != l.Params.Slots*l.Params.SlotSize ||
			r.Eager-r.Box != l.Params.Boxes*l.Params.BoxSize ||
			r.Max-r.Eager != l.Params.EagerFrags*l.Params.EagerFragSize || r.End-r.Max != l.Params.MaxFrags*l.Params.MaxFragSize {
			t.Fatalf("rank %d regions %v do not match params %+v", i, offs, l.Params)
		}
		prevEnd = r.End
	}
	if prevEnd > l.Size || l.Size%PageSize != 0 || l.Size < l.Params.MinSize {
		t.Fatalf("size %d: regions end at %d, min %d", l.Size, prevEnd, l.Params.MinSize)
	}
}

func TestPlanInvariants(t *testing.T) {
	for _, n := range []int{1, 2, 7, 64, 1000} {
		l, err := Plan(n, smDefaults)
		if err != nil {
			t.Fatal(err)
		}
		checkLayout(t, l)
	}
}

func FuzzPlan(f *testing.F) {
	// The defaults, the smallest legal plan, a zero-fragment plan, and a few
	// invalid ones (odd slot count, misaligned sizes, negative counts).
	f.Add(2, int64(256), int64(256), int64(128), int64(32), int64(4160), int64(32), int64(32832), int64(0))
	f.Add(1, int64(64), int64(2), int64(64), int64(0), int64(0), int64(0), int64(0), int64(0))
	f.Add(64, int64(256), int64(1024), int64(128), int64(0), int64(0), int64(8), int64(65600), int64(1<<30))
	f.Add(3, int64(64), int64(3), int64(64), int64(1), int64(64), int64(1), int64(64), int64(0))
	f.Add(3, int64(65), int64(4), int64(100), int64(-1), int64(64), int64(1), int64(63), int64(-1))
	f.Fuzz(func(t *testing.T, n int, ctl, slots, slotSize, eN, eSize, mN, mSize, minSize int64) {
		// The fast boxes reuse two of the inputs: as many boxes as ranks
		// but one (capped at 32, btl/sm's default), of eSize+mSize bytes.
		boxes := min(max(int64(n)-1, 0), 32)
		p := Params{CtlSize: ctl, Slots: slots, SlotSize: slotSize, EagerFrags: eN, EagerFragSize: eSize,
			MaxFrags: mN, MaxFragSize: mSize, Boxes: boxes, BoxSize: eSize + mSize, MinSize: minSize}
		if p.BoxSize < 0 || p.BoxSize > 1<<24 {
			p.BoxSize = 0
			p.Boxes = 0
		}
		l, err := Plan(n, p)
		if err != nil {
			if !errors.Is(err, ErrLayout) {
				t.Fatalf("Plan(%d, %+v): error %v does not wrap ErrLayout", n, p, err)
			}
			return
		}
		if l.Size > maxSegment+PageSize {
			t.Fatalf("Plan(%d, %+v): size %d above the bound", n, p, l.Size)
		}
		if n > 4096 {
			n = 4096 // checking every region of a huge plan is slow; the arithmetic is the same
			l.NLocal = n
		}
		checkLayout(t, l)
	})
}
