// Package ring is the FIFO queue of sends a BTL keeps for a peer while they
// wait (for a FIFO slot, a fragment, a writable socket): it grows by
// doubling and reuses its storage, so a steady flow of pushes and pops
// allocates nothing. It counts the elements ever pushed and popped, which
// is what btl.Flusher's marks are made of.
//
// Invariant: Pushed() - Popped() == Len(). A Ring is not safe for
// concurrent use; its owner holds the lock that guards it.
package ring

// Ring is a FIFO queue of T. The zero Ring is empty and ready to use.
type Ring[T any] struct {
	elems          []T
	head, size     int
	pushed, popped uint64
}

// Len is the number of elements queued.
func (r *Ring[T]) Len() int { return r.size }

// Push appends a zero element and returns it for the caller to fill. The
// pointer is valid until the next Push or Pop.
func (r *Ring[T]) Push() *T {
	if r.size == len(r.elems) {
		n := max(8, 2*len(r.elems))
		elems := make([]T, n)
		for i := 0; i < r.size; i++ {
			elems[i] = r.elems[(r.head+i)%len(r.elems)]
		}
		r.elems, r.head = elems, 0
	}
	e := &r.elems[(r.head+r.size)%len(r.elems)]
	r.size++
	r.pushed++
	return e
}

// Front is the oldest element; the ring must not be empty.
func (r *Ring[T]) Front() *T { return &r.elems[r.head] }

// Pop drops the oldest element, zeroing it so that the ring keeps no
// reference to what it held; the ring must not be empty.
func (r *Ring[T]) Pop() {
	var zero T
	r.elems[r.head] = zero
	r.head = (r.head + 1) % len(r.elems)
	r.size--
	r.popped++
}

// Pushed is the number of elements ever pushed.
func (r *Ring[T]) Pushed() uint64 { return r.pushed }

// Popped is the number of elements ever popped.
func (r *Ring[T]) Popped() uint64 { return r.popped }
