package shm

// storeRel stores v at p with release order only: a plain store, which on
// amd64 (total store order) no later load or store passes, and which does
// not wait for the cache line to arrive the way a locked exchange (Go's
// atomic Store) does: the rank goes on to poll the others' numbers while
// its own travels. Being assembly, the call is also a compiler barrier.
//
//go:noescape
func storeRel(p *uint64, v uint64)
