package sm

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/errs"
)

// probeMagic ^ rank is the word each rank publishes the address of in its
// control block; a peer that reads it back with process_vm_readv knows that
// single copy works towards that rank.
const probeMagic uint64 = 0x9e3779b97f4a7c15

func addrOf(p *uint64) uintptr { return uintptr(unsafe.Pointer(p)) }

// probePeers is how many peers probeSingleCopy tries.
const probePeers = 4

// probeSingleCopy reads the magic word of the next probePeers ranks. It
// reports true only if all reads succeed; a refusal (ptrace restrictions,
// seccomp) is logged at debug level.

func (m *Module) probeSingleCopy() bool {
	// The ranks are siblings (same launcher, program and user), so
	// process_vm_readv is allowed for all of them or for none: probing the
	// next few ranks is as good as probing all, and keeps start-up linear
	// in the number of ranks (n ranks probing all n took n² syscalls).
	for k := 1; k <= min(probePeers, len(m.peers)-1); k++ {
		i := (m.rank + k) % len(m.peers)
		p := &m.peers[i]
		var got uint64
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&got)), 8)
		if err := vmCopy(p.pid, uintptr(p.ctl.magicAddr), buf, false); err != nil || got != probeMagic^uint64(i) {
			m.log.Debug("single copy not available: process_vm_readv refused", "peer", i, "pid", p.pid, "error", err, "word", got)
			return false
		}
	}
	return true
}

// ReadFrom copies len(dst) bytes at addr in peer's memory into dst with
// process_vm_readv, looping over partial reads.
func (m *Module) ReadFrom(peer int, addr uintptr, dst []byte) error {
	return m.single("ReadFrom", peer, addr, dst, false)
}

// WriteTo copies src to addr in peer's memory with process_vm_writev
// (btl.Writer), looping over partial writes. Like ReadFrom it goes to the
// process the probe checked, and not to a peer known to be gone (whose pid
// may belong to another process by now).
func (m *Module) WriteTo(peer int, addr uintptr, src []byte) error {
	return m.single("WriteTo", peer, addr, src, true)
}

var _ btl.Writer = (*Module)(nil)

// vecMax is the most regions one ReadVec call copies (IOV_MAX is 1024; a
// call's fixed cost is spread well before this many).
const vecMax = 16

// ReadVec copies the first regions of addr into dst with one
// process_vm_readv (btl.VecReader): at most vecMax of them, at most vmChunk
// bytes in all, each whole or not at all (the kernel transfers iovec
// elements in order and does not split one in a partial transfer; a region
// it stopped inside is not counted, and ReadFrom reads it again). With
// the checks of ReadFrom failing, or the call, it returns 0.
func (m *Module) ReadVec(peer int, addr []uintptr, dst [][]byte) int {
	if !m.Reachable(peer) || !m.attrs.SingleCopy || m.peers[peer].lost.Load() {
		return 0
	}
	var local [vecMax]unix.Iovec
	var remote [vecMax]unix.RemoteIovec
	k, total := 0, 0
	for k < min(len(addr), len(dst), vecMax) && len(dst[k]) > 0 && total+len(dst[k]) <= vmChunk {
		local[k] = unix.Iovec{Base: &dst[k][0]}
		local[k].SetLen(len(dst[k]))
		remote[k] = unix.RemoteIovec{Base: addr[k], Len: len(dst[k])}
		total += len(dst[k])
		k++
	}
	if k == 0 {
		return 0
	}
	for {
		r, _, e := unix.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(m.peers[peer].pid),
			uintptr(unsafe.Pointer(&local[0])), uintptr(k), uintptr(unsafe.Pointer(&remote[0])), uintptr(k), 0)
		if e == syscall.EINTR || e == syscall.EAGAIN {
			continue
		}
		if e != 0 {
			return 0
		}
		n := 0
		for n < k && r >= uintptr(len(dst[n])) {
			r -= uintptr(len(dst[n]))
			n++
		}
		return n
	}
}

var _ btl.VecReader = (*Module)(nil)

// single is ReadFrom (write false) and WriteTo: the checks, the copy, and
// the errors, named after op.
func (m *Module) single(op string, peer int, addr uintptr, b []byte, write bool) error {
	if !m.Reachable(peer) {
		return fmt.Errorf("btl/sm: %s rank %d: not reachable; allowed 0..%d except this rank %d", op, peer, len(m.peers)-1, m.rank)
	}
	if !m.attrs.SingleCopy {
		return fmt.Errorf("btl/sm: %s rank %d: single copy is not available (probe failed or btl_sm_single_copy=none)", op, peer)
	}
	if m.peers[peer].lost.Load() {
		return errPeerLost(peer)
	}
	err := vmCopy(m.peers[peer].pid, addr, b, write)
	if errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("btl/sm: %s rank %d: %w", op, peer, errs.ErrPeerLost)
	}
	if err != nil {
		return fmt.Errorf("btl/sm: %s rank %d at %#x (%d bytes): %w", op, peer, addr, len(b), err)
	}
	return nil
}

// vmChunk is the most one system call of vmCopy copies. The call is raw
// (unix.RawSyscall6): the Go scheduler is not told, where a plain Syscall6
// enters and leaves a system call for it (runtime.entersyscall and
// exitsyscall), and when the call outlasts a tick of the runtime's monitor
// thread (20 us while the program is busy: a read of ~256 KiB here) that
// thread hands the rank's P to another thread, which the reading thread
// must then take back. Without the two, against Syscall6 in the same runs
// (osu, 2 ranks, 5-7 rounds): bw 8 KiB-1 MiB +4 to +35%, bibw 8-16 KiB
// +30 to +50% and 32 KiB-1 MiB 0 to +12%, latency unchanged. The bound
// keeps what a raw call costs the rest of the program small: while it
// runs, its P runs nothing else and a garbage collection's stop-the-world
// waits for it (for 1 MiB here ~50-80 us); a larger copy is several
// calls, and the goroutine may be preempted between them.
var vmChunk = 1 << 20

// vmCopy copies between b and addr in process pid's memory, into b
// (process_vm_readv) or, with write, out of it (process_vm_writev).
func vmCopy(pid int, addr uintptr, b []byte, write bool) error {
	call, name := uintptr(unix.SYS_PROCESS_VM_READV), "process_vm_readv"
	if write {
		call, name = unix.SYS_PROCESS_VM_WRITEV, "process_vm_writev"
	}
	for done := 0; done < len(b); {
		n := min(len(b)-done, vmChunk)
		local := unix.Iovec{Base: &b[done]}
		local.SetLen(n)
		remote := unix.RemoteIovec{Base: addr + uintptr(done), Len: n}
		r, _, e := unix.RawSyscall6(call, uintptr(pid),
			uintptr(unsafe.Pointer(&local)), 1, uintptr(unsafe.Pointer(&remote)), 1, 0)
		switch {
		case e == syscall.EINTR || e == syscall.EAGAIN:
			continue
		case e != 0:
			return e
		case r == 0:
			return fmt.Errorf("%s copied nothing at %#x with %d bytes left", name, addr+uintptr(done), len(b)-done)
		}
		done += int(r)
	}
	return nil
}
