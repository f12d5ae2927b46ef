package sm

import (
	"runtime"
	"sync/atomic"
)

// Close may race the goroutines of a rank that still send while it
// finalizes (btl.Module's contract): none of them may touch the segment
// once it is unmapped. Every entry point that a goroutine other than the
// progressing one can run on the segment (Send, Wake, SetRunning,
// YieldCore, PeerRunning; Progress, PollFrom and Sleep are serialized with Close by
// the PML's progress lock and by progMu) counts itself in users for its
// duration:
//
//	user:  users.Add(1); if closed: users.Add(-1), refuse; ...; users.Add(-1)
//	Close: closed.Store(true); wait until users == 0; unmap
//
// Both sides store, then load the other's word, with sequentially
// consistent atomics: either the user sees closed and refuses, or Close
// sees it counted and waits for it. The wait is short: no counted call
// blocks (claim and enqueue are bounded, Send never calls a Completion,
// and YieldCore's sched_yield only lets the core's other threads run).
//
// A Send that touches the segment only under its peer's lock (every
// message but one copied into a fragment before the lock, copyFirst) is
// not counted: the two locked instructions of a count were ~15% of a small
// send. It checks closed after taking the lock, and Close, after setting
// closed, takes and drops every peer's lock (drainPeerLocks): a Send that
// took a lock first finishes before Close gets it, and one that takes it
// after Close dropped it sees closed (the unlock orders the store before
// the Send's load) and refuses.

// userCount sits on a cache line of its own: every Send of every goroutine
// of the rank writes it.
type userCount struct {
	_ [56]byte
	n atomic.Int64
	_ [56]byte
}

// enter counts the caller as a user of the segment, or reports false when
// the module is closed (then it is not counted).
func (m *Module) enter() bool {
	m.users.n.Add(1)
	if m.closed.Load() {
		m.users.n.Add(-1)
		return false
	}
	return true
}

// exit ends an enter that returned true.
func (m *Module) exit() { m.users.n.Add(-1) }

// drainUsers waits, after closed is set, until no goroutine is inside a
// counted call.
func (m *Module) drainUsers() {
	for m.users.n.Load() != 0 {
		runtime.Gosched()
	}
}

// drainPeerLocks waits, after closed is set, until no Send is inside a
// peer's lock: one that enters later sees closed and refuses.
func (m *Module) drainPeerLocks() {
	for i := range m.peers {
		m.peers[i].mu.Lock()
		m.peers[i].mu.Unlock() // empty: the lock is the barrier
	}
}
