//go:build !amd64

package shm

import "sync/atomic"

// storeRel stores v at p (sequentially consistent here).
func storeRel(p *uint64, v uint64) { atomic.StoreUint64(p, v) }
