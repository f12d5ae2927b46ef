//go:build amd64 && !race

package sm

import (
	"sync/atomic"
	"unsafe"
)

// storeSeq publishes a slot with release order. On amd64 every store is a
// release store (TSO) and the Go compiler keeps stores in program order, so
// a plain MOV after the slot's contents is enough; atomic.Store would be an
// XCHG that waits for the slot's cache lines to arrive from the receiver's
// core before the sender may go on. The fence the sleep protocol needs is
// the CAS in claim (see publish).
func storeSeq(w *atomic.Uint64, v uint64) {
	*(*uint64)(unsafe.Pointer(w)) = v
}
