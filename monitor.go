package gorun

import (
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The Go runtime's monitor thread (sysmon) sleeps 20 us between its rounds
// for a while after each time it took a P back from a thread stuck in a
// system call: 50 rounds, then twice as long each round, up to 10 ms. The
// kernel's default timer slack (50 us) makes a round about 80 us, so for
// the ~5 ms after Init (whose sleeps in the wire-up are such system
// calls) the monitor wakes every 80 us on one of the cores the ranks spin
// on, and each wake costs the rank there several microseconds, and its
// partner as long. The first sizes a benchmark measured paid for it: np
// 2 Allgather 1-4 B 0.54-0.63 us against 0.37-0.40 once it had calmed
// down. quietMonitor gives that thread a timer slack of monitorSlack
// (mpi_base_monitor_slack, 1 ms by default; 0 leaves it alone), so its
// short rounds last about that long: a thread stuck in a system call
// loses its P that much later, which only matters to a rank whose other
// goroutines wait for the P meanwhile. It needs CAP_SYS_NICE (the
// kernel's rule for another thread's slack) and otherwise does nothing,
// as it does when it cannot tell which thread the monitor is.
func quietMonitor() {
	if monitorSlack <= 0 {
		return
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	self := os.Getpid()
	tid := 0
	for _, t := range tasks {
		// The monitor is the first thread the runtime starts (in
		// runtime.main, before any package's init), so the lowest thread
		// id after the main thread's (unless thread ids wrapped around:
		// then it is most likely not in nanosleep, and left alone).
		n, err := strconv.Atoi(t.Name())
		if err != nil || n == self || tid != 0 && n > tid {
			continue
		}
		tid = n
	}
	if tid == 0 || !monitorLike(tid) {
		return
	}
	os.WriteFile("/proc/"+strconv.Itoa(tid)+"/timerslack_ns", []byte(strconv.FormatInt(monitorSlack.Nanoseconds(), 10)), 0)
}

// monitorSlack is the monitor thread's timer slack (mpi_base_monitor_slack;
// 0: left alone). Init sets it from the parameters before it calls
// quietMonitor.
var monitorSlack = time.Millisecond

// monitorLike reports whether thread tid of this process is in the
// nanosleep system call (the monitor's sleep) or running (in a round),
// not in another system call.
func monitorLike(tid int) bool {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/syscall")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 0 && (f[0] == "running" || f[0] == strconv.Itoa(unix.SYS_NANOSLEEP))
}
