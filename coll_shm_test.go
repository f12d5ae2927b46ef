package gorun

import (
	"testing"

	"github.com/gorun-mpi/gorun/coll/shm"
)

// TestFitSlot: an oversubscribed communicator's segment stays within
// shmMaxSegment, the slot halving down to (never below) the small one.
func TestFitSlot(t *testing.T) {
	for _, c := range []struct{ n, slot, base, want int }{
		{2, 4 << 20, 16 << 10, 4 << 20},
		{8, 4 << 20, 16 << 10, 4 << 20},     // 64 MiB
		{32, 4 << 20, 16 << 10, 2 << 20},    // 4 MiB cells and their headers pass 256 MiB
		{64, 4 << 20, 16 << 10, 1 << 20},    // 128 MiB
		{1024, 4 << 20, 16 << 10, 64 << 10}, // 128 MiB
		{1 << 20, 4 << 20, 16 << 10, 16 << 10},
		{8, 24, 16, 24},
		{8, 4<<20 + 8, 16 << 10, 4<<20 + 8},
	} {
		got := fitSlot(c.n, c.slot, c.base)
		if got != c.want || got%8 != 0 {
			t.Errorf("fitSlot(%d ranks, %d, base %d) = %d, want %d", c.n, c.slot, c.base, got, c.want)
		}
		if got > c.base && shm.Size(c.n, got) > shmMaxSegment {
			t.Errorf("fitSlot(%d ranks, %d): a segment of %d bytes", c.n, c.slot, shm.Size(c.n, got))
		}
	}
}
