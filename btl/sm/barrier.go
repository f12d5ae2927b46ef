package sm

import "github.com/gorun-mpi/gorun/btl"

// Finalize's barrier (btl.JobBarrier) over two words of the segment's
// header: every rank adds one to Arrived once; the rank whose add makes it
// the number of ranks stores Released = 1 and wakes every peer that sleeps
// (wakeCtl: its armed flag, its futex). A rank that waits for the release
// keeps polling and sleeping as any wait does (its FIFO drains, so peers
// still flushing queued sends to it can arrive too), and Sleep returns at
// once when it finds the release (releasedHere).
//
// Each rank so wakes once, where the PML's message barrier wakes it once
// per round (log2 N rounds), and each wake of a sleeping Go process costs
// several thread switches (its system monitor restarts): at 1024 ranks on
// two cores those wakes were most of Finalize.
//
// No wake is lost: Sleep loads wakeSeq, stores armed = 1, then looks at
// Released; the last arriver stores Released, then CASes armed 1 → 0 and,
// if that succeeds, bumps wakeSeq and wakes the futex. If the sleeper's
// look misses the store, the store comes after the look in the total
// order of these sequentially consistent atomics, so the CAS comes after
// armed = 1 and succeeds (or a sender's wake got there first, which bumps
// wakeSeq just the same).
//
// The barrier is for the segment's ranks only: the PML uses it when this
// module reaches every other rank of the world (one machine, no remap).
// Every rank arrives at most once (a second Arrive does nothing).

var _ btl.JobBarrier = (*Module)(nil)

// Arrive implements btl.JobBarrier: it counts this rank in; the last rank
// to arrive releases them all.
func (m *Module) Arrive() {
	if !m.enter() {
		return
	}
	defer m.exit()
	if m.arrived.Swap(true) {
		return
	}
	h := m.seg.Header()
	if int(h.Arrived.Add(1)) < len(m.peers) {
		return
	}
	h.Released.Store(1)
	for i := range m.peers {
		if i != m.rank {
			wakeCtl(m.peers[i].ctl)
		}
	}
}

// Released implements btl.JobBarrier: every rank of the segment has
// arrived (false once the module is closed).
func (m *Module) Released() bool {
	if !m.enter() {
		return false
	}
	defer m.exit()
	return m.seg.Header().Released.Load() != 0
}

// releasedHere reports, for Sleep, whether this rank waits in the barrier
// and it has been released (the caller is inside the module: not closed).
func (m *Module) releasedHere() bool {
	return m.arrived.Load() && m.seg.Header().Released.Load() != 0
}
