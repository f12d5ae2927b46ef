package btltest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/btl"
)

// NewPair builds two modules that reach each other: a sends to bRank and b
// to aRank. For a loopback BTL a == b and aRank == bRank. The function
// registers its own cleanup.
type NewPair func(t *testing.T) (a, b btl.Module, aRank, bRank int)

// Run runs every conformance test against the BTL built by newPair.
func Run(t *testing.T, newPair NewPair) {
	t.Run("Attributes", func(t *testing.T) { testAttributes(t, newPair) })
	t.Run("OrderAndSizes", func(t *testing.T) { testOrderAndSizes(t, newPair) })
	t.Run("PendingKeepsOrder", func(t *testing.T) { testPending(t, newPair) })
	t.Run("TrySend", func(t *testing.T) { testTrySend(t, newPair) })
	t.Run("ConcurrentSenders", func(t *testing.T) { testConcurrent(t, newPair) })
	t.Run("SendFromCallback", func(t *testing.T) { testSendFromCallback(t, newPair) })
	t.Run("BadArguments", func(t *testing.T) { testBadArguments(t, newPair) })
	t.Run("SleepWake", func(t *testing.T) { testSleepWake(t, newPair) })
	t.Run("SenderWakesSleeper", func(t *testing.T) { testSenderWakes(t, newPair) })
	t.Run("ReadFrom", func(t *testing.T) { testReadFrom(t, newPair) })
}

// Timeout bounds every wait of the suite; reaching it is a failure (a hang),
// not a performance measurement.
const Timeout = 20 * time.Second

// pump progresses both modules until done() or Timeout.
func pump(t testing.TB, a, b btl.Module, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for i := 0; !done(); i++ {
		a.Progress()
		if b != a {
			b.Progress()
		}
		if i%1024 == 0 && time.Now().After(deadline) {
			t.Fatalf("no progress within %v", Timeout)
		}
	}
}

// completion records SendDone calls.
type completion struct {
	calls atomic.Int32
	err   atomic.Value
}

func (c *completion) SendDone(err error) {
	c.calls.Add(1)
	if err != nil {
		c.err.Store(err)
	}
}

// fill writes the pattern of message seq into b.
func fill(b []byte, seq uint64) {
	for i := range b {
		b[i] = byte(seq*131 + uint64(i)*7 + 1)
	}
}

// makeMsg builds message seq of a stream: hdr = 8-byte sequence number +
// filler, payload = a pattern derived from the sequence number.
func makeMsg(seq uint64, hdrLen, payLen int) (hdr, payload []byte) {
	hdr = make([]byte, max(8, hdrLen))
	binary.LittleEndian.PutUint64(hdr, seq)
	fill(hdr[8:], seq^0xff)
	payload = make([]byte, payLen)
	fill(payload, seq)
	return hdr[:max(8, hdrLen)], payload
}

func checkMsg(data []byte, hdrLen, payLen int) (uint64, error) {
	want := max(8, hdrLen) + payLen
	if len(data) != want {
		return 0, fmt.Errorf("got %d bytes, want %d", len(data), want)
	}
	seq := binary.LittleEndian.Uint64(data)
	h, p := makeMsg(seq, hdrLen, payLen)
	if !bytes.Equal(data[:len(h)], h) || !bytes.Equal(data[len(h):], p) {
		return seq, fmt.Errorf("message %d: content differs", seq)
	}
	return seq, nil
}

func testAttributes(t *testing.T, newPair NewPair) {
	a, b, ar, br := newPair(t)
	at := a.Attributes()
	if at.EagerLimit < 0 || at.EagerLimit > at.MaxSendSize || at.MaxSendSize <= 0 {
		t.Errorf("Attributes %+v: want 0 ≤ EagerLimit ≤ MaxSendSize, MaxSendSize > 0", at)
	}
	if !a.Reachable(br) || !b.Reachable(ar) {
		t.Errorf("Reachable(%d) = %v, Reachable(%d) = %v; want both true", br, a.Reachable(br), ar, b.Reachable(ar))
	}
	if a.Reachable(-1) || a.Reachable(1<<20) {
		t.Error("Reachable of an out-of-range rank is true")
	}
	if a.Name() == "" {
		t.Error("empty Name")
	}
}

// sizes returns the payload sizes to test: edges around the inline area,
// the eager limit and the max send size.
func sizes(at btl.Attributes) []int {
	s := []int{0, 1, 7, 8, 31, 32, 63, 64, 87, 88, 89, 95, 96, 97, 100, 127, 128, 1000, 4095, 4096, 4097,
		at.EagerLimit - 1, at.EagerLimit, at.EagerLimit + 1, at.MaxSendSize - 1, at.MaxSendSize}
	out := s[:0]
	for _, n := range s {
		if n >= 0 && n <= at.MaxSendSize {
			out = append(out, n)
		}
	}
	return out
}

// planned is one message of testOrderAndSizes.
type planned struct {
	tag            btl.Tag
	hdrLen, payLen int
}

// testOrderAndSizes sends every size of interest with every header length
// under every PML tag, and checks that each arrives once, intact, in send
// order, and that SendDone is called exactly for the sends that kept the
// payload.
func testOrderAndSizes(t *testing.T, newPair NewPair) {
	a, b, ar, br := newPair(t)
	var plan []planned
	for _, n := range sizes(a.Attributes()) {
		for _, h := range []int{0, 8, 16, btl.MaxHeader} {
			for tag := btl.TagPMLMatch; tag < btl.NumTags; tag++ {
				plan = append(plan, planned{tag, h, n})
			}
		}
	}
	got, failed := receivePlan(b, ar, plan)
	comps := make([]completion, len(plan))
	copiedFlags := make([]bool, len(plan))
	for i, s := range plan {
		hdr, pay := makeMsg(uint64(i), s.hdrLen, s.payLen)
		copied, err := a.Send(br, s.tag, hdr, pay, &comps[i])
		if err != nil {
			t.Fatalf("Send #%d %+v: %v", i, s, err)
		}
		copiedFlags[i] = copied
		// Send copies hdr always, and payload when copied: scribble on them.
		fill(hdr, 0xdead)
		if copied {
			fill(pay, 0xbeef)
		}
		if i%16 == 15 {
			a.Progress()
			if b != a {
				b.Progress()
			}
		}
	}
	pump(t, a, b, func() bool { return len(*got) == len(plan) || failed.Load() != nil })
	if f := failed.Load(); f != nil {
		t.Fatal(f)
	}
	for i, seq := range *got {
		if seq != uint64(i) {
			t.Fatalf("message %d arrived as number %d: order broken", seq, i)
		}
	}
	checkCompletions(t, a, b, comps, copiedFlags)
}

// receivePlan registers b's handlers for every tag: each message from ar
// must be the next one of plan; its sequence number is appended to got,
// and the first fault is stored in failed.
func receivePlan(b btl.Module, ar int, plan []planned) (got *[]uint64, failed *atomic.Value) {
	got, failed = new([]uint64), new(atomic.Value)
	for tag := btl.Tag(0); tag < btl.NumTags; tag++ {
		b.Register(tag, func(src int, data []byte) {
			if src != ar {
				failed.Store(fmt.Sprintf("src %d, want %d", src, ar))
			}
			i := len(*got)
			if i >= len(plan) {
				failed.Store("more messages than sent")
				return
			}
			if plan[i].tag != tag {
				failed.Store(fmt.Sprintf("message %d under tag %d, sent under %d", i, tag, plan[i].tag))
			}
			seq, err := checkMsg(data, plan[i].hdrLen, plan[i].payLen)
			if err != nil {
				failed.Store(fmt.Sprintf("message %d (%+v): %v", i, plan[i], err))
			}
			*got = append(*got, seq)
		})
	}
	return got, failed
}

// checkCompletions progresses until every send that kept its payload has
// completed, then checks that SendDone ran once for each of those and
// never for the others.
func checkCompletions(t *testing.T, a, b btl.Module, comps []completion, copied []bool) {
	pump(t, a, b, func() bool {
		for i := range comps {
			if !copied[i] && comps[i].calls.Load() == 0 {
				return false
			}
		}
		return true
	})
	for i := range comps {
		want := int32(0)
		if !copied[i] {
			want = 1
		}
		if c := comps[i].calls.Load(); c != want {
			t.Errorf("message %d (copied=%v): SendDone called %d times, want %d", i, copied[i], c, want)
		}
	}
}

// testPending sends far more than any FIFO or free list holds before the
// receiver progresses: every Send must be accepted and everything must
// arrive in order; by-reference sends complete exactly once.
func testPending(t *testing.T, newPair NewPair) {
	a, b, _, br := newPair(t)
	at := a.Attributes()
	const count = 3000
	lens := []int{0, 50, 200, at.EagerLimit, at.MaxSendSize}
	var got atomic.Int64
	var failed atomic.Value
	b.Register(btl.TagPMLFrag, func(src int, data []byte) {
		i := got.Load()
		seq, err := checkMsg(data, 8, lens[i%int64(len(lens))])
		if err != nil || seq != uint64(i) {
			failed.Store(fmt.Sprintf("message %d: seq %d, %v", i, seq, err))
		}
		got.Add(1)
	})
	comps := make([]completion, count)
	bufs := make([][]byte, count)
	refs := 0
	for i := 0; i < count; i++ {
		hdr, pay := makeMsg(uint64(i), 8, lens[i%len(lens)])
		copied, err := a.Send(br, btl.TagPMLFrag, hdr, pay, &comps[i])
		if err != nil {
			t.Fatalf("Send #%d: %v", i, err)
		}
		if !copied {
			refs++
			bufs[i] = pay // must stay untouched until SendDone
		} else {
			fill(pay, 1)
		}
		if a == b && i%64 == 63 {
			a.Progress() // loopback: the sender is the receiver
		}
	}
	t.Logf("%d of %d sends went by reference", refs, count)
	pump(t, a, b, func() bool { return got.Load() == count || failed.Load() != nil })
	if f := failed.Load(); f != nil {
		t.Fatal(f)
	}
	for i := range comps {
		c := comps[i].calls.Load()
		if (bufs[i] != nil && c != 1) || (bufs[i] == nil && c != 0) {
			t.Fatalf("message %d: SendDone called %d times (by reference: %v)", i, c, bufs[i] != nil)
		}
		if e := comps[i].err.Load(); e != nil {
			t.Fatalf("message %d: SendDone(%v)", i, e)
		}
	}
}

// testTrySend (a btl.TrySender only): a burst with the receiver not
// polling, each message tried first and sent with Send when TrySend
// declines (as the PML does), arrives whole, once and in order; a message
// TrySend took was copied (its buffer is overwritten at once) and never
// calls back; small ones are always taken.
func testTrySend(t *testing.T, newPair NewPair) {
	a, b, _, br := newPair(t)
	ts, ok := a.(btl.TrySender)
	if !ok {
		t.Skip("not a btl.TrySender")
	}
	at := a.Attributes()
	const count = 3000
	lens := []int{0, 50, 200, at.EagerLimit}
	var got atomic.Int64
	var failed atomic.Value
	b.Register(btl.TagPMLFrag, func(src int, data []byte) {
		i := got.Load()
		seq, err := checkMsg(data, 16, lens[i%int64(len(lens))])
		if err != nil || seq != uint64(i) {
			failed.Store(fmt.Sprintf("message %d: seq %d, %v", i, seq, err))
		}
		got.Add(1)
	})
	comps := make([]completion, count)
	tried, declined := 0, 0
	for i := 0; i < count; i++ {
		hdr, pay := makeMsg(uint64(i), 16, lens[i%len(lens)])
		sent, err := ts.TrySend(br, btl.TagPMLFrag, btl.Header16Of(hdr), pay)
		if err != nil {
			t.Fatalf("TrySend #%d: %v", i, err)
		}
		if sent {
			tried++
			fill(hdr, 1)
			fill(pay, 1)
		} else {
			if len(pay) <= 50 {
				t.Fatalf("TrySend #%d of %d bytes declined", i, len(pay))
			}
			declined++
			if copied, err := a.Send(br, btl.TagPMLFrag, hdr, pay, &comps[i]); err != nil {
				t.Fatalf("Send #%d: %v", i, err)
			} else if copied {
				fill(pay, 1)
			}
		}
		if a == b && i%64 == 63 {
			a.Progress() // loopback: the sender is the receiver
		}
	}
	t.Logf("%d of %d messages taken by TrySend, %d declined", tried, count, declined)
	pump(t, a, b, func() bool { return got.Load() == count || failed.Load() != nil })
	if f := failed.Load(); f != nil {
		t.Fatal(f)
	}
	if tried == 0 {
		t.Fatal("TrySend took no message")
	}
}

// testConcurrent: several goroutines send streams at once; each stream
// arrives complete and in order.
func testConcurrent(t *testing.T, newPair NewPair) {
	a, b, _, br := newPair(t)
	const senders, each = 4, 500
	next := make([]uint64, senders)
	var total atomic.Int64
	var failed atomic.Value
	b.Register(btl.TagPMLMatch, func(src int, data []byte) {
		if len(data) < 16 {
			failed.Store("short message")
			return
		}
		g := binary.LittleEndian.Uint64(data[8:])
		seq := binary.LittleEndian.Uint64(data)
		if g >= senders || seq != next[g] {
			failed.Store(fmt.Sprintf("sender %d: got %d, want %d", g, seq, next[g]))
			return
		}
		next[g]++
		total.Add(1)
	})
	var wg sync.WaitGroup
	for g := 0; g < senders; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hdr := make([]byte, 16)
			for i := 0; i < each; i++ {
				binary.LittleEndian.PutUint64(hdr, uint64(i))
				binary.LittleEndian.PutUint64(hdr[8:], uint64(g))
				pay := make([]byte, (i*37)%300)
				var c completion
				if _, err := a.Send(br, btl.TagPMLMatch, hdr, pay, &c); err != nil {
					failed.Store(err.Error())
					return
				}
				a.Progress() // concurrent Progress callers must be safe
			}
		}()
	}
	pump(t, a, b, func() bool { return total.Load() == senders*each || failed.Load() != nil })
	wg.Wait()
	if f := failed.Load(); f != nil {
		t.Fatal(f)
	}
}

func testSendFromCallback(t *testing.T, newPair NewPair) {
	a, b, ar, br := newPair(t)
	var replies atomic.Int32
	b.Register(btl.TagPMLRndv, func(src int, data []byte) {
		if _, err := b.Send(ar, btl.TagPMLAck, data[:8], nil, nil); err != nil {
			t.Errorf("Send from a callback: %v", err)
		}
	})
	a.Register(btl.TagPMLAck, func(src int, data []byte) { replies.Add(1) })
	for i := 0; i < 100; i++ {
		hdr, pay := makeMsg(uint64(i), 8, 10)
		if _, err := a.Send(br, btl.TagPMLRndv, hdr, pay, nil); err != nil {
			t.Fatal(err)
		}
	}
	pump(t, a, b, func() bool { return replies.Load() == 100 })
}

func testBadArguments(t *testing.T, newPair NewPair) {
	a, _, _, br := newPair(t)
	max := a.Attributes().MaxSendSize
	cases := []struct {
		name         string
		peer         int
		tag          btl.Tag
		hdr, payload int
	}{
		{"header too long", br, btl.TagPMLMatch, btl.MaxHeader + 1, 0},
		{"payload too long", br, btl.TagPMLMatch, 8, max + 1},
		{"unknown tag", br, btl.NumTags, 8, 0},
		{"negative rank", -1, btl.TagPMLMatch, 8, 0},
	}
	for _, c := range cases {
		if _, err := a.Send(c.peer, c.tag, make([]byte, c.hdr), make([]byte, c.payload), nil); err == nil {
			t.Errorf("%s: Send succeeded", c.name)
		}
	}
}

// sleepReturns runs Sleep(d) in a goroutine and fails if it has not
// returned within Timeout.
func sleepReturns(t *testing.T, m btl.Sleeper, d time.Duration, before func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { m.Sleep(d); close(done) }()
	if before != nil {
		before()
	}
	select {
	case <-done:
	case <-time.After(Timeout):
		t.Fatalf("Sleep(%v) did not return within %v", d, Timeout)
	}
}

// sleepers returns a and b as Sleepers, or skips a module that is not one.
func sleepers(t *testing.T, a, b btl.Module) (btl.Sleeper, btl.Sleeper) {
	t.Helper()
	as, ok1 := a.(btl.Sleeper)
	bs, ok2 := b.(btl.Sleeper)
	if !ok1 || !ok2 {
		t.Skipf("%s is not a btl.Sleeper", a.Name())
	}
	return as, bs
}

func testSleepWake(t *testing.T, newPair NewPair) {
	m, n, _, _ := newPair(t)
	a, _ := sleepers(t, m, n)
	// Wake before Sleep: the next Sleep returns at once.
	a.Wake()
	sleepReturns(t, a, time.Hour, nil)
	// Wake during Sleep (or before it starts: either way it must return).
	sleepReturns(t, a, 0, func() { time.Sleep(time.Millisecond); a.Wake() })
	// A timeout alone ends a Sleep.
	sleepReturns(t, a, time.Millisecond, nil)
}

func testSenderWakes(t *testing.T, newPair NewPair) {
	a, b, _, br := newPair(t)
	_, bs := sleepers(t, a, b)
	var got atomic.Int32
	b.Register(btl.TagPMLCtl, func(int, []byte) { got.Add(1) })
	// Work already visible: Sleep returns at once.
	if _, err := a.Send(br, btl.TagPMLCtl, []byte("x"), nil, nil); err != nil {
		t.Fatal(err)
	}
	sleepReturns(t, bs, 0, nil)
	pump(t, a, b, func() bool { return got.Load() == 1 })
	// A sender wakes a receiver already asleep (or about to be).
	sleepReturns(t, bs, 0, func() {
		time.Sleep(2 * time.Millisecond)
		if _, err := a.Send(br, btl.TagPMLCtl, []byte("y"), make([]byte, 500), nil); err != nil {
			t.Error(err)
		}
	})
	pump(t, a, b, func() bool { return got.Load() == 2 })
}

func testReadFrom(t *testing.T, newPair NewPair) {
	a, b, ar, _ := newPair(t)
	if !b.Attributes().SingleCopy {
		t.Skip("single copy not available")
	}
	src := make([]byte, 300000)
	fill(src, 42)
	dst := make([]byte, len(src))
	if err := b.ReadFrom(ar, addr(src), dst); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, dst) {
		t.Fatal("ReadFrom copied different bytes")
	}
	runtime.KeepAlive(src)
	_ = a
}
