package pml

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// hangDeadline bounds one pml test that runs over shared memory or the
// fake network: each takes a few seconds even under -race on two loaded
// cores, so a test still running after this has lost progress or a wake-up.
const hangDeadline = 60 * time.Second

// hangGuard makes a hung test fail after d with every goroutine's stack,
// instead of after go test's 10-minute timeout with a dump of the wrong
// moment. It stops when t ends. Benchmarks run as long as they need: for
// them it does nothing.
func hangGuard(tb testing.TB, d time.Duration) {
	if _, ok := tb.(*testing.T); !ok {
		return
	}
	name := tb.Name()
	tm := time.AfterFunc(d, func() {
		fmt.Fprintf(os.Stderr, "\n%s has not ended after %v (pml hang guard); every goroutine:\n\n%s\n", name, d, allStacks())
		panic(name + ": hung (see the goroutines above)")
	})
	tb.Cleanup(func() { tm.Stop() })
}

// allStacks returns the stacks of every goroutine.
func allStacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestHangGuardStops: a guard whose test ends in time never fires (the
// timer is stopped by Cleanup; a fired one would crash this binary).
func TestHangGuardStops(t *testing.T) {
	t.Run("short", func(t *testing.T) { hangGuard(t, 200*time.Millisecond) })
	time.Sleep(400 * time.Millisecond)
}
