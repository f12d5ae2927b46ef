package spinlock

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

var _ sync.Locker = (*Mutex)(nil)

// TestExclusion: goroutines that increment a plain counter under the lock
// lose no increment, with more goroutines than Ps (waiters yield and
// sleep) and with one P.
func TestExclusion(t *testing.T) {
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			var mu Mutex
			var n int
			const goroutines, each = 8, 20000
			var wg sync.WaitGroup
			for g := 0; g < goroutines; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < each; i++ {
						mu.Lock()
						n++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if n != goroutines*each {
				t.Fatalf("GOMAXPROCS %d: counter %d, want %d", procs, n, goroutines*each)
			}
		}()
	}
}

// TestTryLock: TryLock takes a free lock only; a held lock makes Lock wait
// until Unlock, even across a long hold (the sleeping phase).
func TestTryLock(t *testing.T) {
	var mu Mutex
	if !mu.TryLock() {
		t.Fatal("TryLock of a free lock failed")
	}
	if mu.TryLock() {
		t.Fatal("TryLock of a held lock succeeded")
	}
	got := make(chan time.Time)
	go func() {
		mu.Lock()
		at := time.Now()
		mu.Unlock()
		got <- at // after Unlock: the TryLock below must then succeed
	}()
	time.Sleep(20 * time.Millisecond)
	released := time.Now()
	mu.Unlock()
	if at := <-got; at.Before(released) {
		t.Fatal("Lock returned while the lock was held")
	}
	if !mu.TryLock() {
		t.Fatal("TryLock after the other goroutine's Unlock failed")
	}
	mu.Unlock()
}

// TestUnlockUnlocked panics, as sync.Mutex's does (a fatal error there).
func TestUnlockUnlocked(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Unlock of an unlocked Mutex did not panic")
		}
	}()
	var mu Mutex
	mu.Unlock()
}

func BenchmarkLockUnlock(b *testing.B) {
	var mu Mutex
	for i := 0; i < b.N; i++ {
		mu.Lock()
		mu.Unlock()
	}
}

func BenchmarkSyncMutex(b *testing.B) {
	var mu sync.Mutex
	for i := 0; i < b.N; i++ {
		mu.Lock()
		mu.Unlock()
	}
}
