package sm

import (
	"sync/atomic"
	"unsafe"

	"github.com/gorun-mpi/gorun/mpool"
)

// Sizes of the shared structures; layout_test.go pins every offset.
const (
	ctlSize   = 384 // bytes of a rank's control block (3 pairs of cache lines)
	elemSize  = 128 // bytes of a FIFO slot (2 cache lines)
	elemHead  = 32  // bytes of a slot's header
	inlineMax = elemSize - elemHead
	maxAcks   = inlineMax / 8 // fragment offsets one ack slot returns
	// contBytes is what a continuation slot of a multi-slot inline message
	// carries: all of it but the seq word. The sender sets that word as if
	// it published the slot, so the receiver can check that every slot a
	// message's length claims was really claimed and written (an older
	// lap's value is never the one expected).
	contBytes = elemSize - 8
)

// inlineSlots is the number of consecutive slots an inline message of n
// bytes (hdr+payload) takes: the first carries inlineMax, each
// continuation contBytes.
func inlineSlots(n int) int {
	if n <= inlineMax {
		return 1
	}
	return 1 + (n-inlineMax+contBytes-1)/contBytes
}

// cont is the data area of slot e used as a continuation slot.
func (e *elem) cont() []byte {
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(e), 8)), contBytes)
}

// ctl is a rank's control block, at the start of its region of the segment.
// Each line has one writer pattern, so senders, the receiver and the sleep
// protocol do not false-share.
type ctl struct {
	// Each group below sits in its own 128-byte pair of cache lines: Intel's
	// adjacent-line prefetcher moves lines in aligned pairs, so a sender
	// pulling head would otherwise drag tail out of the receiver's cache and
	// stall the receiver's next release of it.

	// Pair 0: claimed by senders (CAS), never by the receiver.
	head atomic.Uint64 // slots claimed so far; the next sender takes slot head
	_    [120]byte

	// Pair 1: written by the receiver in batches, read by a sender only when
	// the FIFO looks full from its cached copy.
	tail atomic.Uint64 // slots released; slot s may be reused once tail > s
	_    [120]byte

	// Pair 2, line 0: the sleep protocol (see sleep.go).
	armed   atomic.Uint32 // 1 while the receiver may be asleep; senders then wake it
	wakeSeq atomic.Uint32 // futex word, bumped by every waker
	_       [56]byte

	// Pair 2, line 1: identity, written once by the owner before it attaches.
	pid       uint64        // owner's process id
	magicAddr uint64        // address, in the owner's memory, of a word holding probeMagic^rank
	running   atomic.Uint64 // oversubscribed: 1 while the owner is polling, 0 while it yields
	claim     atomic.Uint64 // the slots the owner is claiming or last claimed (claimWord); see gone.go
	boxNext   atomic.Uint64 // fast boxes of this region handed out so far (senders add 1, once per pair; box.go)
	_         [24]byte
}

// Slot kinds.
const (
	kindData uint8 = 1 // hdr+payload, inline or in a fragment
	kindAck  uint8 = 2 // length fragment offsets (in data) returned to their owner
	kindBox  uint8 = 3 // the sender took fast box number frag of our region (box.go)
)

// elem is one FIFO slot. The sender fills every field but seq, then stores
// seq = slot number + 1 (an atomic store, last): a receiver that loads that
// value sees the rest of the slot (Go memory model: atomics are
// synchronizing). The value differs on every lap, so seq is also the owner
// flag: a slot whose seq is not tail+1 is not yet published.
type elem struct {
	seq    atomic.Uint64 // slot number + 1, stored last
	frag   uint64        // offset of the fragment holding the data; 0 = inline
	src    uint32        // sender's local rank
	length uint32        // kindData: bytes of hdr+payload; kindAck: offsets in data
	tag    uint8         // btl.Tag
	kind   uint8         // kindData, kindAck or kindBox
	_      [2]byte
	pseq   uint32                // kindData: the pair's sequence number once the sender has a fast box to us, else 0 (box.go)
	data   [inlineMax / 8]uint64 // inline hdr+payload, or ack offsets
}

// inline is the slot's inline area as bytes.
func (e *elem) inline() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&e.data[0])), inlineMax)
}

// Compile-time size checks.
var (
	_ [ctlSize - unsafe.Sizeof(ctl{})]byte
	_ [unsafe.Sizeof(ctl{}) - ctlSize]byte
	_ [elemSize - unsafe.Sizeof(elem{})]byte
	_ [unsafe.Sizeof(elem{}) - elemSize]byte
)

// fifoAt is the FIFO of slots slots at offset off of seg.
func fifoAt(seg *mpool.Segment, off int64, slots int) []elem {
	return unsafe.Slice((*elem)(seg.At(off)), slots)
}
