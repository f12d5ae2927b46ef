package gorun

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rssBytes is this process's resident memory (/proc/self/statm).
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// TestBallast: the ballast is held at its configured size without making
// the process use that memory, is not taken under a memory limit or with
// size 0, and is dropped again.
func TestBallast(t *testing.T) {
	defer func(n int64) { gcBallastSize = n; dropBallast() }(gcBallastSize)

	gcBallastSize = 64 << 20
	before := rssBytes(t)
	holdBallast(0, 1) // memory unknown: the configured size
	if int64(len(gcBallast)) != gcBallastSize {
		t.Fatalf("ballast of %d bytes; want %d", len(gcBallast), gcBallastSize)
	}
	if grew := rssBytes(t) - before; grew > 8<<20 {
		t.Errorf("resident memory grew by %d bytes with a 64 MiB ballast; want it untouched", grew)
	}
	dropBallast()
	if gcBallast != nil {
		t.Fatal("dropBallast kept the ballast")
	}

	gcBallastSize = 0
	if holdBallast(0, 1); gcBallast != nil {
		t.Fatal("a ballast of size 0 was allocated")
	}

	gcBallastSize = 1 << 20
	old := debug.SetMemoryLimit(1 << 40)
	defer debug.SetMemoryLimit(old)
	if holdBallast(0, 1); gcBallast != nil {
		t.Fatal("a ballast was allocated under a memory limit")
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if holdBallast(0, 1); len(gcBallast) != 1<<20 {
		t.Fatalf("ballast of %d bytes without a limit; want 1 MiB", len(gcBallast))
	}
}

// TestBallastSize: the ballast is the configured size, but at most a 32nd
// of a rank's share of the machine's (or its control group's) memory.
func TestBallastSize(t *testing.T) {
	for _, tc := range []struct {
		name      string
		want, mem int64
		local     int
		size      int64
	}{
		{"memory unknown", 64 << 20, 0, 2, 64 << 20},
		{"plenty: 24 GiB, 2 ranks", 64 << 20, 24 << 30, 2, 64 << 20},
		{"plenty: 256 GiB, 128 ranks", 64 << 20, 256 << 30, 128, 64 << 20},
		{"a 2 GiB container, 16 ranks", 64 << 20, 2 << 30, 16, 4 << 20},
		{"a 4 GiB machine, 4 ranks", 64 << 20, 4 << 30, 4, 32 << 20},
		{"no rank count: as one", 64 << 20, 1 << 30, 0, 32 << 20},
		{"turned off", 0, 1 << 30, 1, 0},
	} {
		if got := ballastSize(tc.want, tc.mem, tc.local); got != tc.size {
			t.Errorf("%s: ballastSize(%d, %d, %d) = %d; want %d", tc.name, tc.want, tc.mem, tc.local, got, tc.size)
		}
	}
	defer func(n int64) { gcBallastSize = n; dropBallast() }(gcBallastSize)
	gcBallastSize = 64 << 20
	if holdBallast(2<<30, 16); len(gcBallast) != 4<<20 {
		t.Errorf("ballast of %d bytes for 16 ranks in 2 GiB; want 4 MiB", len(gcBallast))
	}
}

// TestPrefault: prefaultHeap leaves the ballast's size of heap resident
// and free, and does nothing without a ballast, when turned off, when the
// ranks outnumber the CPUs, or when the program's heap is large already.
func TestPrefault(t *testing.T) {
	defer func(n int64, on bool) { gcBallastSize, gcPrefault = n, on; dropBallast() }(gcBallastSize, gcPrefault)
	gcBallastSize, gcPrefault = 32<<20, true
	holdBallast(0, 1)
	if len(gcBallast) == 0 {
		t.Skip("no ballast (a memory limit is set)")
	}

	gcPrefault = false
	if n := prefaultHeap(1, 1); n != 0 {
		t.Errorf("turned off: faulted in %d bytes", n)
	}
	gcPrefault = true
	if n := prefaultHeap(3, 2); n != 0 {
		t.Errorf("3 ranks on 2 CPUs: faulted in %d bytes", n)
	}
	big := make([]byte, prefaultHeapMax+1<<20)
	if n := prefaultHeap(1, 1); n != 0 {
		t.Errorf("with %d bytes of heap already: faulted in %d bytes", len(big), n)
	}
	runtime.KeepAlive(big)
	big = nil
	// Freed and returned to the OS now, not by the background scavenger
	// while the growth below is measured (which took the growth under
	// 16 MiB in a loaded CI run: 15.5 MB).
	debug.FreeOSMemory()

	before, heapBefore := rssBytes(t), heapObjects()
	if n := prefaultHeap(2, 2); n != 32<<20 {
		t.Fatalf("faulted in %d bytes; want the ballast's 32 MiB", n)
	}
	// At least a quarter of the block: the collection that freed it may
	// let the runtime's scavenger return some of its pages at once (a
	// clean-clone CI run: 13.3 MB of 32 MiB still resident), and TestFaultIn
	// checks the fault-in itself page by page. Without the prefault the
	// growth is ~0.
	if grew := rssBytes(t) - before; grew < 8<<20 {
		t.Errorf("resident memory grew by %d bytes; want most of the 32 MiB block's pages resident", grew)
	}
	if heap := heapObjects(); heap > heapBefore+8<<20 {
		t.Errorf("heap objects %d bytes after, %d before: the block was not freed", heap, heapBefore)
	}

	dropBallast()
	if n := prefaultHeap(1, 1); n != 0 {
		t.Errorf("without a ballast: faulted in %d bytes", n)
	}
}

// TestFaultIn: every page of faultIn's block is resident when it returns
// (mincore), whatever the heap held there before.
func TestFaultIn(t *testing.T) {
	b := faultIn(8 << 20)
	pg := os.Getpagesize()
	vec := make([]byte, (len(b)+pg-1)/pg)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Skipf("mincore: %v", e)
	}
	for i, v := range vec {
		if v&1 == 0 {
			t.Fatalf("page %d of %d not resident after faultIn", i, len(vec))
		}
	}
	runtime.KeepAlive(b)
}
