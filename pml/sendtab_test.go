package pml

import "testing"

// A send table hands out ids that name their slot, finds each registered
// request by its id alone, refuses ids that are stale (their slot freed,
// or reused by a later registration), forged (no such slot) or taken
// twice, reuses freed slots, and empties itself for a lost peer.
func TestSendTable(t *testing.T) {
	var tab sendTable
	reqs := make([]*Request, 5)
	for i := range reqs {
		reqs[i] = &Request{}
		tab.add(reqs[i])
		if slot := reqs[i].id & (1<<32 - 1); slot != uint64(i) {
			t.Fatalf("request %d got slot %d", i, slot)
		}
	}
	seen := map[uint64]bool{}
	for i, r := range reqs {
		if seen[r.id] {
			t.Fatalf("id %#x handed out twice", r.id)
		}
		seen[r.id] = true
		if got := tab.get(r.id); got != r {
			t.Fatalf("get(%#x) = %p, want request %d", r.id, got, i)
		}
	}
	stale := reqs[2].id
	if got := tab.take(stale); got != reqs[2] {
		t.Fatalf("take(%#x) = %p, want request 2", stale, got)
	}
	later := &Request{}
	tab.add(later)
	if later.id&(1<<32-1) != 2 || later.id == stale {
		t.Fatalf("a freed slot is reused under a new id: got %#x after %#x", later.id, stale)
	}
	for _, c := range []struct {
		name string
		id   uint64
	}{
		{"taken before, its slot reused", stale},
		{"taken twice", stale},
		{"beyond the table", 1<<32 | 99},
		{"a live slot under another count", later.id ^ 1<<40},
		{"zero", 0},
	} {
		if got := tab.get(c.id); got != nil {
			t.Errorf("get of an id %s (%#x) found %p", c.name, c.id, got)
		}
		if got := tab.take(c.id); got != nil {
			t.Errorf("take of an id %s (%#x) found %p", c.name, c.id, got)
		}
	}
	if tab.get(later.id) != later {
		t.Fatal("refused ids disturbed a live entry")
	}
	all := tab.takeAll(nil)
	if len(all) != 5 {
		t.Fatalf("takeAll returned %d requests, want 5", len(all))
	}
	for _, r := range append(reqs, later) {
		if tab.get(r.id) != nil {
			t.Errorf("request %#x still registered after takeAll", r.id)
		}
	}
	r := &Request{}
	tab.add(r)
	if len(tab.slots) != 5 || tab.get(r.id) != r {
		t.Fatalf("after takeAll a registration grew the table to %d slots, want a freed one of 5", len(tab.slots))
	}
}
