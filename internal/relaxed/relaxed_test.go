package relaxed

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestStores: a stored value is what a load sees, at every width, and a
// reader that sees a flag stored after a value sees the value (the
// release order the package promises; on amd64 without -race this runs
// the plain stores).
func TestStores(t *testing.T) {
	var w64 atomic.Uint64
	var w32 atomic.Uint32
	for _, v := range []uint64{0, 1, 1<<32 - 1, 1 << 32, 1<<64 - 1} {
		Store64(&w64, v)
		Store32(&w32, uint32(v))
		if w64.Load() != v || w32.Load() != uint32(v) {
			t.Fatalf("stored %#x: loaded %#x and %#x", v, w64.Load(), w32.Load())
		}
	}
	const n = 100000
	var data, flag atomic.Uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := uint64(1); i <= n; i++ {
			Store64(&data, i)
			Store64(&flag, i)
		}
	}()
	for seen := uint64(0); seen < n; {
		f := flag.Load()
		if d := data.Load(); d < f {
			t.Fatalf("flag %d seen before its data (%d)", f, d)
		}
		seen = f
	}
	wg.Wait()
}

// TestStorePointer: a pointer stored is what Load and Swap see, and the
// fields written before the store are there for a goroutine that swaps
// it out (the hand-off of pml's spare request); the collector keeps the
// pointee alive (it is a pointer store behind the write barrier).
func TestStorePointer(t *testing.T) {
	type item struct{ a, b int }
	var w atomic.Pointer[item]
	StorePointer(&w, nil)
	if w.Load() != nil {
		t.Fatal("stored nil: loaded non-nil")
	}
	const n = 100000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; i <= n; i++ {
			it := &item{a: i}
			it.b = i
			StorePointer(&w, it)
		}
	}()
	for last := 0; last < n; {
		it := w.Swap(nil)
		if it == nil {
			continue
		}
		if it.a != it.b || it.a <= last {
			t.Fatalf("swapped out {%d %d} after %d", it.a, it.b, last)
		}
		last = it.a
		if last == n {
			break
		}
		runtime.GC()
	}
	wg.Wait()
}
