package sm

import (
	"sync"
	"testing"
	"time"
)

// TestBarrierReleasesAtLastArrival: no rank is released until every rank
// of the segment has arrived, a second Arrive of one rank does not count
// twice, and the last arrival releases all of them.
func TestBarrierReleasesAtLastArrival(t *testing.T) {
	mods := newJob(t, 4, DefaultConfig())
	for i := 0; i < 3; i++ {
		mods[i].Arrive()
		mods[i].Arrive()
		for j, m := range mods {
			if m.Released() {
				t.Fatalf("rank %d released after ranks 0..%d arrived (each twice)", j, i)
			}
		}
	}
	mods[3].Arrive()
	for j, m := range mods {
		if !m.Released() {
			t.Errorf("rank %d not released after every rank arrived", j)
		}
	}
}

// TestBarrierWakesSleeper: a rank asleep in Sleep (no timeout) when the
// last rank arrives is woken by it (its futex word is bumped), and a Sleep
// of a released rank returns at once instead of waiting for work that
// will never come.
func TestBarrierWakesSleeper(t *testing.T) {
	mods := newJob(t, 2, DefaultConfig())
	done := make(chan struct{})
	go func() {
		defer close(done)
		mods[1].Arrive()
		for !mods[1].Released() {
			mods[1].Sleep(0)
		}
		mods[1].Sleep(0) // released: returns at once
	}()
	c := mods[1].ctl
	for c.armed.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	seq := c.wakeSeq.Load()
	mods[0].Arrive()
	<-done
	if c.wakeSeq.Load() == seq {
		t.Error("the last arrival did not wake the sleeping rank (wakeSeq unchanged)")
	}
}

// TestBarrierConcurrent: many ranks arrive and wait at once, each sleeping
// as a waiting rank does; all are released, none early.
func TestBarrierConcurrent(t *testing.T) {
	const n = 16
	mods := newJob(t, n, DefaultConfig())
	var wg sync.WaitGroup
	var mu sync.Mutex
	arrived := 0
	for _, m := range mods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			arrived++
			mu.Unlock()
			m.Arrive()
			for !m.Released() {
				m.Progress()
				m.Sleep(0)
			}
			mu.Lock()
			if arrived != n {
				t.Errorf("rank %d released when %d of %d ranks had arrived", m.rank, arrived, n)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
}

// TestBarrierAfterClose: a closed module is never released and Arrive
// does nothing (the segment is unmapped).
func TestBarrierAfterClose(t *testing.T) {
	mods := newJob(t, 2, DefaultConfig())
	mods[0].Arrive()
	mods[1].Close()
	mods[1].Arrive()
	if mods[0].Released() {
		t.Error("released although rank 1 closed without arriving")
	}
	if mods[1].Released() {
		t.Error("a closed module reports Released")
	}
}
