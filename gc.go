package gorun

import (
	"math"
	"runtime/debug"
)

// Every Isend and Irecv allocates its Request (32 bytes: the user may keep
// it as long as it likes, so it cannot come from a pool; they are carved
// from slabs of 32, pml/handle.go, which saves the allocator's time per
// call but not the bytes: the collector's pace is the same). A program with
// a small heap sends millions of messages a second, and Go's collector,
// whose heap goal is the live heap plus GOGC% of it but at least 4 MiB,
// then runs every few tens of milliseconds: osu mr at 8 B started ~40
// cycles a second per rank, and while a cycle marks (several milliseconds
// of wall time with one P per rank) every pointer store on the message
// path goes through the write barrier. gcBallast raises the live heap by
// gcBallastSize bytes (mpi_base_gc_ballast) that are never touched: one
// pointer-free allocation, which the collector never scans and the
// kernel never backs with memory, so the heap goal of a small heap grows
// by GOGC% of it and the cycles become that many times rarer (osu mr 8 B,
// 8 interleaved runs: 5.3 -> 6.2 M messages/s with 16 MiB; GOGC=400 did
// the same). Garbage may then take that much more memory before it is
// collected; a program whose heap is already large hardly notices.
//
// Not when the program set a memory limit (GOMEMLIMIT, or
// debug.SetMemoryLimit before Init): the ballast would count against it.
// Finalize drops it (so does a failed Init), so a program that goes on
// after Finalize collects as it did before Init.
//
// Init allocates it as soon as it has read the parameters, before the
// BTLs, the PML and the collectives allocate their structures. Allocated
// after them, it made the np 2 Barrier slower although nothing there
// allocates (osu barrier, 9 interleaved rounds: 0.455 us against 0.374
// without a ballast and 0.375 with one allocated first): where the
// runtime's structures land in the heap matters, for reasons not found.
var (
	gcBallastSize int64 = 16 << 20
	gcBallast     []byte
)

// holdBallast allocates the ballast (Init, under state's lock).
func holdBallast() {
	if gcBallastSize <= 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return
	}
	gcBallast = make([]byte, gcBallastSize)
}

// dropBallast lets the collector take the ballast (Finalize).
func dropBallast() { gcBallast = nil }
