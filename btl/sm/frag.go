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
type fragPool struct {
	base int64 // offset of fragment 0
	size int64 // bytes per fragment
	max  int   // fragments reserved
	inc  int   // fragments added when the list runs empty

	mu struct {
		sync.Mutex
		free   []int64 // offsets of free fragments (a stack: warm ones first)
		carved int     // fragments 0..carved-1 are in circulation
		out    []bool  // out[i]: fragment i is with a receiver or on a pending queue
	}
}

func newFragPool(base, size int64, num, max, inc int) *fragPool {
	p := &fragPool{base: base, size: size, max: max, inc: inc}
	p.mu.free = make([]int64, 0, max)
	p.mu.out = make([]bool, max)
	p.carveLocked(num)
	return p
}

func (p *fragPool) carveLocked(n int) {
	n = min(n, p.max-p.mu.carved)
	// Push in reverse so that fragment 0 is handed out first.
	for i := p.mu.carved + n - 1; i >= p.mu.carved; i-- {
		p.mu.free = append(p.mu.free, p.base+int64(i)*p.size)
	}
	p.mu.carved += n
}

// get returns a free fragment's offset, or 0 when there is none.
func (p *fragPool) get() int64 {
	p.mu.Lock()
	if len(p.mu.free) == 0 {
		p.carveLocked(p.inc)
		if len(p.mu.free) == 0 {
			p.mu.Unlock()
			return 0
		}
	}
	n := len(p.mu.free) - 1
	off := p.mu.free[n]
	p.mu.free = p.mu.free[:n]
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
	p.mu.free = append(p.mu.free, off)
	p.mu.Unlock()
	return nil
}

// inUse counts fragments handed out (for tests).
func (p *fragPool) inUse() int {
	p.mu.Lock()
	n := p.mu.carved - len(p.mu.free)
	p.mu.Unlock()
	return n
}
