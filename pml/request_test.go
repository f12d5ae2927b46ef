package pml

import (
	"reflect"
	"sync"
	"testing"
)

// TestResetStates: a completed Request is reusable unless its completion
// may still be touching it (finish waking a waiter it has not finished
// waking).
func TestResetStates(t *testing.T) {
	for _, tc := range []struct {
		state uint32
		early bool
		want  bool
	}{
		{0, false, false},
		{0, true, true},
		{stDone, false, true},
		{stWaiter, false, false},
		{stDone | stWaiter, false, false},
		{stDone | stWaiter | stWoken, false, true},
	} {
		r := &Request{kind: kindRecv, early: tc.early, peer: 3}
		r.state.Store(tc.state)
		if got := reset(r); got != tc.want {
			t.Errorf("reset of a Request in state %#x (early %v) = %v, want %v", tc.state, tc.early, got, tc.want)
		}
		if tc.want && (r.peer != 0 || r.state.Load() != 0) {
			t.Errorf("reset of a Request in state %#x left %+v", tc.state, r)
		}
	}
}

// TestFinishWakesThenReusable: once finish has woken a blocked waiter and
// set stWoken, the Request is reusable (no allocation per blocking Recv).
// TestSpareZeroedWhenTaken: a blocking call's request goes back as the
// spare without its buffer, is zero when the next call takes it, and is not
// kept while its completion may still be touching it.
func TestSpareZeroedWhenTaken(t *testing.T) {
	for _, tc := range []struct {
		state uint32
		early bool
		kept  bool
	}{
		{stDone, false, true},
		{0, true, true},
		{stDone | stWaiter | stWoken, false, true},
		{stDone | stWaiter, false, false},
		{0, false, false},
	} {
		p := &PML{}
		r := p.getReq()
		r.kind, r.buf, r.peer, r.early = kindRecv, make([]byte, 8), 3, tc.early
		r.status = Status{Source: 3, Tag: 7, Count: 8}
		r.state.Store(tc.state)
		p.putReq(r)
		if got := p.spare.Load(); (got == r) != tc.kept {
			t.Errorf("state %#x early %v: kept as the spare %v, want %v", tc.state, tc.early, got == r, tc.kept)
			continue
		}
		if !tc.kept {
			continue
		}
		if r.buf != nil {
			t.Errorf("state %#x early %v: the spare keeps the caller's buffer", tc.state, tc.early)
		}
		if got := p.getReq(); got != r {
			t.Errorf("state %#x early %v: getReq took %p, not the spare %p", tc.state, tc.early, got, r)
		} else if !reflect.ValueOf(got).Elem().IsZero() {
			t.Errorf("state %#x early %v: the spare is not zero when taken: %+v", tc.state, tc.early, got)
		}
		if p.spare.Load() != nil {
			t.Errorf("state %#x early %v: the spare is still there after getReq took it", tc.state, tc.early)
		}
	}
}

func TestFinishWakesThenReusable(t *testing.T) {
	for range 100 {
		r := &Request{kind: kindRecv}
		ch := r.waitChan()
		if ch == nil {
			t.Fatal("waitChan of a pending request returned nil")
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.finish(Status{Count: 5}, nil)
		}()
		<-ch
		wg.Wait()
		if s := r.state.Load(); s != stDone|stWaiter|stWoken {
			t.Fatalf("state after finish woke its waiter = %#x, want %#x", s, stDone|stWaiter|stWoken)
		}
		if r.status.Count != 5 || !reset(r) {
			t.Fatalf("completed, woken Request: status %+v, reset refused", r.status)
		}
	}
}

// TestBlockingRecvReusesRequest: ranks that block in every Recv (spin
// count 1) reuse the blocking call's Request instead of leaving one to
// the GC per blocked receive.
func TestBlockingRecvReusesRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smCommsSpin(t, 1)
	const n = 300
	buf0, buf1 := make([]byte, 8, 4096), make([]byte, 8, 4096)
	made := reqsMade.Load()
	done := make(chan error, 1)
	go func() {
		for range n {
			if _, err := c[1].Recv(buf1, 0, 1); err != nil {
				done <- err
				return
			}
			if err := c[1].Send(buf1, 0, 1, false); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range n {
		if err := c[0].Send(buf0, 1, 1, false); err != nil {
			t.Fatal(err)
		}
		if _, err := c[0].Recv(buf0, 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A handful for the spares and the pool; not one per blocked Recv.
	if m := reqsMade.Load() - made; m > 8 {
		t.Errorf("%d blocking receives made %d Requests; want them reused", 2*n, m)
	}
}

// TestRecycleOverflowZeroes: a receive recycled while reqFree is full
// goes to the request cache zeroed, not in the partial state reqFree's
// entries keep (recycleLocked).
func TestRecycleOverflowZeroes(t *testing.T) {
	p := &PML{}
	p.nFree = reqFreeMax
	var h Handle
	r := &Request{p: p, kind: kindRecv, buf: make([]byte, 8), userTag: 7, peer: 3, tag: 7, h: &h}
	r.recv.Src, r.recv.Tag, r.recv.Data = 3, 7, r
	p.mu.Lock()
	p.recycleLocked(r)
	got := p.reqs.takeLocked()
	p.mu.Unlock()
	if p.nFree != reqFreeMax {
		t.Fatalf("reqFree holds %d, want it left full (%d)", p.nFree, reqFreeMax)
	}
	if got != r {
		t.Fatalf("the request cache gave %p, want the recycled %p", got, r)
	}
	if !reflect.ValueOf(got).Elem().IsZero() {
		t.Errorf("a receive recycled past reqFree is not zero: %+v", got)
	}
}
