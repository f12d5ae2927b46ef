package gorun

import (
	"context"
	"errors"
	"testing"
	"unsafe"
)

// WaitAll reports every failure, joined (errors.Is finds each), and fills
// every Status, not just the first failure's.
func TestWaitAllJoinsEveryError(t *testing.T) {
	w, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	short := make([]byte, 2)
	trunc, err := w.Irecv(short, 0, 41)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Send([]byte("hello"), 0, 41); err != nil {
		t.Fatal(err)
	}
	canceled, err := w.Irecv(make([]byte, 4), 0, 42)
	if err != nil {
		t.Fatal(err)
	}
	if err := canceled.Cancel(); err != nil {
		t.Fatal(err)
	}
	ok, err := w.Irecv(make([]byte, 8), 0, 43)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Send([]byte("fine"), 0, 43); err != nil {
		t.Fatal(err)
	}
	sts, err := WaitAll(trunc, nil, canceled, ok)
	if !errors.Is(err, ErrTruncate) || !errors.Is(err, ErrCanceled) {
		t.Fatalf("WaitAll(truncated, nil, cancelled, ok) = %v; want an error matching both ErrTruncate and ErrCanceled", err)
	}
	want := []Status{{Source: 0, Tag: 41, Count: 2}, {}, {}, {Source: 0, Tag: 43, Count: 4}}
	for i := range want {
		if sts[i] != want[i] {
			t.Errorf("WaitAll Status %d = %+v, want %+v", i, sts[i], want[i])
		}
	}
}

// WaitContext on a request that has completed returns its result, even
// when ctx is already done (the contract's rule); on one that has not, it
// returns ctx.Err() and the request stays valid.
func TestWaitContextCompleted(t *testing.T) {
	w, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()

	pending, err := w.Irecv(make([]byte, 8), 0, 51)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pending.WaitContext(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitContext(done ctx) on a pending receive = %v, want context.Canceled", err)
	}

	s, err := w.Isend([]byte("payload"), 0, 51)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := s.WaitContext(done); err != nil || st != (Status{}) {
		t.Fatalf("WaitContext(done ctx) on a completed send = %+v, %v; want its result (zero Status, nil)", st, err)
	}
	for { // until the receive has completed, without Wait settling it first
		if _, ok, _ := pending.Test(); ok {
			break
		}
	}
	for range 2 { // and again: the result is final
		if st, err := pending.WaitContext(done); err != nil || st != (Status{Source: 0, Tag: 51, Count: 7}) {
			t.Fatalf("WaitContext(done ctx) on a completed receive = %+v, %v; want its result", st, err)
		}
	}

	// Completed by the send, never tested or waited for before.
	r, err := w.Irecv(make([]byte, 8), 0, 52)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Send([]byte("x"), 0, 52); err != nil {
		t.Fatal(err)
	}
	// Messages to self arrive in order: once the next one is received, r
	// has matched.
	if err := w.Send(nil, 0, 53); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(nil, 0, 53); err != nil {
		t.Fatal(err)
	}
	if st, err := r.WaitContext(done); err != nil || st.Count != 1 {
		t.Fatalf("WaitContext(done ctx) on a receive completed by progress = %+v, %v; want its result", st, err)
	}
}

// TestRequestFits32Bytes: one Request is allocated per Isend and Irecv,
// and its bytes set how often the GC runs in a message-rate loop: at 32
// bytes half as often as at 64.
func TestRequestFits32Bytes(t *testing.T) {
	if n := unsafe.Sizeof(Request{}); n > 32 {
		t.Errorf("a Request is %d bytes; want at most 32 (one is allocated per nonblocking call)", n)
	}
}
