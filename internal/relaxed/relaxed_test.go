package relaxed

import (
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
