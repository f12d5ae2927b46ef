package pml

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
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

// The gated looks: every look until quietAfter quiet ones, then one in
// quietEvery.
func TestSkipLook(t *testing.T) {
	for _, tc := range []struct {
		q    uint32
		skip bool
	}{
		{0, false}, {1, false}, {quietAfter - 1, false},
		{quietAfter, quietAfter%quietEvery != 0}, {quietAfter + 1, true},
		{quietEvery, false}, {quietEvery + 1, true}, {2*quietEvery - 1, true}, {2 * quietEvery, false},
		{1<<32 - 1, true},
	} {
		if got := skipLook(tc.q); got != tc.skip {
			t.Errorf("skipLook(%d) = %v, want %v", tc.q, got, tc.skip)
		}
	}
}

// However long the looks found nobody, a goroutine that becomes ready is
// seen within quietEvery gated looks, and a look that sees it makes the
// next ones look again.
func TestOthersReadyAfterQuiet(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var w waitState
	w.quiet.Store(5*quietEvery + 1) // long quiet: looks are skipped
	// A goroutine that stays ready to run whenever this one runs: it
	// only passes the only P on.
	var stop atomic.Bool
	done := make(chan bool)
	go func() {
		for !stop.Load() {
			runtime.Gosched()
		}
		close(done)
	}()
	seen := -1
	for i := 0; i < quietEvery && seen < 0; i++ {
		if w.othersReady() {
			seen = i
		}
	}
	if seen < 0 {
		t.Fatalf("%d gated looks missed a goroutine waiting for the only P", quietEvery)
	}
	if !w.othersReady() {
		t.Error("the look right after one that saw a ready goroutine did not look")
	}
	stop.Store(true)
	<-done
}
