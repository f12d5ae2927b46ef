package sm

import (
	"fmt"
	"sync"
)

// fragPool is the free list of one kind of fragment (eager or max-size)
// owned by this rank. Only the owner takes and returns its fragments, so the
// list is process-local; the fragments themselves live in the segment.
//
// Protocol: get hands out a fragment (offset) or 0 when none is free and the
// list cannot grow; the receiver of the fragment returns it in an ack slot
// and put takes it back. Fragments enter circulation lazily, inc at a time,
// up to max: all max are reserved in the segment from the start.
//
// The free list is a queue: get hands out the fragment that came back
// longest ago. Its lines are the least likely to be still in the cache of
// the core that read it, which the sender's stores would have to take them
// back from first: against the most recent one first, osu bw at 8-16 KiB
// (each message copied into a max-size fragment) +5 to +15%, mr +2 to +3%,
// and the pipeline's ping-pong at 64-512 KiB 3-9% faster.
type fragPool struct {
	base int64 // offset of fragment 0
	size int64 // bytes per fragment
	max  int   // fragments reserved
	inc  int   // fragments added when the list runs empty

	mu struct {
		sync.Mutex
		free   []int64 // offsets of free fragments, a ring of max: the queue's head at head, nfree of them
		head   int
		nfree  int
		carved int    // fragments 0..carved-1 are in circulation
		out    []bool // out[i]: fragment i is with a receiver or on a pending queue
	}
}

func newFragPool(base, size int64, num, max, inc int) *fragPool {
	p := &fragPool{base: base, size: size, max: max, inc: inc}
	p.mu.free = make([]int64, max)
	p.mu.out = make([]bool, max)
	p.carveLocked(num)
	return p
}

func (p *fragPool) carveLocked(n int) {
	n = min(n, p.max-p.mu.carved)
	for i := p.mu.carved; i < p.mu.carved+n; i++ {
		p.pushLocked(p.base + int64(i)*p.size)
	}
	p.mu.carved += n
}

// pushLocked queues free fragment off at the tail.
func (p *fragPool) pushLocked(off int64) {
	p.mu.free[(p.mu.head+p.mu.nfree)%p.max] = off
	p.mu.nfree++
}

// get returns a free fragment's offset, or 0 when there is none.
func (p *fragPool) get() int64 {
	p.mu.Lock()
	if p.mu.nfree == 0 {
		p.carveLocked(p.inc)
		if p.mu.nfree == 0 {
			p.mu.Unlock()
			return 0
		}
	}
	off := p.mu.free[p.mu.head]
	p.mu.head = (p.mu.head + 1) % p.max
	p.mu.nfree--
	p.mu.out[(off-p.base)/p.size] = true
	p.mu.Unlock()
	return off
}

// owns reports whether off is the start of one of this pool's fragments.
func (p *fragPool) owns(off int64) bool {
	return p.max > 0 && off >= p.base && off < p.base+int64(p.max)*p.size && (off-p.base)%p.size == 0
}

// put returns fragment off (which owns must accept). A fragment that is not
// out (a duplicate or forged ack) is refused with an error.
func (p *fragPool) put(off int64) error {
	i := (off - p.base) / p.size
	p.mu.Lock()
	if !p.mu.out[i] {
		p.mu.Unlock()
		return fmt.Errorf("btl/sm: fragment at offset %d returned but not handed out (duplicate ack?)", off)
	}
	p.mu.out[i] = false
	p.pushLocked(off)
	p.mu.Unlock()
	return nil
}

// inUse counts fragments handed out (for tests).
func (p *fragPool) inUse() int {
	p.mu.Lock()
	n := p.mu.carved - p.mu.nfree
	p.mu.Unlock()
	return n
}
