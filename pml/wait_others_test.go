package pml

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

// The run-queue count that waits look at exists in this Go runtime, and
// othersRunnable sees a goroutine that waits for the only P.
func TestOthersRunnable(t *testing.T) {
	s := []metrics.Sample{{Name: runnable.s[0].Name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("runtime/metrics has no %s: waits cannot see the rank's other goroutines", s[0].Name)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ran := make(chan bool)
	go func() { ran <- true }() // runnable, not running: we hold the only P
	if !othersRunnable() {
		t.Error("othersRunnable() = false with a goroutine waiting for the only P")
	}
	<-ran
}
