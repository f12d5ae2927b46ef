package pml

// sendTable holds one peer's send requests that await an answer (ACK or
// FIN), under that peer's sendMu: a send is numbered, registered and, when
// the BTL can take it at once, sent in one locked section (startSend),
// where the PML's mu, a map and the BTL's own lock were three sections.
//
// An id is the slot's index in its low 32 bits and the table's count of
// registrations in its high 32: a slot is reused once free, and an answer
// naming an id that is no longer registered (a stale or forged one) finds
// a different id in its slot, or none, and is refused, as the map refused
// an unknown key. Invariants: slots[i] is nil exactly when i is in free;
// a registered request's id names its own slot.
type sendTable struct {
	slots []*Request
	free  []uint32
	adds  uint64 // registrations so far (ids' high half)
}

// add registers r, setting r.id (sendMu held).
func (t *sendTable) add(r *Request) {
	var i uint32
	if n := len(t.free); n > 0 {
		i = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		i = uint32(len(t.slots))
		t.slots = append(t.slots, nil)
	}
	t.adds++
	t.slots[i] = r
	r.id = t.adds<<32 | uint64(i)
}

// get returns the request registered as id, or nil (sendMu held).
func (t *sendTable) get(id uint64) *Request {
	i := id & (1<<32 - 1)
	if i >= uint64(len(t.slots)) {
		return nil
	}
	if r := t.slots[i]; r != nil && r.id == id {
		return r
	}
	return nil
}

// take removes and returns the request registered as id, or returns nil
// (sendMu held).
func (t *sendTable) take(id uint64) *Request {
	r := t.get(id)
	if r != nil {
		i := uint32(id)
		t.slots[i] = nil
		t.free = append(t.free, i)
	}
	return r
}

// takeAll removes every request and appends them to out (sendMu held).
func (t *sendTable) takeAll(out []*Request) []*Request {
	for i, r := range t.slots {
		if r != nil {
			out = append(out, r)
			t.slots[i] = nil
			t.free = append(t.free, uint32(i))
		}
	}
	return out
}
