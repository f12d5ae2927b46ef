package pml

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml/match"
)

// TestHandleRecyclesRequests: a nonblocking operation costs one small
// Handle; its Request comes from the PML's cache (or the pool) and goes
// back once waited for.
func TestHandleRecyclesRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	sbuf, rbuf := []byte("12345678"), make([]byte, 8)
	cycle := func() {
		var hr, hs Handle
		if err := c[1].StartIrecv(&hr, rbuf, 0, 7); err != nil {
			t.Fatal(err)
		}
		if err := c[0].StartIsend(&hs, sbuf, 1, 7, false); err != nil {
			t.Fatal(err)
		}
		waitPair(t, &hs, &hr, len(sbuf))
	}
	cycle()
	// Each cycle allocates its two Handles (they escape) but no Request.
	// sync.Pool drops a quarter of its items under -race; allow for that,
	// not for a Request per operation.
	made := reqsMade.Load()
	if a := testing.AllocsPerRun(200, cycle); a > 2.6 {
		t.Errorf("%.2f allocations per Irecv+Isend pair; want 2 (the Handles)", a)
	}
	if n := reqsMade.Load() - made; n > 200 {
		t.Errorf("the pool made %d Requests for 400 operations; want them recycled", n)
	}
	if !bytes.Equal(rbuf, sbuf) {
		t.Errorf("received %q; want %q", rbuf, sbuf)
	}
}

// waitPair waits for send hs and receive hr; the receive must bring n
// bytes.
func waitPair(t *testing.T, hs, hr *Handle, n int) {
	t.Helper()
	if _, err := hs.Wait(nil); err != nil {
		t.Fatal(err)
	}
	if st, err := hr.Wait(nil); err != nil || st.Count != n {
		t.Fatalf("receive: %+v, %v; want %d bytes", st, err, n)
	}
}

// TestHandleConcurrentUse: many goroutines Wait, Test, Done and Cancel the
// same handles while their messages arrive; every one sees the same final
// result, and no Request is recycled while another goroutine can reach it
// (the race detector watches the pool).
func TestHandleConcurrentUse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	const ops, users = 200, 4
	for i := range ops {
		var h Handle
		rbuf := make([]byte, 8)
		if err := c[1].StartIrecv(&h, rbuf, 0, i); err != nil {
			t.Fatal(err)
		}
		cancel := i%10 == 9 // some receives are canceled instead
		var wg sync.WaitGroup
		results := make([]Status, users)
		errsOut := make([]error, users)
		for u := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch u % 3 {
				case 0:
					results[u], errsOut[u] = h.Wait(nil)
				case 1:
					for {
						st, ok, err := h.Test()
						if ok {
							results[u], errsOut[u] = st, err
							return
						}
						_ = h.Done()
					}
				case 2:
					if cancel {
						h.Cancel()
					}
					results[u], errsOut[u] = h.Wait(nil)
				}
			}()
		}
		if !cancel {
			if err := c[0].Send([]byte("abcdefgh"), 1, i, false); err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
		for u := range users {
			if results[u] != results[0] || !errors.Is(errsOut[u], errsOut[0]) && errsOut[u] != errsOut[0] {
				t.Fatalf("op %d: user %d saw %+v, %v; user 0 saw %+v, %v", i, u, results[u], errsOut[u], results[0], errsOut[0])
			}
		}
		switch {
		case cancel && !errors.Is(errsOut[0], errs.ErrCanceled):
			t.Fatalf("op %d: canceled receive ended with %v", i, errsOut[0])
		case !cancel && (errsOut[0] != nil || results[0].Count != 8 || string(rbuf) != "abcdefgh"):
			t.Fatalf("op %d: %+v, %v, %q", i, results[0], errsOut[0], rbuf)
		}
	}
}

// TestHandleClaimOnce: Claim succeeds once however many goroutines try,
// on a pending handle and on one completed at its start, and does not
// disturb the holder count (the handle still settles and recycles).
func TestHandleClaimOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	for _, pending := range []bool{true, false} {
		var h Handle
		buf := make([]byte, 8)
		if !pending {
			if err := c[0].Send([]byte("early!!!"), 1, 9, false); err != nil {
				t.Fatal(err)
			}
			arrive(c[1])
		}
		if err := c[1].StartIrecv(&h, buf, 0, 9); err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if h.Claim() {
					wins.Add(1)
				}
				_ = h.Done()
			}()
		}
		wg.Wait()
		if w := wins.Load(); w != 1 || !h.Claimed() {
			t.Errorf("pending=%v: %d Claims succeeded (Claimed %v); want exactly 1", pending, w, h.Claimed())
		}
		if pending {
			if err := c[0].Send([]byte("late!!!!"), 1, 9, false); err != nil {
				t.Fatal(err)
			}
		}
		if st, err := h.Wait(nil); err != nil || st.Count != 8 {
			t.Fatalf("pending=%v: Wait = %+v, %v", pending, st, err)
		}
		if h.word.Load()&^(hSettled|hClaimed) != 0 && pending {
			t.Errorf("pending=%v: word %#x after the last Wait; want no holder and no writer", pending, h.word.Load())
		}
	}
}

// TestHandleWaitSoleThenTimeout: a Wait that found the handle alone (the
// one-CAS path) and ends with its context leaves the handle as it was: a
// later Wait settles it with the message's result, and the word is left
// with no holder and no writer.
func TestHandleWaitSoleThenTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	var h Handle
	buf := make([]byte, 8)
	if err := c[1].StartIrecv(&h, buf, 0, 21); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Wait(ctx); err == nil {
		t.Fatal("Wait with a canceled context and no message returned nil")
	}
	if w := h.word.Load(); w != 0 {
		t.Fatalf("word %#x after the canceled Wait; want 0", w)
	}
	if err := c[0].Send(pattern(8, 21), 1, 21, false); err != nil {
		t.Fatal(err)
	}
	st, err := h.Wait(nil)
	if err != nil || st.Count != 8 || !bytes.Equal(buf, pattern(8, 21)) {
		t.Fatalf("second Wait: %+v, %v", st, err)
	}
	if w := h.word.Load(); w != hSettled {
		t.Errorf("word %#x after the Wait; want settled (%#x) alone", w, hSettled)
	}
	if st2, err2 := h.Wait(nil); st2 != st || err2 != err {
		t.Errorf("Wait again: %+v, %v; want %+v, %v", st2, err2, st, err)
	}
}

// TestHandleKeepsError: a Handle has no room for an error; a failed
// operation keeps its Request, and every later Wait, Test and Done sees the
// same Status and error, whichever way it completed: inside its start
// (the message was waiting), in a Wait, or in a Test.
func TestHandleKeepsError(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	sbuf := []byte("12345678")
	for _, how := range []string{"start", "wait", "test"} {
		t.Run(how, func(t *testing.T) {
			var hr, hs Handle
			rbuf := make([]byte, 3) // short: ErrTruncate
			send := func() {
				if err := c[0].StartIsend(&hs, sbuf, 1, 9, false); err != nil {
					t.Fatal(err)
				}
				if _, err := hs.Wait(nil); err != nil {
					t.Fatal(err)
				}
			}
			if how == "start" {
				send()
				if _, err := c[1].Probe(0, 9); err != nil { // the message is here
					t.Fatal(err)
				}
			}
			if err := c[1].StartIrecv(&hr, rbuf, 0, 9); err != nil {
				t.Fatal(err)
			}
			if how != "start" {
				send()
			}
			if how == "test" {
				for {
					if _, done, _ := hr.Test(); done {
						break
					}
				}
			}
			want := Status{Source: 0, Tag: 9, Count: 3}
			for i := range 2 {
				st, err := hr.Wait(nil)
				if !errors.Is(err, errs.ErrTruncate) || st != want {
					t.Fatalf("Wait %d = %+v, %v; want %+v and ErrTruncate", i, st, err, want)
				}
				st, done, err := hr.Test()
				if !done || !errors.Is(err, errs.ErrTruncate) || st != want {
					t.Fatalf("Test %d = %+v, %v, %v; want %+v, done and ErrTruncate", i, st, done, err, want)
				}
			}
			if !hr.Done() || hr.PML() != nil {
				t.Errorf("Done %v, PML %v; want true and nil (settled)", hr.Done(), hr.PML())
			}
		})
	}
}

// TestHandleSettledByDelivery: a posted receive whose message is delivered
// while no goroutine holds its handle (another goroutine's progress, a
// Wait on another request) is settled by the delivery itself: the result
// is in the handle, the Request is back in the PML's free list at once and
// serves the next receive, and Wait, Test, Done and Cancel answer from the
// handle. A claim made before the delivery survives it. The same holds
// for a receive that finds its message waiting at its start.
func TestHandleSettledByDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	p := c[1].p
	for _, how := range []string{"posted", "claimed", "waiting"} {
		t.Run(how, func(t *testing.T) {
			var h Handle
			rbuf := make([]byte, 8)
			send := func() {
				if err := c[0].Send([]byte("settled!"), 1, 5, false); err != nil {
					t.Fatal(err)
				}
			}
			if how == "waiting" {
				send()
				arrive(c[1])
			}
			if err := c[1].StartIrecv(&h, rbuf, 0, 5); err != nil {
				t.Fatal(err)
			}
			var r *Request
			if how == "waiting" {
				if h.r != nil {
					t.Fatalf("a receive that found its message keeps Request %p", h.r)
				}
			} else {
				r = h.r
				if r == nil || r.h != &h {
					t.Fatalf("posted receive: h.r %p, its h %p; want each other", r, r.h)
				}
				if st, ok := h.Settled(); ok {
					t.Fatalf("Settled = %+v, true on a posted receive", st)
				}
				if how == "claimed" && !h.Claim() {
					t.Fatal("Claim failed on a fresh handle")
				}
				send()
				for i := 0; i < 1e6 && h.word.Load()&hSettled == 0; i++ { // nobody holds h: progress alone
					p.Progress()
				}
				want := uint32(hSettled)
				if how == "claimed" {
					want |= hClaimed
				}
				if w := h.word.Load(); w != want {
					t.Fatalf("word %#x after the delivery; want %#x", w, want)
				}
				p.mu.Lock()
				free := p.nFree > 0 && p.reqFree[p.nFree-1] == r
				p.mu.Unlock()
				if !free || r.buf != nil || r.recv.Posted() {
					t.Fatalf("Request %p: on the free list %v, buffer %v, posted %v; want recycled without its buffer (recycleLocked)", r, free, r.buf != nil, r.recv.Posted())
				}
			}
			want := Status{Source: 0, Tag: 5, Count: 8}
			if st, ok := h.Settled(); !ok || st != want {
				t.Fatalf("Settled = %+v, %v; want %+v, true", st, ok, want)
			}
			for i := range 2 {
				if st, err := h.Wait(nil); err != nil || st != want {
					t.Fatalf("Wait %d = %+v, %v; want %+v", i, st, err, want)
				}
				if st, done, err := h.Test(); !done || err != nil || st != want {
					t.Fatalf("Test %d = %+v, %v, %v", i, st, done, err)
				}
			}
			if !h.Done() || h.PML() != nil || h.Cancel() != nil || string(rbuf) != "settled!" {
				t.Fatalf("Done %v, PML %v, buffer %q", h.Done(), h.PML(), rbuf)
			}
			if r != nil {
				var h2 Handle
				if err := c[1].StartIrecv(&h2, rbuf, 0, 6); err != nil {
					t.Fatal(err)
				}
				if h2.r != r {
					t.Fatalf("the next receive's Request is %p, want the recycled %p", h2.r, r)
				}
				if err := h2.Cancel(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestHandleDeliveryLeavesErrors: a receive that fails (truncated) while
// nobody holds its handle is completed as usual, not settled by its
// delivery (the handle has no room for the error): its Request stays with
// the handle and every Wait sees the error.
func TestHandleDeliveryLeavesErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	var h Handle
	if err := c[1].StartIrecv(&h, make([]byte, 3), 0, 4); err != nil {
		t.Fatal(err)
	}
	r := h.r
	if err := c[0].Send([]byte("12345678"), 1, 4, false); err != nil {
		t.Fatal(err)
	}
	for !r.Done() { // r is not recycled: it failed
		c[1].p.Progress()
	}
	if w := h.word.Load(); w != 0 {
		t.Fatalf("word %#x after a failed delivery; want 0 (the first holder settles)", w)
	}
	want := Status{Source: 0, Tag: 4, Count: 3}
	for i := range 2 {
		if st, err := h.Wait(nil); !errors.Is(err, errs.ErrTruncate) || st != want {
			t.Fatalf("Wait %d = %+v, %v; want %+v and ErrTruncate", i, st, err, want)
		}
		if st, ok := h.Settled(); ok {
			t.Fatalf("Settled = %+v, true on a failed receive (its error is Wait's to return)", st)
		}
	}
}

// TestArriveMatchesPostedDirectly: an eager message in its turn whose
// receive is posted is matched without a match.Msg (none is taken from or
// returned to the free list), by the same rule as every other match: the
// earliest-posted receive that accepts it, a wildcard included, and in
// the senders' order.
func TestArriveMatchesPostedDirectly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	p := c[1].p
	for _, wildFirst := range []bool{true, false} {
		var hw, hs Handle
		wbuf, sbuf := make([]byte, 8), make([]byte, 8)
		post := func(h *Handle, buf []byte, src int) {
			if err := c[1].StartIrecv(h, buf, src, match.AnyTag); err != nil {
				t.Fatal(err)
			}
		}
		if wildFirst {
			post(&hw, wbuf, match.AnySource)
			post(&hs, sbuf, 0)
		} else {
			post(&hs, sbuf, 0)
			post(&hw, wbuf, match.AnySource)
		}
		p.mu.Lock()
		p.msgFree = p.msgFree[:0] // a Msg taken and freed would show here
		p.mu.Unlock()
		for _, m := range []string{"first!!!", "second!!"} {
			if err := c[0].Send([]byte(m), 1, 3, false); err != nil {
				t.Fatal(err)
			}
		}
		first, second := &hs, &hw
		fbuf, sbuf2 := sbuf, wbuf
		if wildFirst {
			first, second, fbuf, sbuf2 = &hw, &hs, wbuf, sbuf
		}
		for _, h := range []*Handle{first, second} {
			if st, err := h.Wait(nil); err != nil || st.Source != 0 || st.Tag != 3 || st.Count != 8 {
				t.Fatalf("wildcard first %v: %+v, %v", wildFirst, st, err)
			}
		}
		if string(fbuf) != "first!!!" || string(sbuf2) != "second!!" {
			t.Fatalf("wildcard first %v: the earlier-posted receive got %q, the other %q", wildFirst, fbuf, sbuf2)
		}
		p.mu.Lock()
		n := len(p.msgFree)
		p.mu.Unlock()
		if n != 0 {
			t.Errorf("wildcard first %v: %d Msgs went through the free list; want none", wildFirst, n)
		}
	}
}

// TestRecycledReceiveIsZero: recycleLocked drops only the buffer of a
// receive settled by its eager delivery; whatever the receive
// (a source or AnySource, a tag or AnyTag, on the world or a Dup, from a
// plain or a synchronous send, a payload of 0 to 100 bytes), the Request
// it puts on the free list is a zero Request again, but for the fields
// every post sets again (recycleLocked): no buffer, no links.
func TestRecycledReceiveIsZero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	c := smComms(t)
	dup := dupPair(t, c)
	p := c[1].p
	for _, comm := range []string{"world", "dup"} {
		cs := c
		if comm == "dup" {
			cs = dup
		}
		for _, src := range []int{0, match.AnySource} {
			for _, tag := range []int{7, match.AnyTag} {
				for _, sync := range []bool{false, true} {
					for _, n := range []int{0, 5, 16, 100} {
						var h Handle
						if err := cs[1].StartIrecv(&h, make([]byte, 128), src, tag); err != nil {
							t.Fatal(err)
						}
						r := h.r
						if r == nil {
							t.Fatal("the receive was not posted")
						}
						var hs Handle
						if err := cs[0].StartIsend(&hs, make([]byte, n), 1, 7, sync); err != nil {
							t.Fatal(err)
						}
						for i := 0; i < 1e6 && h.word.Load()&hSettled == 0; i++ {
							p.Progress()
							c[0].p.Progress()
						}
						if _, err := hs.Wait(nil); err != nil {
							t.Fatal(err)
						}
						p.mu.Lock()
						free := p.nFree > 0 && p.reqFree[p.nFree-1] == r
						// Zero but for what every post sets again (recycleLocked).
						want := &Request{p: r.p, kind: r.kind, userTag: r.userTag, grp: r.grp, h: r.h, peer: r.peer, tag: r.tag}
						want.recv = r.recv // its post order (Post sets it again) and its links, which Posted shows nil
						zero := reflect.DeepEqual(r, want) && !r.recv.Posted() && r.recv.Data == r && r.buf == nil
						p.mu.Unlock()
						if !free || !zero {
							t.Fatalf("%s src %d tag %d sync %v, %d bytes: Request on the free list %v, zero but for what a post sets %v: %+v",
								comm, src, tag, sync, n, free, zero, r)
						}
						if st, err := h.Wait(nil); err != nil || st.Count != n {
							t.Fatalf("Wait = %+v, %v", st, err)
						}
					}
				}
			}
		}
	}
}
