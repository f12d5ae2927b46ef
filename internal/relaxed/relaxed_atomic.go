//go:build !amd64 || race

package relaxed

import "sync/atomic"

// Store64 stores v in w: an atomic store outside amd64 and under the race
// detector (see the package doc).
func Store64(w *atomic.Uint64, v uint64) { w.Store(v) }

// Store32 stores v in w: an atomic store outside amd64 and under the race
// detector.
func Store32(w *atomic.Uint32, v uint32) { w.Store(v) }

// StorePointer stores v in w: an atomic store outside amd64 and under the
// race detector.
func StorePointer[T any](w *atomic.Pointer[T], v *T) { w.Store(v) }
