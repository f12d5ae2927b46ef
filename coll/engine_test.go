package coll

import (
	"errors"
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml"
)

// TestCollErr: a truncated receive of a collective reads as the
// collective's error, naming it and both lengths but not the hidden tag,
// and still matches ErrTruncate; other errors pass unchanged; every kind
// has its API name.
func TestCollErr(t *testing.T) {
	s := Schedule{Coll: KAllgatherv}
	err := s.collErr(&pml.TruncateError{Size: 24, Buf: 16, Source: 3, Tag: 16})
	want := "gorun: Allgatherv: rank 3 sent 24 bytes where this rank's receive buffer holds 16"
	if !errors.Is(err, errs.ErrTruncate) || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "tag") {
		t.Errorf("collErr = %q; want ErrTruncate starting %q, without a tag", err, want)
	}
	other := errors.New("peer lost")
	if got := s.collErr(other); got != other {
		t.Errorf("collErr(%v) = %v; want it unchanged", other, got)
	}
	for k := KBarrier; k < nKinds; k++ {
		if n := k.String(); n == "" || n == CollKind(0).String() {
			t.Errorf("kind %d has no name", k)
		}
	}
}
