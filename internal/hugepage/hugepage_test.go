package hugepage

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fake records the regions a Collapser's worker collapses and answers
// with the errors queued for them.
type fake struct {
	mu    sync.Mutex
	calls []uintptr
	errs  []error // answered in order; nil after
	seen  chan uintptr
}

func (f *fake) collapse(a uintptr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, a)
	var err error
	if len(f.errs) > 0 {
		err, f.errs = f.errs[0], f.errs[1:]
	}
	f.seen <- a
	return err
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func newFake(t *testing.T, after int, errs ...error) (*Collapser, *fake) {
	f := &fake{errs: errs, seen: make(chan uintptr, 1024)}
	c := New(Config{After: after})
	c.collapse = f.collapse
	t.Cleanup(c.Close)
	return c, f
}

// rng is an address range to offer (never dereferenced: offers only look
// at addresses).
type rng struct {
	a uintptr
	n int
}

func at(a uintptr, n int) rng { return rng{a, n} }

// offerRange is Offer for the range r, not quiet (other offered buffers
// in flight).
func (c *Collapser) offerRange(r rng) { c.offerAt(r, false) }

// offerQuiet is Offer for the range r with no other offered buffer in
// flight.
func (c *Collapser) offerQuiet(r rng) { c.offerAt(r, true) }

func (c *Collapser) offerAt(r rng, quiet bool) {
	if c == nil || c.after == 0 || r.n < MinOffer || c.off.Load() {
		return
	}
	c.offer(r.a, r.n, quiet)
}

// wait waits for k collapses in all.
func (f *fake) wait(t *testing.T, k int) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for f.count() < k {
		select {
		case <-f.seen:
		case <-deadline:
			t.Fatalf("%d collapses, want %d", f.count(), k)
		}
	}
}

// settle waits until the worker has recorded its last result.
func settle(c *Collapser) {
	for {
		c.mu.Lock()
		busy := false
		for _, r := range c.regions {
			busy = busy || r.state == queued
		}
		c.mu.Unlock()
		if !busy {
			return
		}
		runtime.Gosched()
	}
}

const base = uintptr(64 << 30) // a 2 MiB-aligned address range the tests count offers in

func TestOfferCountsRegions(t *testing.T) {
	for _, tt := range []struct {
		name    string
		start   uintptr
		n       int
		offers  int
		regions int // collapsed
	}{
		{"below the count", base, 1 << 20, 3, 0},
		{"at the count", base, 1 << 20, 4, 1},
		{"many more offers: once", base, 1 << 20, 40, 1},
		{"small buffers are not counted", base, MinOffer - 1, 40, 0},
		{"a buffer across a region boundary: both", base + RegionSize - 4096, 8192 + MinOffer, 4, 2},
		{"4 MiB at an odd page: three regions", base + 4096, 4 << 20, 4, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, f := newFake(t, 4)
			for range tt.offers {
				c.offerRange(at(tt.start, tt.n))
			}
			f.wait(t, tt.regions)
			c.Close()
			if got := f.count(); got != tt.regions {
				t.Errorf("%d collapses, want %d", got, tt.regions)
			}
			for _, a := range f.calls {
				if a%RegionSize != 0 || a+RegionSize <= tt.start || a >= tt.start+uintptr(tt.n) {
					t.Errorf("collapsed %#x: not a region that [%#x, +%d) overlaps", a, tt.start, tt.n)
				}
			}
		})
	}
}

// TestOfferRetriesBusy: the first attempt is the worker's; after the
// kernel refused it as busy, offers made while other offered buffers are
// in flight never try again (a peer is reading), and quiet ones try
// again, in the offering goroutine, after 4, 8, 16, ... offers since the
// last try, maxAttempts tries in all.
func TestOfferRetriesBusy(t *testing.T) {
	busy := make([]error, maxAttempts+1)
	for i := range busy {
		busy[i] = unix.EAGAIN
	}
	busy[1] = unix.EBUSY
	c, f := newFake(t, 2, busy...)
	buf := at(base, 1<<20)
	for i := 1; i <= 1<<(maxAttempts+2); i++ {
		c.offerRange(buf)
		settle(c)
		if got, want := f.count(), min(i/2, 1); got != want {
			t.Fatalf("offer %d (none quiet): %d attempts, want %d: the first at offer 2, then none until a quiet offer", i, got, want)
		}
	}
	// Quiet offers from here on: the region is long due, so the first
	// tries at once; then after 2<<k offers since the last try.
	var tries []int
	for i := 1; i <= 1<<(maxAttempts+2); i++ {
		before := f.count()
		c.offerQuiet(buf)
		if f.count() > before { // no settle: a quiet retry is made before Offer returns
			tries = append(tries, i)
		}
	}
	if len(tries) != maxAttempts-1 {
		t.Fatalf("%d quiet attempts (at quiet offers %v), want %d: then the region is given up", len(tries), tries, maxAttempts-1)
	}
	want := 1
	for k, i := range tries {
		if i != want {
			t.Errorf("quiet attempt %d at quiet offer %d, want %d (offers %v)", k+1, i, want, tries)
		}
		want += 2 << (k + 2)
	}
	if _, ok, refused := c.Stats(); ok != 0 || refused != 0 {
		t.Errorf("Stats = %d collapsed, %d refused; want 0, 0 (busy is not refused)", ok, refused)
	}
}

// TestQuietFirstAttemptIsTheWorkers: a region's first attempt goes to the
// worker even from a quiet offer (the offer that makes it due does not
// wait), and a quiet offer before a busy region is due again does not try.
func TestQuietFirstAttemptIsTheWorkers(t *testing.T) {
	c, f := newFake(t, 2, unix.EAGAIN)
	buf := at(base, 1<<20)
	c.offerQuiet(buf)
	c.offerQuiet(buf) // due: queued for the worker
	c.mu.Lock()
	state := c.regions[base].state
	c.mu.Unlock()
	if state != queued {
		t.Fatalf("region state %d after the due quiet offer, want queued (%d) for the worker", state, queued)
	}
	f.wait(t, 1)
	settle(c)
	for i := 1; i < 4; i++ { // due again at the 4th offer since the refusal
		c.offerQuiet(buf)
	}
	if f.count() != 1 {
		t.Fatalf("%d attempts after 3 quiet offers since the refusal, want 1 (due at 4)", f.count())
	}
	c.offerQuiet(buf)
	if f.count() != 2 {
		t.Fatalf("%d attempts after the 4th quiet offer, want 2", f.count())
	}
}

// TestCloseWaitsForInlineCollapse: Close returns only after a collapse an
// offering goroutine is making has ended.
func TestCloseWaitsForInlineCollapse(t *testing.T) {
	c, f := newFake(t, 1, unix.EAGAIN)
	buf := at(base, 1<<20)
	c.offerRange(buf)
	f.wait(t, 1)
	settle(c) // refused: the next quiet offer after 2 more tries inline
	release := make(chan struct{})
	started := make(chan struct{})
	c.collapse = func(a uintptr) error {
		close(started)
		<-release
		return f.collapse(a)
	}
	c.offerRange(buf)
	go c.offerQuiet(buf)
	<-started
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while an offering goroutine was collapsing")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return after the inline collapse ended")
	}
	if f.count() != 2 {
		t.Errorf("%d collapses, want 2", f.count())
	}
}

func TestOfferTurnsOffWhenUnavailable(t *testing.T) {
	errs := make([]error, offFailures)
	for i := range errs {
		errs[i] = unix.EINVAL
	}
	c, f := newFake(t, 1, errs...)
	for i := range offFailures + 3 {
		c.offerRange(at(base+uintptr(i)*RegionSize, 1<<20))
		settle(c)
	}
	if got := f.count(); got != offFailures {
		t.Errorf("%d collapses tried, want %d: the Collapser should turn off after %d refusals", got, offFailures, offFailures)
	}
	if !c.off.Load() {
		t.Error("still on after the kernel refused every collapse")
	}
}

func TestOfferStaysOnAfterSuccess(t *testing.T) {
	// A refusal for one region (memory that is not anonymous) after a
	// success elsewhere does not turn huge pages off.
	c, f := newFake(t, 1, nil, unix.EINVAL, unix.EINVAL, unix.EINVAL, unix.EINVAL, unix.EINVAL)
	for i := range 7 {
		c.offerRange(at(base+uintptr(i)*RegionSize, 1<<20))
		settle(c)
	}
	if got := f.count(); got != 7 {
		t.Errorf("%d collapses tried, want 7", got)
	}
	if _, ok, refused := c.Stats(); ok != 2 || refused != 5 {
		t.Errorf("Stats = %d, %d; want 2 collapsed, 5 refused", ok, refused)
	}
}

func TestOffAndClosed(t *testing.T) {
	var zero Collapser
	zero.offerRange(at(base, 1<<20)) // no panic, nothing counted
	var nilc *Collapser
	nilc.offerRange(at(base, 1<<20))
	nilc.Close()

	c, f := newFake(t, 0)
	for range 10 {
		c.offerRange(at(base, 1<<20))
	}
	c2, f2 := newFake(t, 1)
	c2.Close()
	c2.Close() // twice is fine
	c2.offerRange(at(base, 1<<20))
	time.Sleep(10 * time.Millisecond)
	if f.count() != 0 || f2.count() != 0 {
		t.Errorf("collapses with After 0 (%d) or after Close (%d)", f.count(), f2.count())
	}
}

func TestCloseStopsWorker(t *testing.T) {
	before := runtime.NumGoroutine()
	c, f := newFake(t, 1)
	c.offerRange(at(base, 1<<20))
	f.wait(t, 1)
	c.Close()
	for i := 0; runtime.NumGoroutine() > before; i++ {
		if i > 1000 {
			t.Fatalf("%d goroutines after Close, %d before: the worker leaked", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSettledFastPath(t *testing.T) {
	c, f := newFake(t, 2)
	buf := at(base+4096, 3<<20) // two regions
	for range 2 {
		c.offerRange(buf)
	}
	f.wait(t, 2)
	settle(c)
	c.offerRange(buf) // finds both settled and records the span
	if d := c.settled.Load(); d == nil || d.lo != base || d.hi != base+2*RegionSize {
		t.Fatalf("settled span %+v, want [%#x, %#x)", d, base, base+2*RegionSize)
	}
	c.mu.Lock() // an offer within the span must not need the lock
	done := make(chan struct{})
	go func() { c.offerRange(at(base+8192, 1<<20)); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("an offer within the settled span waited for the lock")
	}
	c.mu.Unlock()
}

// TestCollapseForReal collapses a region of this process's heap with the
// kernel's MADV_COLLAPSE and checks that the memory reads the same and,
// where the kernel reports it, is now backed by a huge page.
func TestCollapseForReal(t *testing.T) {
	buf := make([]byte, 3*RegionSize)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	want := bytes.Clone(buf)
	c := New(Config{After: 1})
	defer c.Close()
	c.Offer(buf, false)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, ok, refused := c.Stats()
		if ok > 0 {
			break
		}
		if refused > 0 || c.off.Load() {
			t.Skipf("the kernel refuses MADV_COLLAPSE here (transparent huge pages off or unsupported): %d refused", refused)
		}
		if time.Now().After(deadline) {
			t.Skip("no collapse within 10 s (no free huge pages?)")
		}
		time.Sleep(time.Millisecond)
	}
	if !bytes.Equal(buf, want) {
		t.Fatal("the buffer changed when its regions were collapsed")
	}
	if kb := anonHugeKB(t, uintptr(unsafe.Pointer(&buf[0])), len(buf)); kb == 0 {
		t.Error("collapse reported, but no huge page backs the buffer (smaps AnonHugePages 0)")
	}
}

// anonHugeKB sums AnonHugePages of the mappings of /proc/self/smaps that
// overlap [addr, addr+n).
func anonHugeKB(t *testing.T, addr uintptr, n int) int {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	total, in := 0, false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			lo, hi, _ := strings.Cut(f[0], "-")
			l, _ := strconv.ParseUint(lo, 16, 64)
			h, _ := strconv.ParseUint(hi, 16, 64)
			in = uintptr(l) < addr+uintptr(n) && uintptr(h) > addr
			continue
		}
		if in && len(f) >= 2 && f[0] == "AnonHugePages:" {
			kb, _ := strconv.Atoi(f[1])
			total += kb
		}
	}
	return total
}
