// Package hugepage collapses the memory a rank offers again and again to a
// peer's single-copy read into transparent huge pages.
//
// A receiver reads a large message out of the sender's memory with
// process_vm_readv, and the kernel pins every 4 KiB page of it for the
// copy: at 256 KiB-4 MiB, both ways at once, the pinning took more of the
// kernel's time than the copy (perf: __get_user_pages, follow_page_pte and
// the unpinning ~45%, _copy_to_iter 22-28%), and osu bibw moved 25-30 GB/s.
// Backed by 2 MiB pages, the same buffers moved 80-100 GB/s. The Go heap is
// not backed by huge pages unless the kernel's policy is "always", so a
// Collapser counts the offers of each 2 MiB region of memory (a region any
// offered buffer overlaps, whole, whatever else the heap keeps there: the
// backing of memory does not change its contents) and, once a region has
// been offered Config.After times, asks the kernel to collapse it into one
// huge page (madvise MADV_COLLAPSE, Linux 6.1). That copies the region
// once (~0.5 ms here), which only a buffer used again repays: a buffer
// offered once is never collapsed.
//
// Invariants:
//   - A region's first attempt runs on one worker goroutine, started on
//     the first, which Close stops and waits for: the offer that makes a
//     region due does not wait for the kernel.
//   - A region is collapsed at most once per attempt; one the kernel
//     refuses for now (pinned by a read in flight, no free huge page) is
//     tried again after twice as many offers as the last attempt waited
//     for, at most maxAttempts times, and only by a quiet offer (the
//     caller has no other offered buffer in flight, so no peer is reading
//     this rank's memory), in the offering goroutine before Offer returns:
//     in a window of reads of one buffer, both ways at once, the peer
//     reads without a gap and a collapse takes ~0.5 ms, so a try from the
//     worker found a page pinned every time, while between two windows
//     (the first send of the next one, before its address is given out)
//     nothing pins it. Close waits for such a collapse too.
//   - A refusal that says huge pages are not available at all (EINVAL,
//     ENOSYS, EPERM before any success) turns the Collapser off.
//   - Whatever the kernel does or refuses, no byte of memory changes:
//     collapsing is transparent to the program and to the reading peer.
//   - At most maxRegions regions are tracked; beyond, new ones are not.
package hugepage

import (
	"errors"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// RegionSize is the size (and alignment) of a huge page on amd64 and
	// arm64 with 4 KiB pages.
	RegionSize = 2 << 20
	// MinOffer is the smallest buffer whose offers are counted: below it
	// the pinning saved is small against the cost of counting.
	MinOffer = 64 << 10

	maxAttempts = 8
	maxRegions  = 1 << 16 // 128 GiB of regions
	queueLen    = 64
	// offFailures refusals of the unavailable kind, with no success yet,
	// turn the Collapser off.
	offFailures = 4
)

// Config says when a region is collapsed.
type Config struct {
	// After is the number of offers of a region before it is collapsed;
	// 0 turns the Collapser off.
	After int
}

// span is a range of regions, [lo, hi).
type span struct{ lo, hi uintptr }

// region is one 2 MiB region's count and state.
type region struct {
	offers   uint32 // since the last attempt
	attempts uint8
	state    uint8 // counting, queued, done
}

// due is the number of offers after which r is tried next: after, then
// twice as many after each refusal for now.
func (r *region) due(after uint32) uint32 { return after << r.attempts }

const (
	counting = iota
	queued
	done
)

// Collapser counts offers per region and collapses the busy ones. The zero
// value is off; use New.
type Collapser struct {
	after uint32
	off   atomic.Bool
	// settled bounds the regions of the last offer that found all of its
	// regions settled (collapsed or given up): an offer within them
	// returns without the lock (a buffer sent again and again).
	settled atomic.Pointer[span]
	mu      sync.Mutex
	regions map[uintptr]*region
	work    chan uintptr
	stopped chan struct{}
	closed  bool
	started bool
	// inline counts the collapses running in offering goroutines (quiet
	// retries), which Close waits for.
	inline sync.WaitGroup
	// refused counts refusals of the unavailable kind, ok successful
	// collapses, tried attempts (under mu).
	refused, ok, tried int

	// collapse is madvise(MADV_COLLAPSE) over one region (a test's hook).
	collapse func(addr uintptr) error
}

// New returns a Collapser with cfg (off when cfg.After is 0).
func New(cfg Config) *Collapser {
	c := &Collapser{after: uint32(max(cfg.After, 0)), regions: map[uintptr]*region{}, collapse: madviseCollapse}
	if cfg.After <= 0 {
		c.off.Store(true)
	}
	return c
}

// SetCollapse replaces the collapse call (madvise MADV_COLLAPSE over one
// 2 MiB region at addr) with fn: for tests of the callers, which see when
// and from where collapses are tried. Call it before the first Offer.
func (c *Collapser) SetCollapse(fn func(addr uintptr) error) { c.collapse = fn }

// madviseCollapse asks the kernel to back the region at addr with one
// huge page.
func madviseCollapse(addr uintptr) error {
	_, _, e := unix.Syscall(unix.SYS_MADVISE, addr, RegionSize, unix.MADV_COLLAPSE)
	if e != 0 {
		return e
	}
	return nil
}

// Offer counts an offer of buf to a peer's single-copy read, and queues
// the regions it overlaps that reach the count for collapsing. quiet says
// that no other buffer the caller offered is in flight (no peer reads the
// caller's memory until it gives buf's address out): then a region that
// was refused as busy before and is due again is collapsed here, before
// Offer returns (~0.5 ms per region, once).
func (c *Collapser) Offer(buf []byte, quiet bool) {
	if c == nil || c.after == 0 || len(buf) < MinOffer || c.off.Load() {
		return
	}
	c.offer(uintptr(unsafe.Pointer(unsafe.SliceData(buf))), len(buf), quiet)
}

// maxInline bounds the regions one quiet offer collapses itself (a buffer
// of up to 6 MiB at any alignment); the others wait for a later one.
const maxInline = 4

// offer is Offer for the n bytes at start (n >= MinOffer, c on).
func (c *Collapser) offer(start uintptr, n int, quiet bool) {
	lo := start &^ (RegionSize - 1)
	hi := (start + uintptr(n) + RegionSize - 1) &^ (RegionSize - 1)
	if d := c.settled.Load(); d != nil && lo >= d.lo && hi <= d.hi {
		return
	}
	var now [maxInline]uintptr
	k := c.count(lo, hi, quiet, &now)
	if k == 0 {
		return
	}
	for _, a := range now[:k] {
		c.try(a)
	}
	c.inline.Done()
}

// count is offer's bookkeeping under mu: it counts the offer of regions
// [lo, hi), queues the first attempts to the worker, and returns in now
// the quiet retries for the caller to make (counted in inline).
func (c *Collapser) count(lo, hi uintptr, quiet bool, now *[maxInline]uintptr) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0
	}
	k := 0
	settled := true
	for a := lo; a < hi; a += RegionSize {
		r := c.regions[a]
		if r == nil {
			if len(c.regions) >= maxRegions {
				settled = false
				continue
			}
			r = &region{}
			c.regions[a] = r
		}
		if r.state != counting {
			settled = settled && r.state == done
			continue
		}
		settled = false
		if r.offers++; r.offers < r.due(c.after) {
			continue
		}
		if r.attempts > 0 { // refused as busy: a quiet offer tries again
			if quiet && k < len(now) {
				r.state = queued
				now[k] = a
				k++
			}
			continue
		}
		if !c.started {
			c.work = make(chan uintptr, queueLen)
			c.stopped = make(chan struct{})
			c.started = true
			go c.worker(c.work)
		}
		select {
		case c.work <- a:
			r.state = queued
		default: // the worker is behind: count again
			r.offers = 0
		}
	}
	if settled {
		c.settled.Store(&span{lo, hi})
	}
	if k > 0 {
		c.inline.Add(1)
	}
	return k
}

// worker collapses the queued regions until Close.
func (c *Collapser) worker(work <-chan uintptr) {
	defer close(c.stopped)
	for a := range work {
		c.try(a)
	}
}

// try collapses the queued region at a (unless the Collapser has turned
// off) and records the result.
func (c *Collapser) try(a uintptr) {
	err := errOff
	if !c.off.Load() {
		err = c.collapse(a)
	}
	c.mu.Lock()
	c.settle(a, err)
	c.mu.Unlock()
}

// settle records the result of a collapse of the region at a (mu held).
func (c *Collapser) settle(a uintptr, err error) {
	r := c.regions[a]
	r.attempts++
	if err != errOff {
		c.tried++
	}
	switch {
	case err == nil:
		r.state = done
		c.ok++
	case err == errOff:
		r.state = done
	case unavailable(err):
		r.state = done
		if c.refused++; c.ok == 0 && c.refused >= offFailures {
			c.off.Store(true)
		}
	case r.attempts >= maxAttempts:
		r.state = done
	default: // busy for now: try again after twice as many offers
		r.state, r.offers = counting, 0
	}
}

// errOff settles a region queued before the Collapser turned off.
var errOff = errors.New("hugepage: off")

// unavailable says whether err means that the region cannot be collapsed
// at all (no MADV_COLLAPSE, huge pages off, memory that is not anonymous),
// rather than not now.
func unavailable(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM)
}

// Stats returns the collapses tried, the regions collapsed, and those the
// kernel refused as unavailable (a test's and a debug log's view).
func (c *Collapser) Stats() (tried, collapsed, refused int) {
	if c == nil {
		return 0, 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tried, c.ok, c.refused
}

// Close stops the worker and waits for it and for the collapses running
// in offering goroutines (a collapse in progress finishes first). Offers
// after Close count nothing.
func (c *Collapser) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	started := c.started
	if started {
		close(c.work)
	}
	c.mu.Unlock()
	if started {
		<-c.stopped
	}
	c.inline.Wait()
}
