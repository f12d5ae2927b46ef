package gorun

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"golang.org/x/sys/unix"
)

// Every Isend and Irecv allocates its Request (32 bytes: the user may keep
// it as long as it likes, so it cannot come from a pool; they are carved
// from 8 KiB slabs, pml/handle.go, which saves the allocator's time
// per call but not the bytes: the collector's pace is the same). A program with
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
//
// 64 MiB, not 16 (2026-11-29, an AMD EPYC host): with 16 MiB, a program
// that allocates its buffers after Init (osu's two 4 MiB buffers) reaches
// the first heap goal within its first sizes, and from there until the
// heap stops growing every 128 Requests fault a new page: the faults
// came from the Request slabs (perf, page-faults: 80% in startRecvH and
// in the eager sends' slab refill), 4,800 per rank in an osu bibw run. A
// ballast of 64 MiB with as much prefaulted (below) leaves the heap's
// first 64 MiB of growth without a collection or a fault (about the
// first 0.3 s of osu mr at 1-256 B, its first sizes; osu, 4 interleaved
// rounds of four settings, np 2: mr 1-256 B +14 to +82%, bibw 2-256 B +15 to +24%, bw
// unchanged; a 64 MiB ballast with only 16 or 32 MiB prefaulted gained
// nothing in mr, so it is the faults, not the collections). The price is
// paid once per rank: gorun -np 2 of a hello program 36-40 -> 62 ms,
// its peak RSS 23 -> 73 MiB per rank (prefaulting runs only when the
// node's ranks have a CPU each).
var (
	gcBallastSize int64 = 64 << 20
	gcBallast     []byte
	gcPrefault    = true // mpi_base_gc_prefault
)

// holdBallast allocates the ballast (Init, under state's lock) for a
// process that shares mem bytes of memory (node.Memory) with local ranks:
// ballastSize's share of gcBallastSize.
func holdBallast(mem int64, local int) {
	n := ballastSize(gcBallastSize, mem, local)
	if n <= 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return
	}
	gcBallast = make([]byte, n)
}

// ballastSize is the ballast of a rank that shares mem bytes (0: unknown)
// with local ranks: want, but at most a 32nd of the rank's share of the
// memory, as the ballast lets that much more garbage live and prefaulting
// makes as much resident at Init: on a 2 GiB container with 16 CPUs and
// 16 ranks, 4 MiB each rather than 64 (1 GiB in all).
func ballastSize(want, mem int64, local int) int64 {
	if mem <= 0 || want <= 0 {
		return want
	}
	return min(want, mem/int64(max(local, 1))/32)
}

// dropBallast lets the collector take the ballast (Finalize).
func dropBallast() { gcBallast = nil }

// Prefaulting. Between two collections the heap grows into pages it has
// never used, each one a page fault (~3 us here, the kernel zeroing and
// charging it) the first time something is stored there: one per 128
// Requests. With the ballast the first collection comes only after the
// heap has grown by the ballast's size, so a process's first ~500,000
// Isends and Irecvs (with 16 MiB) each paid ~25 ns for faults (osu bw
// 1-64 B, one process: ~4,300 faults per rank beyond Init's ~860; the
// first sizes of a run are those). After a collection the freed spans
// are reused and are resident. prefaultHeap moves that first growth's
// faults into Init: it allocates a block of the ballast's size, has the
// kernel back it at once (MADV_POPULATE_WRITE, or a store per page
// before Linux 5.14), drops it and collects, so the block's pages are
// the heap's next ones.
// osu at np 2, 10 runs each way in alternating order, one binary with
// mpi_base_gc_prefault false and true: bw 1-64 B +11 to +18%, mr 1-64 B
// +11 to +19%, bibw 1-8 B +10 to +15%; 128 B-1 KiB, latency 0-4 KiB and
// Allreduce 4 B-64 KiB within the noise; faults per rank ~5,100 -> ~1,100.
//
// Only with a ballast (without one the first collection comes after 4
// MiB), only when the job's ranks on this machine do not outnumber its
// CPUs (the pages stay resident, as the collector's scavenger keeps free
// pages up to ~10% beyond the heap goal, and a thousand oversubscribed
// ranks would hold 16 GiB for it), and only while the program's heap is
// small at Init (prefaultHeapMax). Init takes longer by the faults' time:
// gorun -np 2 of a hello program 30 -> 42 ms here (medians of 9), where a
// fault costs ~3 us (a VM whose host backs the memory at first touch).

// prefaultHeap faults in as much heap as the ballast holds and frees it
// (Init, after holdBallast, before the BTLs and the PML allocate), when
// the job has at most cpus ranks on this machine (local). It returns the
// bytes faulted in: 0 when it did nothing.
func prefaultHeap(local, cpus int) int {
	if !gcPrefault || len(gcBallast) == 0 || local > cpus || heapObjects()-len(gcBallast) > prefaultHeapMax {
		return 0
	}
	n := len(faultIn(len(gcBallast)))
	runtime.GC() // frees faultIn's block (dead once its length is taken)
	return n
}

// prefaultHeapMax is the most heap (besides the ballast) a program may
// hold at Init for prefaultHeap to run: with more, its collections are
// rare already, and the forced one would mark all of it.
const prefaultHeapMax = 8 << 20

// heapObjects is the bytes of the heap's objects, live or not yet collected.
func heapObjects() int {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return math.MaxInt // unknown: do not prefault
	}
	return int(min(s[0].Value.Uint64(), math.MaxInt))
}

// faultIn allocates n bytes and has the kernel back every page of them.
//
//go:noinline
func faultIn(n int) []byte {
	b := make([]byte, n)
	if unix.Madvise(b, unix.MADV_POPULATE_WRITE) != nil {
		for i := 0; i < len(b); i += os.Getpagesize() {
			b[i] = 1
		}
	}
	return b
}
