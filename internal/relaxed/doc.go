// Package relaxed stores words that other goroutines (or other processes,
// through shared memory) load atomically, with release order only, where
// sync/atomic's Store would be a full fence.
//
// On amd64, atomic.Store is an XCHG: a locked instruction that waits for
// every earlier store of the core to leave its store buffer, including
// stores whose cache lines are still on their way from another core. A
// plain store is enough for release order there, and does not wait. The
// guarantees it relies on are beyond the Go memory model (under which a
// plain store racing an atomic load is a data race with no defined order):
//   - the gc compiler emits the store as one MOV of the word's width to an
//     aligned address (atomic.Uint32 and atomic.Uint64 are aligned), so no
//     reader sees a torn value;
//   - the gc compiler does not move a store above earlier stores: its SSA
//     form threads every store through one memory chain, in program order;
//   - amd64 hardware (x86-TSO) makes a core's stores visible to the others
//     in program order and does not reorder a load with an earlier load, so
//     a reader whose atomic Load sees the new value then sees every store
//     made before it.
//
// What TSO does not give is a store's order against a later load of
// another word (Dekker's pattern): callers that need it must fence
// otherwise. On other architectures, and under the race detector (which
// must see the hand-off), the functions are atomic stores.
package relaxed
