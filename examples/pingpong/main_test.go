package main

import (
	"strings"
	"testing"
)

// A message filled and stamped by one rank passes the other rank's checks,
// and each kind of corruption is caught.
func TestPatternChecks(t *testing.T) {
	for _, n := range sizes {
		b := make([]byte, n)
		fill(b, 1, n)
		stamp(b, 1, 42)
		if err := checkStamp(b, 1, 42); err != nil {
			t.Fatalf("%d B: good stamp rejected: %v", n, err)
		}
		if err := check(b, 1, n); err != nil {
			t.Fatalf("%d B: good message rejected: %v", n, err)
		}
		if n == 0 {
			continue
		}
		errBody, errStamp := check(b, 0, n), checkStamp(b, 0, 42)
		if errBody == nil && errStamp == nil {
			t.Errorf("%d B: rank 1's message accepted as rank 0's", n)
		}
		if n >= 8 {
			if err := checkStamp(b, 1, 41); err == nil || !strings.Contains(err.Error(), "iteration 41") {
				t.Errorf("%d B: stale stamp: err = %v, want a stamp error", n, err)
			}
		}
		if n > 8 {
			b[n-1] ^= 0xff
			if err := check(b, 1, n); err == nil || !strings.Contains(err.Error(), "byte") {
				t.Errorf("%d B: flipped last byte: err = %v, want a byte error", n, err)
			}
		}
	}
	// Patterns of the same rank differ between sizes (a message left from
	// an earlier size would be caught).
	if pattern(0, 1024, 9) == pattern(0, 4096, 9) && pattern(0, 1024, 10) == pattern(0, 4096, 10) {
		t.Error("pattern does not depend on the message size")
	}
}
