package coll

import "fmt"

// Buf names one of an operation's three buffers.
type Buf uint8

const (
	BufSend Buf = iota // the caller's input (read only)
	BufRecv            // the caller's output
	BufTmp             // scratch the engine allocates (Schedule.Tmp elements)
)

func (b Buf) String() string { return [...]string{"send", "recv", "tmp"}[b] }

// Region is Len elements of a buffer from element Off.
type Region struct {
	Buf      Buf
	Off, Len int
}

// Kind is what a step does.
type Kind uint8

const (
	Send      Kind = iota // send A to Peer
	Recv                  // receive into A from Peer (exactly A.Len elements)
	Reduce                // A = A ⊕ B
	ReduceRev             // A = B ⊕ A (B comes first in rank order)
	Copy                  // A = B
)

func (k Kind) String() string {
	return [...]string{"send", "recv", "reduce", "reduce-rev", "copy"}[k]
}

// Step is one action of a round.
type Step struct {
	Kind Kind
	Peer int // Send, Recv: a rank of the communicator
	A, B Region
}

func (s Step) String() string {
	switch s.Kind {
	case Send, Recv:
		return fmt.Sprintf("%v %v[%d:+%d] peer %d", s.Kind, s.A.Buf, s.A.Off, s.A.Len, s.Peer)
	}
	return fmt.Sprintf("%v %v[%d:+%d] %v[%d:+%d]", s.Kind, s.A.Buf, s.A.Off, s.A.Len, s.B.Buf, s.B.Off, s.B.Len)
}

// Schedule is one rank's part of a collective.
type Schedule struct {
	Rounds [][]Step
	Tmp    int      // elements of scratch
	Coll   CollKind // which collective, for its errors (set by Engine.Schedule from the Key; 0: unnamed)
}

// builder appends steps to a schedule.
type builder struct{ s Schedule }

// next starts a new round.
func (b *builder) next() {
	if n := len(b.s.Rounds); n == 0 || len(b.s.Rounds[n-1]) > 0 {
		b.s.Rounds = append(b.s.Rounds, nil)
	}
}

func (b *builder) add(st Step) {
	if len(b.s.Rounds) == 0 {
		b.s.Rounds = append(b.s.Rounds, nil)
	}
	n := len(b.s.Rounds) - 1
	b.s.Rounds[n] = append(b.s.Rounds[n], st)
}

func (b *builder) send(peer int, a Region) { b.add(Step{Kind: Send, Peer: peer, A: a}) }
func (b *builder) recv(peer int, a Region) { b.add(Step{Kind: Recv, Peer: peer, A: a}) }
func (b *builder) reduce(a, src Region)    { b.add(Step{Kind: Reduce, A: a, B: src}) }
func (b *builder) reduceRev(a, src Region) { b.add(Step{Kind: ReduceRev, A: a, B: src}) }
func (b *builder) copy(a, src Region) {
	if a != src && a.Len > 0 {
		b.add(Step{Kind: Copy, A: a, B: src})
	}
}

// tmp reserves n elements of scratch and returns their offset.
func (b *builder) tmp(n int) int {
	off := b.s.Tmp
	b.s.Tmp += n
	return off
}

func (b *builder) done() Schedule {
	if n := len(b.s.Rounds); n > 0 && len(b.s.Rounds[n-1]) == 0 {
		b.s.Rounds = b.s.Rounds[:n-1]
	}
	return b.s
}

func reg(b Buf, off, n int) Region { return Region{b, off, n} }

// blocks splits count elements into n blocks, the first count%n one
// element longer; it returns each block's offset (and off[n] = count).
func blocks(count, n int) []int {
	off := make([]int, n+1)
	q, r := count/n, count%n
	for i := 0; i < n; i++ {
		l := q
		if i < r {
			l++
		}
		off[i+1] = off[i] + l
	}
	return off
}

func pof2Below(n int) int {
	p := 1
	for p*2 <= n {
		p *= 2
	}
	return p
}
