//go:build !amd64 || race

package sm

import "sync/atomic"

// storeSeq publishes a slot. Outside amd64 (weaker memory models) and under
// the race detector (which must see the hand-off) it is an atomic store.
func storeSeq(w *atomic.Uint64, v uint64) { w.Store(v) }
