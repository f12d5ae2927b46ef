package gorun

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// What a program asks for is never fatal: a cancelled receive, a
// context's end, and a WaitAll that joined only those.
func TestFatalExempt(t *testing.T) {
	canceled := fmt.Errorf("gorun: receive canceled: %w", ErrCanceled)
	trunc := fmt.Errorf("gorun: truncated: %w", ErrTruncate)
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"ErrCanceled wrapped", canceled, true},
		{"context canceled", context.Canceled, true},
		{"deadline exceeded", context.DeadlineExceeded, true},
		{"ErrTruncate", trunc, false},
		{"ErrPeerLost", ErrPeerLost, false},
		{"ErrInvalidArg", ErrInvalidArg, false},
		{"joined cancels", errors.Join(canceled, nil, canceled), true},
		{"joined cancel and truncation", errors.Join(canceled, trunc), false},
		{"joined truncation and a context", errors.Join(trunc, context.Canceled), false},
		{"nested joins of cancels", errors.Join(errors.Join(canceled), context.Canceled), true},
	}
	for _, c := range cases {
		if got := exempt(c.err); got != c.want {
			t.Errorf("%s: exempt(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

func TestCallName(t *testing.T) {
	cases := []struct{ fn, want string }{
		{"(*Comm).Send", "gorun.Comm.Send"},
		{"(*Request).Wait", "gorun.Request.Wait"},
		{"(*Message).Recv", "gorun.Message.Recv"},
		{"SendSlice[...]", "gorun.SendSlice"},
		{"SendrecvSlice[...]", "gorun.SendrecvSlice"},
		{"WaitAll", "gorun.WaitAll"},
		{"", "gorun call"},
	}
	for _, c := range cases {
		if got := callName(c.fn); got != c.want {
			t.Errorf("callName(%q) = %q, want %q", c.fn, got, c.want)
		}
	}
}

// Errors are returned while mpi_base_errors_fatal is false (the default).
func TestFatalCheckDefault(t *testing.T) {
	if errorsFatal.Load() {
		t.Fatal("mpi_base_errors_fatal is on by default")
	}
	if err := fatalCheck(ErrTruncate); err != ErrTruncate {
		t.Fatalf("fatalCheck(ErrTruncate) = %v with errors not fatal", err)
	}
}
