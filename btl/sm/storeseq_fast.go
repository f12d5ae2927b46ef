//go:build amd64 && !race

package sm

import (
	"sync/atomic"
	"unsafe"
)

// storeSeq publishes a slot with release order: a receiver that loads the
// new value (with an atomic Load) then sees every store the sender made
// before it (the slot's contents). atomic.Store would give that too, but on
// amd64 it is an XCHG, which waits for the slot's cache lines to arrive
// from the receiver's core before the sender may go on.
//
// A plain store gives it on amd64 only, and only because of guarantees the
// Go memory model does not make (under it, a plain store racing an atomic
// load is a data race with no defined order):
//   - the gc compiler emits it as one 8-byte MOV to an 8-aligned address
//     (atomic.Uint64 is aligned), so no reader sees a torn value;
//   - the gc compiler does not move a store above earlier stores: its SSA
//     form threads every store through one memory chain, in program order;
//   - amd64 hardware (x86-TSO) makes a core's stores visible to the others
//     in program order, and does not reorder a load with an earlier load,
//     so the receiver's atomic Load of seq (a plain MOV) followed by its
//     loads of the slot sees the contents the sender stored before seq.
//
// What TSO does not give (a store followed by a load of another word, the
// Dekker pattern of the sleep protocol) comes from the CAS in claim, a
// locked instruction and so a full fence (see publish). On other
// architectures, and under the race detector (which must see the hand-off),
// storeseq_atomic.go uses atomic.Store.
func storeSeq(w *atomic.Uint64, v uint64) {
	*(*uint64)(unsafe.Pointer(w)) = v
}
