package coll

import (
	"sync"
	"sync/atomic"
)

// Key names a schedule built by a pure function of its fields (and of the
// engine's Config, which is fixed): the same Key always gives the same
// Schedule, so the engine builds each once (Schedule). Coll tells the
// collectives apart; Flag is the call's one boolean (ordered, in place).
type Key struct {
	Coll                    CollKind
	N, R, Root, Count, Elem int
	In                      Region
	Flag                    bool
	Over                    bool // chosen for ranks that share cores (see Config.AlltoallScheduleOver)
}

// CollKind is which collective a Key's schedule is for.
type CollKind uint8

const (
	KBarrier CollKind = iota + 1
	KBcast
	KReduce
	KAllreduce
	KAllgather
	KAlltoall
	KReduceScatterBlock
	KGather
	KScatter
	KScan
	KExscan
	KGatherv // the v collectives' schedules are not cached (their counts make the key); Coll names them
	KScatterv
	KAllgatherv
	KAlltoallv
	nKinds
)

// String is the collective's name in the API.
func (k CollKind) String() string {
	names := [nKinds]string{"a collective", "Barrier", "Bcast", "Reduce", "Allreduce", "Allgather", "Alltoall",
		"ReduceScatterBlock", "Gather", "Scatter", "Scan", "Exscan", "Gatherv", "Scatterv", "Allgatherv", "Alltoallv"}
	if k >= nKinds {
		return names[0]
	}
	return names[k]
}

// maxCached bounds the schedule cache: when it is full it starts over (a
// program that calls collectives with ever new counts keeps at most this
// many schedules).
const maxCached = 4096

// scheds caches schedules by Key. Schedules are read only once built: the
// engine never writes to one, so one can run in many operations at once.
// Each collective's last schedule is also kept apart (recent): a program
// that repeats one call finds it without hashing its Key.
type scheds struct {
	mu     sync.RWMutex
	m      map[Key]Schedule
	recent [nKinds]atomic.Pointer[entry]
}

type entry struct {
	k Key
	s Schedule
}

// Schedule returns the schedule of k, building it with build (which must
// be the pure function k names) the first time.
func (e *Engine) Schedule(k Key, build func() Schedule) Schedule {
	slot := &e.cache.recent[k.Coll%nKinds]
	if r := slot.Load(); r != nil && r.k == k {
		return r.s
	}
	e.cache.mu.RLock()
	s, ok := e.cache.m[k]
	e.cache.mu.RUnlock()
	if ok {
		slot.Store(&entry{k, s})
		return s
	}
	s = build()
	s.Coll = k.Coll
	slot.Store(&entry{k, s})
	e.cache.mu.Lock()
	if e.cache.m == nil || len(e.cache.m) >= maxCached {
		e.cache.m = make(map[Key]Schedule)
	}
	e.cache.m[k] = s
	e.cache.mu.Unlock()
	return s
}
