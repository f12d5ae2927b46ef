package pml

import (
	"sync/atomic"

	"github.com/gorun-mpi/gorun/internal/relaxed"
)

// reqCache keeps a PML's recycled Requests for its next receives, in place
// of sync.Pool on that path: a Pool's Get and Put cost three locked
// instructions and a pin between them (14% of an Irecv+Isend pair's time
// in BenchmarkWindowOneGoroutine), where here a recycle costs one CAS and
// a take none beyond the PML.mu its receive holds anyway.
//
// It is a bounded ring of reqCacheSize cells (Vyukov's bounded queue with
// many producers and one consumer): any goroutine puts (recycle), and only
// a holder of PML.mu takes (startRecv), so the take needs no atomic
// read-modify-write. A cell's seq says whose turn it is: pos+1 once the
// producer that claimed position pos has stored its Request, pos+size once
// the consumer has taken it, ready for the producer of the next lap. A
// full ring refuses, and the Request goes to sync.Pool instead, so the
// cache holds at most reqCacheSize Requests (~90 KiB) and a burst of more
// outstanding receives than that is the GC's after it.
type reqCache struct {
	tail  atomic.Uint64 // next position to put at (producers, CAS)
	_     [56]byte
	head  uint64 // next position to take from; guarded by PML.mu
	cells [reqCacheSize]reqCell
}

const reqCacheSize = 256 // a power of two

type reqCell struct {
	seq atomic.Uint64
	r   *Request
}

// init makes every cell free for the producers of lap 0.
func (c *reqCache) init() {
	for i := range c.cells {
		c.cells[i].seq.Store(uint64(i))
	}
}

// put keeps r, a reset Request nobody can reach any more, for a later
// take, or reports false when the ring is full.
func (c *reqCache) put(r *Request) bool {
	pos := c.tail.Load()
	for {
		cell := &c.cells[pos&(reqCacheSize-1)]
		switch seq := cell.seq.Load(); {
		case seq == pos:
			if !c.tail.CompareAndSwap(pos, pos+1) {
				pos = c.tail.Load()
				continue
			}
			cell.r = r
			// Release order is enough (the consumer loads seq
			// atomically, then reads r), and a plain store on amd64
			// does not wait for the store buffer as an XCHG would.
			relaxed.Store64(&cell.seq, pos+1)
			return true
		case seq < pos:
			return false // the cell's Request of the last lap is still there: full
		default:
			pos = c.tail.Load() // another producer took pos
		}
	}
}

// takeLocked returns a cached Request, or nil when none is (PML.mu held).
func (c *reqCache) takeLocked() *Request {
	cell := &c.cells[c.head&(reqCacheSize-1)]
	if cell.seq.Load() != c.head+1 {
		return nil // empty, or its producer has claimed it but not stored yet
	}
	r := cell.r
	cell.r = nil
	relaxed.Store64(&cell.seq, c.head+reqCacheSize)
	c.head++
	return r
}

// newReqLocked returns a Request for a receive (PML.mu held): one its
// delivery recycled (reqFree, zero but for the fields every post sets
// again: see recycleLocked), or a zero one from the cache or the pool.
func (p *PML) newReqLocked() *Request {
	if p.nFree > 0 {
		// The slot keeps its pointer until a recycle overwrites it: no
		// store, nor its write-barrier check (it keeps alive at most
		// reqFreeMax Requests without buffers).
		p.nFree--
		return p.reqFree[p.nFree]
	}
	if r := p.reqs.takeLocked(); r != nil {
		return r
	}
	return reqPool.Get().(*Request)
}
