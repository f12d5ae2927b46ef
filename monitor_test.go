package gorun

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// quietMonitor sets the monitor thread's timer slack where the kernel lets
// it (CAP_SYS_NICE), and touches no other thread.
func TestQuietMonitor(t *testing.T) {
	slack := func(tid int) string {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/timerslack_ns")
		if err != nil {
			t.Skipf("no timer slack to read: %v", err)
		}
		return strings.TrimSpace(string(b))
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skip(err)
	}
	self, low := os.Getpid(), 0
	before := map[int]string{}
	for _, e := range tasks {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		before[n] = slack(n)
		if n != self && (low == 0 || n < low) {
			low = n
		}
	}
	want := strconv.FormatInt(monitorSlack.Nanoseconds(), 10)
	for try := 0; try < 50 && slack(low) != want; try++ {
		quietMonitor() // the monitor may be in a round, or in another sleep
	}
	if got := slack(low); got != want {
		t.Skipf("the monitor's slack stays %s (no CAP_SYS_NICE?)", got)
	}
	for tid, s := range before {
		if tid != low && slack(tid) != s {
			t.Errorf("thread %d's slack changed from %s to %s", tid, s, slack(tid))
		}
	}
}
