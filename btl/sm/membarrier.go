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

const (
	membarrierQuery                  = 0
	membarrierGlobalExpedited        = 1 << 1
	membarrierRegisterGlobalExpedite = 1 << 2
)

var membarrierOnce struct {
	sync.Once
	ok bool
}

// registerMembarrier registers this process for global expedited
// membarriers, once; it reports whether they are available.
func registerMembarrier() bool {
	membarrierOnce.Do(func() {
		cmds, _, e := unix.Syscall(unix.SYS_MEMBARRIER, membarrierQuery, 0, 0)
		if e != 0 || cmds&membarrierGlobalExpedited == 0 {
			return
		}
		_, _, e = unix.Syscall(unix.SYS_MEMBARRIER, membarrierRegisterGlobalExpedite, 0, 0)
		membarrierOnce.ok = e == 0
	})
	return membarrierOnce.ok
}

// heavyBarrier is the receiver's side of the asymmetric fence.
func heavyBarrier() {
	unix.Syscall(unix.SYS_MEMBARRIER, membarrierGlobalExpedited, 0, 0)
}
