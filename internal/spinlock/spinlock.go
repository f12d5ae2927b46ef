// Package spinlock is a mutual-exclusion lock for short critical sections
// on a message's path, whose Unlock is a plain store.
//
// sync.Mutex costs two locked instructions per Lock/Unlock pair (a CAS and
// an atomic add), each a full fence on amd64 that also waits for every
// earlier store of the core to drain, including stores whose cache lines
// are still on their way from another core (a message just written to a
// peer's ring). A Mutex here takes the lock with one CAS and releases it
// with a release-order store (internal/relaxed), which does not wait.
//
// Invariants and limits: the state word is 0 (free) or 1 (held); only the
// holder stores 0. A goroutine that finds the lock held spins briefly, then
// yields its P (runtime.Gosched) between tries, then sleeps: waiters are
// not queued, so there is no fairness, and a section held for long makes
// waiters burn a little CPU instead of parking. Use it only where sections
// are short (tens of nanoseconds to a few microseconds) and contention is
// rare: a rank's own goroutines racing on one peer or on Progress.
//
// Pause, the CPU's spin-wait hint, is here for loops that spin on a word
// without a lock (the PML's wait looking for a message).
package spinlock

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gorun-mpi/gorun/internal/relaxed"
)

// Mutex is a spin-then-yield lock; the zero value is unlocked. It
// satisfies sync.Locker. It must not be copied after first use.
type Mutex struct {
	state atomic.Uint32
}

// TryLock takes the lock if it is free and reports whether it did.
func (m *Mutex) TryLock() bool {
	return m.state.Load() == 0 && m.state.CompareAndSwap(0, 1)
}

// Lock takes the lock, waiting while another goroutine holds it.
func (m *Mutex) Lock() {
	if !m.state.CompareAndSwap(0, 1) {
		m.lockSlow()
	}
}

// Tries of lockSlow: spinTries reloads of the word, then yieldTries
// passes of the P to other goroutines (the holder among them, when it
// runs on the same P), then 50 µs sleeps.
const (
	spinTries  = 64
	yieldTries = 1000
	sleepFor   = 50 * time.Microsecond
)

func (m *Mutex) lockSlow() {
	for i := 0; ; i++ {
		if m.state.Load() == 0 && m.state.CompareAndSwap(0, 1) {
			return
		}
		switch {
		case i < spinTries:
		case i < spinTries+yieldTries:
			runtime.Gosched()
		default:
			time.Sleep(sleepFor)
		}
	}
}

// Unlock releases the lock. It must be held (by any goroutine: like
// sync.Mutex, a Mutex is not tied to the goroutine that locked it).
func (m *Mutex) Unlock() {
	if m.state.Load() != 1 {
		panic("spinlock: unlock of unlocked Mutex")
	}
	relaxed.Store32(&m.state, 0)
}
