package sm

import (
	"sync"

	"golang.org/x/sys/unix"
)

// The asymmetric fence of the fast-box sleep protocol (sleep.go).
//
// A sender publishes a box record with a release store and then loads the
// receiver's armed flag; a receiver about to sleep stores armed and then
// checks its boxes. That is the Dekker pattern, which needs a full fence on
// both sides, but the sender's fence would cost a cross-core round trip per
// message, the very cost boxes exist to avoid. So the receiver pays for both
// sides when it goes to sleep: membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)
// runs a full memory barrier on every CPU that is running a thread of a
// process registered for it (every rank registers at New), so after it
// returns either the receiver's check sees the sender's record, or the
// sender's later load of armed sees 1 and it wakes the receiver. Where the
// kernel refuses membarrier, senders publish box records with a full fence
// instead (boxOut.fence).
//
// A process registers when it first takes a box, before it announces the
// box (so before the receiver can rely on it): registration waits for an
// RCU grace period (2-35 ms measured here under load), which jobs that
// never use a box (a 1024-rank hello) should not pay at start-up.

const (
	membarrierQuery                  = 0
	membarrierGlobalExpedited        = 1 << 1
	membarrierRegisterGlobalExpedite = 1 << 2
)

var membarrierState struct {
	query, register sync.Once
	avail, ok       bool
}

// haveMembarrier reports whether the kernel offers global expedited
// membarriers (a query: no registration, no wait).
func haveMembarrier() bool {
	s := &membarrierState
	s.query.Do(func() {
		cmds, _, e := unix.Syscall(unix.SYS_MEMBARRIER, membarrierQuery, 0, 0)
		s.avail = e == 0 && cmds&membarrierGlobalExpedited != 0 && cmds&membarrierRegisterGlobalExpedite != 0
	})
	return s.avail
}

// registerMembarrier registers this process for global expedited
// membarriers, once; it reports whether that worked.
func registerMembarrier() bool {
	s := &membarrierState
	s.register.Do(func() {
		if haveMembarrier() {
			_, _, e := unix.Syscall(unix.SYS_MEMBARRIER, membarrierRegisterGlobalExpedite, 0, 0)
			s.ok = e == 0
		}
	})
	return s.ok
}

// heavyBarrier is the receiver's side of the asymmetric fence.
func heavyBarrier() {
	unix.Syscall(unix.SYS_MEMBARRIER, membarrierGlobalExpedited, 0, 0)
}
