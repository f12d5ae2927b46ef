package pml

import (
	"sync"
	"testing"
)

// TestReqCacheOrderAndBound: a take returns what was put, first in first
// out, nil when empty; a full ring refuses the next put, and takes make
// room again, lap after lap.
func TestReqCacheOrderAndBound(t *testing.T) {
	var c reqCache
	c.init()
	if r := c.takeLocked(); r != nil {
		t.Fatalf("take from an empty cache = %p, want nil", r)
	}
	reqs := make([]*Request, reqCacheSize+1)
	for i := range reqs {
		reqs[i] = new(Request)
	}
	for lap := 0; lap < 3; lap++ {
		for i, r := range reqs[:reqCacheSize] {
			if !c.put(r) {
				t.Fatalf("lap %d: put %d of %d refused", lap, i, reqCacheSize)
			}
		}
		if c.put(reqs[reqCacheSize]) {
			t.Fatalf("lap %d: a put into a full cache was taken", lap)
		}
		for i, want := range reqs[:reqCacheSize] {
			if got := c.takeLocked(); got != want {
				t.Fatalf("lap %d: take %d = %p, want %p", lap, i, got, want)
			}
		}
		if r := c.takeLocked(); r != nil {
			t.Fatalf("lap %d: take from a drained cache = %p, want nil", lap, r)
		}
	}
}

// TestReqCacheConcurrent: goroutines put while a consumer takes under a
// mutex (as receives take under PML.mu): every Request comes out once at
// most, and every one put comes out once the puts are done.
func TestReqCacheConcurrent(t *testing.T) {
	var c reqCache
	c.init()
	const producers, each = 4, 5000
	var (
		mu    sync.Mutex
		seen  = make(map[*Request]int)
		wg    sync.WaitGroup
		kept  [producers]int
		done  = make(chan struct{})
		taken int
	)
	take := func() bool {
		mu.Lock()
		defer mu.Unlock()
		r := c.takeLocked()
		if r == nil {
			return false
		}
		seen[r]++
		taken++
		return true
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-done:
				return
			default:
				take()
			}
		}
	}()
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if c.put(new(Request)) {
					kept[p]++
				}
			}
		}()
	}
	wg.Wait()
	done <- struct{}{}
	<-done
	for take() {
	}
	want := 0
	for _, k := range kept {
		want += k
	}
	if taken != want {
		t.Fatalf("took %d Requests, %d were put", taken, want)
	}
	for r, n := range seen {
		if n != 1 {
			t.Fatalf("Request %p taken %d times", r, n)
		}
	}
}

// TestRecvReusesCachedRequest: a completed receive's Request, once its
// handle has settled, serves the next receive of the PML without the pool.
func TestRecvReusesCachedRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	buf := make([]byte, 8)
	var h Handle
	if err := c[1].StartIrecv(&h, buf, 0, 1); err != nil {
		t.Fatal(err)
	}
	r := h.r
	if r == nil {
		t.Fatal("a receive with no message waiting settled at its start")
	}
	if err := c[0].Send(buf, 1, 1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Wait(nil); err != nil {
		t.Fatal(err)
	}
	var h2 Handle
	if err := c[1].StartIrecv(&h2, buf, 0, 2); err != nil {
		t.Fatal(err)
	}
	if h2.r != r {
		t.Fatalf("the next receive's Request is %p, want the recycled %p", h2.r, r)
	}
	if err := h2.Cancel(); err != nil {
		t.Fatal(err)
	}
}
