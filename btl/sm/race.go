//go:build race

package sm

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Under the race detector, the order every message gives (its sender's
// writes before its receiver's reads) is invisible when both ranks run in
// one process, as the pml tests' do: they synchronize only through atomics
// in the mmap'd segment, and the race runtime drops synchronization on
// atomics outside Go's heap and data (runtime/race_amd64.s,
// racecallatomic), so a goroutine of one rank that answers a message
// looked unordered with the goroutine of the other that sent it. Each
// ordered pair of ranks of a segment therefore also has a counter in Go's
// heap, shared by the two modules when they are in one process: a sender
// adds to it before it publishes a message, a receiver loads it once it
// has seen one. Without the race detector this file is not built and the
// calls are empty (norace.go).
type raceOrder struct {
	out, in []*atomic.Uint64 // by peer: our messages to it, its to us
}

var raceVars sync.Map // "session/job/src/dst" -> *atomic.Uint64

func raceVar(key string, src, dst int) *atomic.Uint64 {
	v, _ := raceVars.LoadOrStore(fmt.Sprintf("%s/%d/%d", key, src, dst), new(atomic.Uint64))
	return v.(*atomic.Uint64)
}

// raceInit sets up the counters of a module of rank me in a job of n
// local ranks whose segment key names.
func (m *Module) raceInit(key string, me, n int) {
	m.race.out, m.race.in = make([]*atomic.Uint64, n), make([]*atomic.Uint64, n)
	for p := range n {
		m.race.out[p], m.race.in[p] = raceVar(key, me, p), raceVar(key, p, me)
	}
}

// raceSend precedes a message to dst's publication. (A module that unit
// tests build by hand has no counters.)
func (m *Module) raceSend(dst int) {
	if dst < len(m.race.out) {
		m.race.out[dst].Add(1)
	}
}

// raceRecv follows the sight of a message from src.
func (m *Module) raceRecv(src int) {
	if src < len(m.race.in) {
		m.race.in[src].Load()
	}
}
