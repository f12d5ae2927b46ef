package pml

import (
	"errors"
	"sync"
	"testing"

	"github.com/gorun-mpi/gorun/btl/sm"
	"github.com/gorun-mpi/gorun/internal/errs"
)

// TestFinalizeSharedBarrier: two ranks over sm finalize through the
// segment's barrier, and rank 1's sends queued for rank 0's full FIFO
// have all reached rank 0 before rank 1 closes (it arrives only then, and
// rank 0 drains its FIFO while it waits for the release).
func TestFinalizeSharedBarrier(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	comms := smCommsSpin(t, 1)
	for r := range 2 {
		if comms[r].p.jobBarrier() == nil {
			t.Fatalf("rank %d: no shared barrier over sm", r)
		}
	}
	mod := comms[1].p.peers[0].m.(*sm.Module)
	const flood = 3000 // more than a FIFO holds: sends queue
	msg := make([]byte, 64)
	for i := 0; i < flood; i++ {
		if err := comms[1].Send(msg, 0, 5, false); err != nil {
			t.Fatal(err)
		}
	}
	mark := mod.QueueMark(0)
	if mod.Flushed(0, mark) {
		t.Fatal("no send queued: the flood did not fill rank 0's FIFO")
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := comms[r].p
			errs[r] = p.Finalize(p.World())
		}()
	}
	// Rank 0's Finalize must not close before rank 1 arrived, which it
	// does only once its queue has drained into rank 0's FIFO.
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: Finalize: %v", r, err)
		}
	}
	if !mod.Flushed(0, mark) {
		t.Error("rank 1 finalized with sends to rank 0 still queued (dropped by Close)")
	}
}

// TestFinalizeSharedBarrierPeerLost: a rank waiting in the shared barrier
// for a rank that is found gone fails with ErrPeerLost instead of waiting
// for gorun to stop the job.
func TestFinalizeSharedBarrierPeerLost(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a segment")
	}
	comms := smCommsSpin(t, 1)
	p := comms[0].p
	if p.jobBarrier() == nil {
		t.Fatal("no shared barrier over sm")
	}
	done := make(chan error)
	go func() { done <- p.Finalize(p.World()) }()
	p.onPeerLost(1)
	if err := <-done; !errors.Is(err, errs.ErrPeerLost) {
		t.Errorf("Finalize with rank 1 gone: %v, want ErrPeerLost", err)
	}
	comms[1].p.Close()
}
