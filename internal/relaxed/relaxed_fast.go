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
