package sm

import (
	"strings"
	"testing"
)

// TestFragPoolQueue: fragments enter circulation inc at a time up to max,
// get hands out the one that came back longest ago (a queue, around its
// ring many times), get reports 0 when all max are out, and put refuses a
// fragment that is not out.
func TestFragPoolQueue(t *testing.T) {
	const base, size, max = 4096, 128, 5
	p := newFragPool(base, size, 2, max, 2)
	at := func(i int) int64 { return base + int64(i)*size }
	var got []int64
	for range max {
		got = append(got, p.get())
	}
	for i, off := range got {
		if off != at(i) {
			t.Fatalf("carved fragments handed out as %v, want fragment %d at %d", got, i, at(i))
		}
	}
	if off := p.get(); off != 0 || p.inUse() != max {
		t.Fatalf("all %d out: get = %d, inUse %d; want 0, %d", max, off, p.inUse(), max)
	}
	// Return them in a shuffled order, many times over: get follows it.
	order := []int{3, 0, 4, 1, 2}
	for round := range 7 {
		for _, i := range order {
			if err := p.put(at(i)); err != nil {
				t.Fatal(err)
			}
		}
		for _, i := range order {
			if off := p.get(); off != at(i) {
				t.Fatalf("round %d: get = %d, want %d (the one returned longest ago)", round, off, at(i))
			}
		}
		order = append(order[1:], order[0])
	}
	if err := p.put(at(1)); err != nil {
		t.Fatal(err)
	}
	if err := p.put(at(1)); err == nil || !strings.Contains(err.Error(), "not handed out") {
		t.Fatalf("second put of the same fragment: %v, want a refusal", err)
	}
	if p.inUse() != max-1 {
		t.Fatalf("inUse %d, want %d", p.inUse(), max-1)
	}
}
