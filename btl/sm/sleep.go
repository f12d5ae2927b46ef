package sm

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sleep protocol (UCX mm's "signal" mode with a futex instead of a socket).
//
// The receiver (Sleep):              A sender (claim+publish) or Wake:
//  1. s := wakeSeq.Load()             a. CAS head (claim), or store wakePend
//  2. armed.Store(1)                  b. (publish the slot)
//  3. if a slot is claimed or         c. if armed.Load() != 0:
//     published, or Wake is pending,     wakeSeq.Add(1); FUTEX_WAKE(wakeSeq)
//     or Finalize's barrier released
//     us (barrier.go): return
//  4. FUTEX_WAIT(wakeSeq, s, d)
//
// Dekker argument: Go atomics are sequentially consistent (the CAS is a
// locked instruction). If step 3 misses the sender's (a), then (a) comes
// after 3 in the total order, so (c)'s load comes after 2 and sees armed ==
// 1: the sender bumps wakeSeq after the receiver read s in step 1, so
// FUTEX_WAIT either finds wakeSeq != s and returns at once, or is already
// waiting and is woken. No wake-up is lost. Step 3 looks at head (claimed
// slots), not only at seq (published ones), which is what lets the publish
// itself be a release store with no fence.
// The futex word lives in the shared segment, so the futex is not PRIVATE.

// pendingNap bounds a Sleep while this rank has sends queued for a full
// FIFO: receivers do not wake senders when they free slots.
const pendingNap = time.Millisecond

// boxRecheck bounds a Sleep's first nap when we have fast boxes: their
// records are published without a fence (see boxOut.publish), so one
// stored as we armed may have been missed by our check and its sender may
// not have seen us armed; by then it is visible.
const boxRecheck = 50 * time.Microsecond

// Sleep blocks until a sender signals work, Wake is called, a peer is lost,
// or d elapses (d <= 0: no timeout). It returns at once if our FIFO holds a
// published slot or Wake is pending.
func (m *Module) Sleep(d time.Duration) {
	if m.closed.Load() {
		return
	}
	c := m.ctl
	seq := c.wakeSeq.Load()
	c.armed.Store(1)
	if m.wakePend.Swap(false) || m.fifoReady() || m.boxReady() || m.lostUnrep.Load() || m.releasedHere() {
		c.armed.Store(0)
		return
	}
	var deadline time.Time
	if d > 0 {
		deadline = time.Now().Add(d)
	}
	recheck := m.nBoxIn.Load() > 0 // see boxOut.publish
	for {
		nap := m.monitor.sleepNap() // a lost peer is noticed while asleep
		if m.pendPeers.Load() > 0 {
			nap = pendingNap
		}
		if recheck {
			nap, recheck = min(nap, boxRecheck), false
		}
		if d > 0 {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			nap = min(nap, left)
		}
		futexWait(&c.wakeSeq, seq, nap)
		if c.wakeSeq.Load() != seq || m.pendPeers.Load() > 0 || m.monitor.sleepCheck() || m.fifoReady() || m.boxReady() || m.releasedHere() {
			break
		}
	}
	c.armed.Store(0)
	m.wakePend.Store(false)
}

// fifoReady reports whether the slot at our released tail is published. It
// does not need Progress's lock: when Progress has consumed slots it has not
// released yet, the answer is a harmless "yes" (Progress then finds the FIFO
// dry and releases them); after a Progress that drained the FIFO, the
// released tail is the true one.
func (m *Module) fifoReady() bool {
	t := m.ctl.tail.Load()
	return m.ctl.head.Load() != t || m.fifo[t&m.mask].seq.Load() == t+1
}

// Wake ends a Sleep of this process, now or the next one.
func (m *Module) Wake() {
	if !m.enter() {
		return
	}
	m.wakePend.Store(true)
	if m.ctl.armed.Load() != 0 {
		wakeCtl(m.ctl)
	}
	m.exit()
}

// wakeCtl wakes the rank that owns c if it is armed. Not inlined: its
// callers test armed first, and a sender's common case never calls it.
//
//go:noinline
func wakeCtl(c *ctl) {
	if c.armed.CompareAndSwap(1, 0) {
		c.wakeSeq.Add(1)
		futexWake(&c.wakeSeq)
	}
}

// Futex operations (linux/futex.h); shared, not FUTEX_PRIVATE_FLAG.
const (
	futexWaitOp = 0
	futexWakeOp = 1
)

func futexWait(w *atomic.Uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	// EAGAIN (value changed), EINTR and ETIMEDOUT all mean: look again.
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitOp, uintptr(val),
		uintptr(unsafe.Pointer(&ts)), 0, 0)
}

func futexWake(w *atomic.Uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakeOp, 1<<30, 0, 0, 0)
}

// SetRunning publishes whether this rank is polling (on a core) or about to
// yield it; see PeerRunning.
func (m *Module) SetRunning(on bool) {
	v := uint64(0)
	if on {
		v = 1
	}
	if m.enter() {
		storeSeq(&m.ctl.running, v)
		m.exit()
	}
}

// YieldCore gives up the core (sched_yield) as SetRunning(false), the
// yield, SetRunning(true) would, under one close guard (see close.go)
// instead of two: it runs once per idle poll of an oversubscribed rank.
func (m *Module) YieldCore() {
	if !m.enter() {
		unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		return
	}
	storeSeq(&m.ctl.running, 0)
	unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
	storeSeq(&m.ctl.running, 1)
	m.exit()
}

// PeerRunning reports whether rank last said it was polling.
func (m *Module) PeerRunning(rank int) bool {
	if rank < 0 || rank >= len(m.peers) || rank == m.rank || !m.enter() {
		return false
	}
	on := m.peers[rank].ctl.running.Load() != 0
	m.exit()
	return on
}
