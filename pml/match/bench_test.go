package match

import (
	"fmt"
	"testing"
)

// warm creates the state of context 0, so a benchmark times only the steady
// state.
func warm(e *Engine) {
	r := &Recv{Src: AnySource, Tag: AnyTag}
	e.Post(r)
	e.Cancel(r)
}

// recvKinds are the receive shapes the benchmarks post: the message always
// comes from src 1 with tag 7.
var recvKinds = []struct {
	name     string
	src, tag int
}{
	{"specific", 1, 7},
	{"AnySource", AnySource, 7},
	{"AnyTag", 1, AnyTag},
}

// BenchmarkPostThenArrive: the receive is posted first, then the message
// arrives and matches it (the expected-message path). 0 allocs/op.
func BenchmarkPostThenArrive(b *testing.B) {
	for _, k := range recvKinds {
		b.Run(k.name, func(b *testing.B) {
			e := New(4)
			warm(e)
			r := &Recv{Src: k.src, Tag: k.tag}
			m := &Msg{Envelope: Envelope{Src: 1, Tag: 7}}
			out := make([]Pair, 0, 1)
			var seq uint32
			b.ReportAllocs()
			for b.Loop() {
				e.Post(r)
				m.Seq = seq
				seq++
				if out = e.Arrive(m, out[:0]); len(out) != 1 {
					b.Fatalf("Arrive after Post = %d pairs, want 1", len(out))
				}
			}
		})
	}
}

// BenchmarkArriveThenPost: the message arrives first and waits as
// unexpected; the receive then finds it. 0 allocs/op.
func BenchmarkArriveThenPost(b *testing.B) {
	for _, k := range recvKinds {
		b.Run(k.name, func(b *testing.B) {
			e := New(4)
			warm(e)
			r := &Recv{Src: k.src, Tag: k.tag}
			m := &Msg{Envelope: Envelope{Src: 1, Tag: 7}}
			var seq uint32
			b.ReportAllocs()
			for b.Loop() {
				m.Seq = seq
				seq++
				e.Arrive(m, nil)
				if _, ok := e.Post(r); !ok {
					b.Fatal("Post after Arrive did not match")
				}
			}
		})
	}
}

// BenchmarkDrainUnexpected: n unexpected messages from 16 sources, then n
// specific (src, tag) receives drain them in send order. One op is the
// whole fill and drain; 0 allocs/op once the context exists.
func BenchmarkDrainUnexpected(b *testing.B) {
	const size = 16
	for _, n := range []int{1000, 20000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			e := New(size)
			warm(e)
			msgs := make([]Msg, n)
			recvs := make([]Recv, n)
			for i := range msgs {
				src, tag := i%size, i/size
				msgs[i].Src, msgs[i].Tag = src, tag
				recvs[i] = Recv{Src: src, Tag: tag}
			}
			var seq [size]uint32
			b.ReportAllocs()
			for b.Loop() {
				for i := range msgs {
					m := &msgs[i]
					m.Seq = seq[m.Src]
					seq[m.Src]++
					e.Arrive(m, nil)
				}
				for i := range recvs {
					if m, ok := e.Post(&recvs[i]); !ok || m != &msgs[i] {
						b.Fatalf("Post(recv %d) = %p, %v; want message %d", i, m, ok, i)
					}
				}
			}
		})
	}
}
