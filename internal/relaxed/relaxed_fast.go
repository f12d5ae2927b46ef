//go:build amd64 && !race

package relaxed

import (
	"sync/atomic"
	"unsafe"
)

// Store64 stores v in w with release order (a plain MOV).
func Store64(w *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(w)) = v }

// Store32 stores v in w with release order (a plain MOV).
func Store32(w *atomic.Uint32, v uint32) { *(*uint32)(unsafe.Pointer(w)) = v }

// StorePointer stores v in w with release order (a plain MOV, behind the
// compiler's write barrier like any pointer store).
func StorePointer[T any](w *atomic.Pointer[T], v *T) { *(**T)(unsafe.Pointer(w)) = v }
