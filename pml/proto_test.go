package pml

import (
	"testing"

	"github.com/gorun-mpi/gorun/btl"
)

var testLimits = limits{eager: 4096, firstChunk: 32768, maxSend: 32768, rget: true, rgetMin: 1 << 20}

func TestPlanSend(t *testing.T) {
	noRget := testLimits
	noRget.rget = false
	band := testLimits // single copy for 256 KiB..512 KiB only
	band.rgetMin, band.rgetMax = 256<<10, 512<<10
	tests := []struct {
		name   string
		n      int
		l      limits
		credit bool
		want   sendPlan
	}{
		{"eager limits count payload, not headers: exactly the limit goes eagerly", 4096, testLimits, true, sendPlan{protoEager, 4096, 4096, false, false, false, 0, false}},
		{"zero bytes go eagerly and need no credit", 0, testLimits, false, sendPlan{protoEager, 0, 0, false, false, false, 0, false}},
		{"one byte over the eager limit goes by rendezvous with a max-size first chunk", 4097, testLimits, true, sendPlan{protoRndv, 4097, 4097, false, false, false, 0, false}},
		{"the first chunk is at most firstChunk bytes", 100000, testLimits, true, sendPlan{protoRndv, 32768, 32768, false, false, false, 0, false}},
		{"out of eager credit, a small message goes by rendezvous with no payload", 100, testLimits, false, sendPlan{protoRndv, 0, 0, false, false, false, 0, false}},
		{"out of credit for the first chunk: an empty first fragment", 100000, testLimits, false, sendPlan{protoRndv, 0, 0, false, false, false, 0, false}},
		{"single copy at and above pml_ob1_rget_limit", 1 << 20, testLimits, true, sendPlan{protoRget, 0, 0, false, false, false, 0, false}},
		{"single copy needs no credit", 1 << 21, testLimits, false, sendPlan{protoRget, 0, 0, false, false, false, 0, false}},
		{"below the rget limit: copy pipeline", 1<<20 - 1, testLimits, true, sendPlan{protoRndv, 32768, 32768, false, false, false, 0, false}},
		{"no single copy when the BTL cannot", 1 << 21, noRget, true, sendPlan{protoRndv, 32768, 32768, false, false, false, 0, false}},
		{"rget limit 0 means never", 1 << 21, limits{eager: 4096, firstChunk: 32768, maxSend: 32768, rget: true}, true, sendPlan{protoRndv, 32768, 32768, false, false, false, 0, false}},
		{"rget band: below it, the pipeline", 256<<10 - 1, band, true, sendPlan{protoRndv, 32768, 32768, false, false, false, 0, false}},
		{"rget band: its lower edge reads", 256 << 10, band, true, sendPlan{protoRget, 0, 0, false, false, false, 0, false}},
		{"rget band: its upper edge (pml_ob1_rget_max) reads", 512 << 10, band, true, sendPlan{protoRget, 0, 0, false, false, false, 0, false}},
		{"rget band: above it, the pipeline again", 512<<10 + 1, band, true, sendPlan{protoRndv, 32768, 32768, false, false, false, 0, false}},
		{"rget max without a limit: never", 300 << 10, limits{eager: 4096, firstChunk: 32768, maxSend: 32768, rget: true, rgetMax: 512 << 10}, true, sendPlan{protoRndv, 32768, 32768, false, false, false, 0, false}},
	}
	for _, tt := range tests {
		if got := planSend(tt.n, &tt.l, tt.credit, false, false); got != tt.want {
			t.Errorf("%s: planSend(%d, credit=%v) = %+v, want %+v", tt.name, tt.n, tt.credit, got, tt.want)
		}
	}
}

func TestPlanRndv(t *testing.T) {
	tests := []struct {
		name                string
		size, chunk, bufLen int
		rget                bool
		want                rndvPlan
	}{
		{"everything in the first chunk: copy it and ACK", 20000, 20000, 20000, false, rndvPlan{want: 20000, copy: 20000}},
		{"copy pipeline: copy the chunk, expect FRAGs for the rest", 100000, 32768, 100000, false, rndvPlan{want: 100000, copy: 32768, frags: true}},
		{"single copy: read the rest from the sender", 1 << 20, 0, 1 << 20, true, rndvPlan{want: 1 << 20, read: 1 << 20}},
		{"truncation: take only the buffer's length, ask for nothing beyond it", 100000, 32768, 50000, false, rndvPlan{want: 50000, copy: 32768, frags: true}},
		{"truncation inside the first chunk: copy a prefix, want nothing more", 100000, 32768, 64, false, rndvPlan{want: 64, copy: 64}},
		{"zero-byte buffer for a large message: nothing to copy or read", 100000, 32768, 0, true, rndvPlan{}},
		{"empty first chunk (sender out of credit): everything by FRAGs", 5000, 0, 5000, false, rndvPlan{want: 5000, frags: true}},
	}
	for _, tt := range tests {
		if got := planRndv(tt.size, tt.chunk, tt.bufLen, tt.rget); got != tt.want {
			t.Errorf("%s: planRndv(%d, %d, %d, %v) = %+v, want %+v", tt.name, tt.size, tt.chunk, tt.bufLen, tt.rget, got, tt.want)
		}
	}
}

func TestFragFits(t *testing.T) {
	tests := []struct {
		name string
		off  uint64
		n    int
		want int
		ok   bool
	}{
		{"a fragment inside the receive", 32768, 32768, 100000, true},
		{"the last fragment ends exactly at want", 98304, 1696, 100000, true},
		{"one byte past want is refused", 98304, 1697, 100000, false},
		{"an offset past want is refused", 100001, 0, 100000, false},
		{"a huge offset does not wrap around", 1<<64 - 1, 2, 100000, false},
	}
	for _, tt := range tests {
		if got := fragFits(tt.off, tt.n, tt.want); got != tt.ok {
			t.Errorf("%s: fragFits(%d, %d, %d) = %v", tt.name, tt.off, tt.n, tt.want, got)
		}
	}
}

func TestPlanSendOffer(t *testing.T) {
	adaptive := testLimits
	adaptive.adaptive = true
	band := adaptive
	band.rgetMin, band.rgetMax = 256<<10, 512<<10
	noRget := adaptive
	noRget.rget = false
	tests := []struct {
		name   string
		n      int
		l      limits
		credit bool
		want   sendPlan
	}{
		{"adaptive: larger than the first chunk offers the buffer with a full first chunk", 100000, adaptive, true, sendPlan{protoRndv, 32768, 32768, true, false, false, 0, false}},
		{"adaptive: out of credit, an empty first fragment still offers", 100000, adaptive, false, sendPlan{protoRndv, 0, 0, true, false, false, 0, false}},
		{"adaptive: all in the first chunk, nothing to offer", 32768, adaptive, true, sendPlan{protoRndv, 32768, 32768, false, false, false, 0, false}},
		{"adaptive, out of credit, small: the whole message is left, so offer", 5000, adaptive, false, sendPlan{protoRndv, 0, 0, true, false, false, 0, false}},
		{"adaptive: eager stays eager", 4096, adaptive, true, sendPlan{protoEager, 4096, 4096, false, false, false, 0, false}},
		{"adaptive: the rget band still reads, without a chunk", 300 << 10, band, true, sendPlan{protoRget, 0, 0, false, false, false, 0, false}},
		{"adaptive: outside the band offers", 1 << 20, band, true, sendPlan{protoRndv, 32768, 32768, true, false, false, 0, false}},
		{"adaptive without the BTL's single copy: no offer", 100000, noRget, true, sendPlan{protoRndv, 32768, 32768, false, false, false, 0, false}},
		{"not adaptive: no offer", 100000, testLimits, true, sendPlan{protoRndv, 32768, 32768, false, false, false, 0, false}},
	}
	for _, tt := range tests {
		if got := planSend(tt.n, &tt.l, tt.credit, false, false); got != tt.want {
			t.Errorf("%s: planSend(%d, credit=%v) = %+v, want %+v", tt.name, tt.n, tt.credit, got, tt.want)
		}
	}
}

func TestPlanRead(t *testing.T) {
	adaptive := testLimits
	adaptive.adaptive = true
	adaptive.rgetMin = 0 // no band
	band := testLimits
	band.rgetMin, band.rgetMax = 256<<10, 512<<10
	noRget := adaptive
	noRget.rget = false
	tests := []struct {
		name            string
		size            int
		l               limits
		offered, faster bool
		want            bool
	}{
		{"not offered: never read", 1 << 20, adaptive, false, true, false},
		{"adaptive, read measured faster: read", 1 << 20, adaptive, true, true, true},
		{"adaptive, pipeline measured faster: pipeline", 1 << 20, adaptive, true, false, false},
		{"not adaptive: only the band reads", 1 << 20, band, true, true, false},
		{"in the band: read, whatever was measured", 300 << 10, band, true, false, true},
		{"no single copy here: pipeline", 1 << 20, noRget, true, true, false},
	}
	for _, tt := range tests {
		if got := planRead(tt.size, &tt.l, tt.offered, tt.faster); got != tt.want {
			t.Errorf("%s: planRead(%d, offered=%v, faster=%v) = %v, want %v", tt.name, tt.size, tt.offered, tt.faster, got, tt.want)
		}
	}
}

func TestPathEstPick(t *testing.T) {
	const explore = 1000
	known := func(pipe, read float64, pipeAt, readAt int64) pathEst {
		var e pathEst
		if pipe > 0 {
			e.ns[pathPipe][0] = pipe
		}
		if read > 0 {
			e.ns[pathRead][0] = read
		}
		e.at = [2]int64{pipeAt, readAt}
		return e
	}
	tests := []struct {
		name  string
		e     pathEst
		now   int64
		first int
		read  bool
	}{
		{"nothing measured: try the read first (rget)", pathEst{}, 10, pathRead, true},
		{"nothing measured: try the pipeline first (a stream)", pathEst{}, 10, pathPipe, false},
		{"read measured, pipeline not: try the pipeline", known(0, 0.1, 0, 5), 10, pathRead, false},
		{"pipeline measured, read not: try the read", known(0.1, 0, 5, 0), 10, pathPipe, true},
		{"read cheaper: read", known(0.2, 0.1, 5000, 5000), 5500, pathPipe, true},
		{"pipeline cheaper: pipeline", known(0.1, 0.2, 5000, 5000), 5500, pathRead, false},
		{"pipeline cheaper but the read's measurement is stale: try the read once", known(0.1, 0.2, 5000, 3000), 5500, pathPipe, true},
		{"read cheaper but the pipeline's measurement is stale: try the pipeline once", known(0.2, 0.1, 3000, 5000), 5500, pathRead, false},
		{"exactly explore old is not stale", known(0.1, 0.2, 5000, 4500), 5500, pathRead, false},
	}
	for _, tt := range tests {
		read, next := tt.e.pick(tt.now, explore, tt.first)
		if read != tt.read {
			t.Errorf("%s: pick = read %v, want %v", tt.name, read, tt.read)
		}
		path := pathPipe
		if read {
			path = pathRead
		}
		if next.at[path] != tt.now || next.at[1-path] != tt.e.at[1-path] || next.ns != tt.e.ns {
			t.Errorf("%s: pick noted %+v from %+v; want only the chosen path's time set to %d", tt.name, next, tt.e, tt.now)
		}
	}
	// Favoring the path tried first (serialSplit's margin): the other is
	// taken only when cheaper by more than the margin.
	for _, tt := range []struct {
		name       string
		pipe, read float64
		favor      float64
		wantRead   bool
	}{
		{"pipeline 4% cheaper, margin 5%: the read stays", 0.096, 0.1, 0.95, true},
		{"pipeline 6% cheaper, margin 5%: the pipeline", 0.094, 0.1, 0.95, false},
		{"read cheaper: the read", 0.2, 0.1, 0.95, true},
		{"no margin: the cheaper", 0.099, 0.1, 1, false},
	} {
		if read, _ := known(tt.pipe, tt.read, 5000, 5000).pickFavoring(5500, explore, pathRead, tt.favor); read != tt.wantRead {
			t.Errorf("%s: pickFavoring = read %v, want %v", tt.name, read, tt.wantRead)
		}
	}
	// A stale loser is tried once, then the winner again: the try counts
	// as fresh.
	e := known(0.1, 0.2, 5000, 3000)
	if read, e2 := e.pick(5500, explore, pathRead); !read {
		t.Fatal("stale read not tried")
	} else if read, _ := e2.pick(5600, explore, pathRead); read {
		t.Error("after one try of the stale read, the cheaper pipeline should be taken again")
	}
}

// A path costs the least of its last pathSamples measurements: a delayed
// one does not hide it, and a slower state shows once the fast ones age out.
func TestPathEstNote(t *testing.T) {
	var e pathEst
	e = e.note(pathRead, 2000, 1000, 7) // 2 ns/B
	if e.cost(pathRead) != 2 || e.at[pathRead] != 7 || e.cost(pathPipe) != 0 {
		t.Fatalf("first note: %+v", e)
	}
	e = e.note(pathRead, 50000, 1000, 9) // a preempted one: 50 ns/B
	if e.cost(pathRead) != 2 || e.at[pathRead] != 9 {
		t.Fatalf("an outlier moved the cost: %+v", e)
	}
	e = e.note(pathRead, 1000, 1000, 10) // faster now: 1 ns/B at once
	if e.cost(pathRead) != 1 {
		t.Fatalf("a faster measurement did not count at once: %+v", e)
	}
	for i := range pathSamples {
		e = e.note(pathRead, 3000, 1000, int64(11+i)) // slower state: 3 ns/B
	}
	if e.cost(pathRead) != 3 {
		t.Fatalf("after %d measurements of a slower state the cost is %v, want 3", pathSamples, e.cost(pathRead))
	}
	if e2 := e.note(pathPipe, 100, 0, 20); e2 != e {
		t.Errorf("a note of 0 bytes changed %+v to %+v", e, e2)
	}
	if e2 := e.note(pathPipe, 0, 10, 20); e2.cost(pathPipe) <= 0 {
		t.Errorf("a 0 ns note must still count as measured: %+v", e2)
	}
}

// streamable is the band above the eager limit, up to the stream limit;
// empty when the stream limit is 0 or not above the eager limit.
// TestSplitsInStream: a message has its read split only as part of a
// stream from splitStream up to splitMin (beyond it every read is split),
// inside the rget band, and never when either is 0.
func TestSplitsInStream(t *testing.T) {
	l := testLimits
	l.rgetMin, l.splitMin, l.splitStream = 4097, 65536, 32768
	for _, tt := range []struct {
		splitMin, splitStream, n int
		want                     bool
	}{
		{65536, 32768, 32767, false}, {65536, 32768, 32768, true}, {65536, 32768, 65535, true}, {65536, 32768, 65536, false},
		{0, 0, 40000, false}, {65536, 0, 40000, false},
	} {
		l.splitMin, l.splitStream = tt.splitMin, tt.splitStream
		if got := l.splitsInStream(tt.n); got != tt.want {
			t.Errorf("splitMin %d, splitStream %d: splitsInStream(%d) = %v, want %v", tt.splitMin, tt.splitStream, tt.n, got, tt.want)
		}
	}
	l.splitMin, l.splitStream, l.rgetMin = 65536, 32768, 0 // no rget band: nothing is read
	if l.splitsInStream(40000) {
		t.Error("splitsInStream outside the rget band")
	}
}

func TestStreamable(t *testing.T) {
	for _, tt := range []struct {
		eager, stream, n int
		want             bool
	}{
		{4096, 32768, 4096, false},
		{4096, 32768, 4097, true},
		{4096, 32768, 32768, true},
		{4096, 32768, 32769, false},
		{4096, 0, 8192, false},
		{4096, 2048, 3000, false},
		{4096, 4096, 4097, false},
	} {
		if got := (&limits{eager: tt.eager, stream: tt.stream}).streamable(tt.n); got != tt.want {
			t.Errorf("eager %d, stream %d: streamable(%d) = %v, want %v", tt.eager, tt.stream, tt.n, got, tt.want)
		}
	}
	// A stream's message up to the stream limit skips the rget band: a
	// rendezvous (the send completes on the ACK) whose first fragment
	// carries all of it; out of credit it gets no chunk. A larger one is
	// read, and says it is part of a stream (its read may be split from
	// limits.splitStream).
	band := testLimits
	band.rgetMin, band.stream = 4097, 32768
	for _, tt := range []struct {
		n              int
		credit, stream bool
		want           sendPlan
	}{
		{9000, true, true, sendPlan{protoRndv, 9000, 9000, false, false, false, 0, false}},
		{9000, true, false, sendPlan{protoRget, 0, 0, false, false, false, 0, false}},
		{9000, false, true, sendPlan{protoRndv, 0, 0, false, false, false, 0, false}},
		{32768, true, true, sendPlan{protoRndv, 32768, 32768, false, false, false, 0, false}},
		{32769, true, true, sendPlan{protoRget, 0, 0, false, true, false, 0, false}},
		{100000, true, true, sendPlan{protoRget, 0, 0, false, true, false, 0, false}},
		{100000, true, false, sendPlan{protoRget, 0, 0, false, false, false, 0, false}},
		{4096, true, true, sendPlan{protoEager, 4096, 4096, false, false, false, 0, false}},
	} {
		if got := planSend(tt.n, &band, tt.credit, tt.stream, false); got != tt.want {
			t.Errorf("planSend(%d, credit=%v, stream=%v) = %+v, want %+v", tt.n, tt.credit, tt.stream, got, tt.want)
		}
	}
}

// TestPipeable: the pipeline band is above the stream band (and the eager
// limit) up to pipeMax, inside the rget band, and empty when pipeMax is 0;
// a stream's message in it goes by the pipeline (its first fragment
// carries the first chunk) only when pipe says so, else it is read as
// part of a stream; pipe means nothing outside the band.
func TestPipeable(t *testing.T) {
	l := testLimits
	l.rgetMin, l.stream, l.pipeMax = 4097, 16384, 1<<20
	for _, tt := range []struct {
		stream, pipeMax, n int
		want               bool
	}{
		{16384, 1 << 20, 16384, false}, {16384, 1 << 20, 16385, true}, {16384, 1 << 20, 1 << 20, true},
		{16384, 1 << 20, 1<<20 + 1, false}, {16384, 0, 65536, false}, {0, 1 << 20, 4096, false}, {0, 1 << 20, 4097, true},
	} {
		l.stream, l.pipeMax = tt.stream, tt.pipeMax
		if got := l.pipeable(tt.n); got != tt.want {
			t.Errorf("stream %d, pipeMax %d: pipeable(%d) = %v, want %v", tt.stream, tt.pipeMax, tt.n, got, tt.want)
		}
	}
	l.stream, l.pipeMax, l.rgetMin = 16384, 1<<20, 0 // no rget band: nothing to choose
	if l.pipeable(65536) {
		t.Error("pipeable outside the rget band")
	}
	l.rgetMin = 4097
	for _, tt := range []struct {
		n                    int
		credit, stream, pipe bool
		want                 sendPlan
	}{
		{65536, true, true, true, sendPlan{protoRndv, l.firstChunk, l.firstChunk, false, false, false, 0, false}},
		{65536, true, true, false, sendPlan{protoRget, 0, 0, false, true, false, 0, false}},
		{65536, true, false, true, sendPlan{protoRget, 0, 0, false, false, false, 0, false}},   // no stream: pipe ignored
		{1<<20 + 1, true, true, true, sendPlan{protoRget, 0, 0, false, true, false, 0, false}}, // above the band
		{65536, false, true, true, sendPlan{protoRndv, 0, 0, false, false, false, 0, false}},   // out of credit: no chunk
		{9000, true, true, true, sendPlan{protoRndv, 9000, 9000, false, false, false, 0, false}},
	} {
		if got := planSend(tt.n, &l, tt.credit, tt.stream, tt.pipe); got != tt.want {
			t.Errorf("planSend(%d, credit=%v, stream=%v, pipe=%v) = %+v, want %+v", tt.n, tt.credit, tt.stream, tt.pipe, got, tt.want)
		}
	}
}

// TestPathEstExploreScales: the slower path is tried again only once its
// last measurement is older than explore and than exploreWindows times
// that measurement's duration.
func TestPathEstExploreScales(t *testing.T) {
	const explore = 1000
	var e pathEst
	e = e.note(pathRead, 100, 1000, 0)      // 0.1 ns/B, took 100 ns
	e = e.note(pathPipe, 10_000, 1000, 100) // 10 ns/B, took 10 us: slower
	for _, tt := range []struct {
		now  int64
		read bool
	}{
		{5000, true},                        // older than explore, not than 50 x 10 us
		{100 + exploreWindows*10_000, true}, // exactly that old: not yet
		{101 + exploreWindows*10_000, false},
	} {
		if read, _ := e.pick(tt.now, explore, pathRead); read != tt.read {
			t.Errorf("at %d: pick = read %v, want %v", tt.now, read, tt.read)
		}
	}
	if e.last != [2]int64{10_000, 100} {
		t.Errorf("last = %v, want the two durations noted", e.last)
	}
}

func TestRgetClass(t *testing.T) {
	for _, tt := range []struct{ n, want int }{{1, 1}, {32768, 16}, {65535, 16}, {65536, 17}, {1 << 62, rgetClasses - 1}} {
		if got := rgetClass(tt.n); got != tt.want {
			t.Errorf("rgetClass(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

// carriable is the stream band inside the rget band, with
// up to Config.SerialCarryMax (limits.carry) only.
func TestCarriable(t *testing.T) {
	l := limits{eager: 4096, firstChunk: 32768, maxSend: 32768, rget: true, rgetMin: 4096, stream: 16384, carry: 16384}
	narrow := l
	narrow.rgetMin = 8192
	off := l
	off.carry = 0
	for _, tt := range []struct {
		l    limits
		n    int
		want bool
	}{
		{l, 4096, false}, // eager
		{l, 4097, true},
		{l, 16384, true},
		{l, 16385, false},
		{narrow, 5000, false}, // below the rget band: the pipeline, not a read to replace
		{narrow, 8192, true},
		{off, 8192, false},
	} {
		if got := tt.l.carriable(tt.n); got != tt.want {
			t.Errorf("carriable(%d) with carry %d, rget from %d = %v, want %v", tt.n, tt.l.carry, tt.l.rgetMin, got, tt.want)
		}
	}
}

// carryMax bounds a serial send's carry by SerialCarryMax, the BTL's max
// send size and StreamLimit, and is 0 without single copy.
func TestCarryMax(t *testing.T) {
	on := btl.Attributes{SingleCopy: true, MaxSendSize: 32 << 10}
	for _, tt := range []struct {
		carry, stream int
		a             btl.Attributes
		want          int
	}{
		{16 << 10, 16 << 10, on, 16 << 10},
		{64 << 10, 64 << 10, on, 32 << 10}, // the max send size
		{32 << 10, 16 << 10, on, 16 << 10}, // the stream limit: not carried above it
		{16 << 10, 16 << 10, btl.Attributes{MaxSendSize: 32 << 10}, 0},
		{0, 16 << 10, on, 0},
	} {
		cfg := Config{SerialCarryMax: tt.carry, StreamLimit: tt.stream}
		if got := carryMax(cfg, tt.a); got != tt.want {
			t.Errorf("carryMax(serial_carry_max %d, stream_limit %d, %+v) = %d, want %d", tt.carry, tt.stream, tt.a, got, tt.want)
		}
	}
}

// splittable is the splitsInStream band above the stream band, with
// Config.SerialSplit only.
func TestSplittable(t *testing.T) {
	l := limits{eager: 4096, firstChunk: 32768, maxSend: 32768, rget: true, rgetMin: 4096, stream: 16384,
		splitMin: 65536, splitStream: 32768, serialSplit: true}
	off := l
	off.serialSplit = false
	wide := l
	wide.stream = 32768 // a stream carries 32 KiB: not a read to split
	noSplit := l
	noSplit.splitMin, noSplit.splitStream = 0, 0 // yielding
	for _, tt := range []struct {
		name string
		l    limits
		n    int
		want bool
	}{
		{"below splitStream", l, 32767, false},
		{"at splitStream", l, 32768, true},
		{"below splitMin", l, 65535, true},
		{"at splitMin: split anyway", l, 65536, false},
		{"off", off, 32768, false},
		{"in the stream band", wide, 32768, false},
		{"above the stream band", wide, 32769, true},
		{"no split at all", noSplit, 40000, false},
	} {
		if got := tt.l.splittable(tt.n); got != tt.want {
			t.Errorf("%s: splittable(%d) = %v, want %v", tt.name, tt.n, got, tt.want)
		}
	}
}

// TestSplitsRead: a read is shared with the sender from splitMin, or from
// splitStream for a stream's message; never with the threshold 0.
func TestSplitsRead(t *testing.T) {
	l := limits{splitMin: 64 << 10, splitStream: 32 << 10}
	for _, tt := range []struct {
		l      limits
		rest   int
		stream bool
		want   bool
	}{
		{l, 64<<10 - 1, false, false},
		{l, 64 << 10, false, true},
		{l, 32 << 10, false, false},
		{l, 32<<10 - 1, true, false},
		{l, 32 << 10, true, true},
		{l, 0, true, false},
		{limits{}, 1 << 30, false, false},
		{limits{splitMin: 64 << 10}, 1 << 30, true, false},
	} {
		if got := tt.l.splitsRead(tt.rest, tt.stream); got != tt.want {
			t.Errorf("splitMin %d, splitStream %d: splitsRead(%d, stream %v) = %v, want %v", tt.l.splitMin, tt.l.splitStream, tt.rest, tt.stream, got, tt.want)
		}
	}
}
