package main

import "testing"

// arriving and final agree with a ring simulated in one process.
func TestTokenValues(t *testing.T) {
	for size := 1; size <= 9; size++ {
		for laps := 1; laps <= 4; laps++ {
			token := int64(0)
			for lap := range laps {
				// rank 0 sends; ranks 1..size-1 receive, add, send; rank 0 receives and adds.
				for r := 1; r < size; r++ {
					if got := arriving(lap, r, size); got != token {
						t.Fatalf("size %d lap %d: arriving at rank %d = %d, simulated %d", size, lap, r, got, token)
					}
					token++
				}
				if got := arriving(lap, 0, size); got != token {
					t.Fatalf("size %d lap %d: arriving at rank 0 = %d, simulated %d", size, lap, got, token)
				}
				token++
			}
			if got := final(laps, size); got != token {
				t.Fatalf("final(%d, %d) = %d, simulated %d", laps, size, got, token)
			}
		}
	}
	if final(3, 4) != 12 {
		t.Errorf("final(3, 4) = %d, want 12 (the README's ring: 3 laps of 4 ranks)", final(3, 4))
	}
}
