package coll

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// sim runs one schedule per rank in memory, like the engine does over a
// transport: a rank starts its next round once every receive of the
// current one matched; sends are buffered; messages from one peer match
// receives in posting order; scratch starts as garbage. It fails on a deadlock, on a receive whose
// message has another length, and on a round whose steps race (a region
// written by a receive or by a local step after a send overlaps another
// comm step's region of the same round).
type simRank struct {
	s     Schedule
	bufs  [3][]byte
	round int
	recvs []simRecv // posted, unmatched receives of the current round
}

type simRecv struct {
	peer int
	dst  []byte
}

type simMsg struct{ data []byte }

func (r *simRank) region(g Region, elem int) []byte {
	return r.bufs[g.Buf][g.Off*elem : (g.Off+g.Len)*elem]
}

func overlaps(a, b Region) bool {
	return a.Buf == b.Buf && a.Len > 0 && b.Len > 0 && a.Off < b.Off+b.Len && b.Off < a.Off+a.Len
}

func checkRound(t *testing.T, who string, rd []Step) {
	t.Helper()
	for i, a := range rd {
		for j, b := range rd {
			if i == j {
				continue
			}
			// A receive's region must not overlap any other comm step's.
			if a.Kind == Recv && (b.Kind == Send || b.Kind == Recv) && overlaps(a.A, b.A) {
				t.Fatalf("%s: step %v overlaps %v in one round", who, a, b)
			}
			// A local write after a send or receive must not touch its region.
			if j > i && (a.Kind == Send || a.Kind == Recv) && b.Kind >= Reduce && overlaps(a.A, b.A) {
				t.Fatalf("%s: local step %v writes the region of %v earlier in its round", who, b, a)
			}
		}
	}
}

func simulate(t *testing.T, ranks []*simRank, elem int, red ReduceFunc) {
	t.Helper()
	n := len(ranks)
	q := make([][][]simMsg, n) // q[src][dst]
	for i := range q {
		q[i] = make([][]simMsg, n)
	}
	for i, r := range ranks {
		if r.s.Tmp > 0 {
			// Scratch starts as garbage, as the engine's recycled scratch
			// does: a schedule that reads scratch it did not write fails.
			r.bufs[BufTmp] = make([]byte, r.s.Tmp*elem)
			for j := range r.bufs[BufTmp] {
				r.bufs[BufTmp][j] = byte(0xa5 + i + j)
			}
		}
		for k, rd := range r.s.Rounds {
			checkRound(t, fmt.Sprintf("rank %d round %d", i, k), rd)
		}
	}
	for {
		progress, running := false, false
		for me, r := range ranks {
			// Match posted receives against queued messages.
			keep := r.recvs[:0]
			for _, rv := range r.recvs {
				if len(q[rv.peer][me]) > 0 && !hasEarlier(keep, rv.peer) {
					m := q[rv.peer][me][0]
					q[rv.peer][me] = q[rv.peer][me][1:]
					if len(m.data) != len(rv.dst) {
						t.Fatalf("rank %d: message of %d bytes from %d for a receive of %d", me, len(m.data), rv.peer, len(rv.dst))
					}
					copy(rv.dst, m.data)
					progress = true
					continue
				}
				keep = append(keep, rv)
			}
			r.recvs = keep
			if len(r.recvs) > 0 {
				running = true
				continue
			}
			if r.round == len(r.s.Rounds) {
				continue
			}
			running, progress = true, true
			for _, st := range r.s.Rounds[r.round] {
				switch st.Kind {
				case Send:
					if st.Peer == me || st.Peer < 0 || st.Peer >= n {
						t.Fatalf("rank %d sends to %d", me, st.Peer)
					}
					q[me][st.Peer] = append(q[me][st.Peer], simMsg{append([]byte(nil), r.region(st.A, elem)...)})
				case Recv:
					if st.Peer == me || st.Peer < 0 || st.Peer >= n {
						t.Fatalf("rank %d receives from %d", me, st.Peer)
					}
					r.recvs = append(r.recvs, simRecv{st.Peer, r.region(st.A, elem)})
				case Copy:
					copy(r.region(st.A, elem), r.region(st.B, elem))
				case Reduce:
					red(r.region(st.A, elem), r.region(st.B, elem))
				case ReduceRev:
					a, b := r.region(st.A, elem), r.region(st.B, elem)
					s := append([]byte(nil), b...)
					red(s, a)
					copy(a, s)
				}
			}
			r.round++
		}
		if !running {
			break
		}
		if !progress {
			t.Fatalf("deadlock: %v", simState(ranks))
		}
	}
	for src := range q {
		for dst := range q[src] {
			if len(q[src][dst]) > 0 {
				t.Fatalf("%d messages from %d to %d never received", len(q[src][dst]), src, dst)
			}
		}
	}
}

func hasEarlier(posted []simRecv, peer int) bool {
	for _, p := range posted {
		if p.peer == peer {
			return true
		}
	}
	return false
}

func simState(ranks []*simRank) string {
	s := ""
	for i, r := range ranks {
		s += fmt.Sprintf("[rank %d round %d/%d waits %d]", i, r.round, len(r.s.Rounds), len(r.recvs))
	}
	return s
}

// Element types of the tests: int64 with Sum (commutative), and affine
// maps x -> a*x+b (two int64, 16 bytes) composed in order, associative but
// not commutative: a wrong combination order shows.
var le = binary.LittleEndian

func sumInt64(acc, in []byte) {
	for i := 0; i+8 <= len(acc); i += 8 {
		le.PutUint64(acc[i:], le.Uint64(acc[i:])+le.Uint64(in[i:]))
	}
}

func composeAffine(acc, in []byte) {
	for i := 0; i+16 <= len(acc); i += 16 {
		a1, b1 := le.Uint64(acc[i:]), le.Uint64(acc[i+8:])
		a2, b2 := le.Uint64(in[i:]), le.Uint64(in[i+8:])
		le.PutUint64(acc[i:], a1*a2)
		le.PutUint64(acc[i+8:], a2*b1+b2)
	}
}

// input is rank r's distinct input of count elements.
func input(r, count, elem int) []byte {
	b := make([]byte, count*elem)
	for i := 0; i+8 <= len(b); i += 8 {
		le.PutUint64(b[i:], uint64(r*1000003+i*7919+3)|1)
	}
	return b
}

type opKind struct {
	name    string
	elem    int
	red     ReduceFunc
	ordered bool
}

var opKinds = []opKind{{"sum-int64", 8, sumInt64, false}, {"affine", 16, composeAffine, true}}

// refReduce is the model: inputs[lo] ⊕ ... ⊕ inputs[hi-1], in rank order.
func refReduce(op opKind, inputs [][]byte, lo, hi int) []byte {
	acc := append([]byte(nil), inputs[lo]...)
	for i := lo + 1; i < hi; i++ {
		op.red(acc, inputs[i])
	}
	return acc
}
