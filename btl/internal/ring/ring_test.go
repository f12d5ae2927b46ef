package ring

import (
	"testing"
)

type elem struct {
	n int
	p *int
}

// The ring against a slice model: FIFO order across growth and wrap-around,
// zero elements from Push, no reference kept after Pop, and the counters.
func TestRingModel(t *testing.T) {
	var r Ring[elem]
	var model []int
	next := 0
	// A pattern of pushes and pops that wraps the storage at every size.
	for step := 0; step < 2000; step++ {
		if step%7 < 4 || len(model) == 0 {
			e := r.Push()
			if *e != (elem{}) {
				t.Fatalf("step %d: Push returned %+v; want a zero element", step, *e)
			}
			v := next
			e.n, e.p = next, &v
			model = append(model, next)
			next++
		} else {
			f := r.Front()
			if f.n != model[0] || *f.p != model[0] {
				t.Fatalf("step %d: Front = %d; want %d", step, f.n, model[0])
			}
			r.Pop()
			model = model[1:]
			if f := r.elems[(r.head+len(r.elems)-1)%len(r.elems)]; f != (elem{}) {
				t.Fatalf("step %d: the popped slot still holds %+v", step, f)
			}
		}
		if r.Len() != len(model) || r.Pushed()-r.Popped() != uint64(len(model)) {
			t.Fatalf("step %d: Len %d, Pushed %d, Popped %d; want Len %d == Pushed-Popped", step, r.Len(), r.Pushed(), r.Popped(), len(model))
		}
	}
	for len(model) > 0 {
		if r.Front().n != model[0] {
			t.Fatalf("draining: Front = %d; want %d", r.Front().n, model[0])
		}
		r.Pop()
		model = model[1:]
	}
	if r.Len() != 0 || r.Pushed() != uint64(next) || r.Popped() != uint64(next) {
		t.Fatalf("drained: Len %d, Pushed %d, Popped %d; want 0, %d, %d", r.Len(), r.Pushed(), r.Popped(), next, next)
	}
}

// A steady flow of pushes and pops allocates nothing once grown.
func TestRingSteadyNoAlloc(t *testing.T) {
	var r Ring[elem]
	for range 5 {
		r.Push()
	}
	allocs := testing.AllocsPerRun(1000, func() {
		r.Push().n = 1
		r.Pop()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per push+pop; want 0", allocs)
	}
}
