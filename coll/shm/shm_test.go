package shm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

var le = binary.LittleEndian

// composeAffine combines maps x -> a*x+b (two uint64 each) in order:
// associative, not commutative, so a wrong order shows.
func composeAffine(acc, in []byte) {
	for i := 0; i+16 <= len(acc); i += 16 {
		a1, b1 := le.Uint64(acc[i:]), le.Uint64(acc[i+8:])
		a2, b2 := le.Uint64(in[i:]), le.Uint64(in[i+8:])
		le.PutUint64(acc[i:], a1*a2)
		le.PutUint64(acc[i+8:], a2*b1+b2)
	}
}

func input(r, it, n int) []byte {
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		le.PutUint64(b[i:], uint64(r*1000003+it*7919+i*31)|1)
	}
	return b
}

func ref(n, it, size int) []byte {
	acc := input(0, it, size)
	for r := 1; r < n; r++ {
		composeAffine(acc, input(r, it, size))
	}
	return acc
}

// team opens n teams over one segment in a temporary directory.
func teams(t *testing.T, n, slot int, h Hooks) []*Team {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seg")
	if err := Create(path, n, slot); err != nil {
		t.Fatal(err)
	}
	ts := make([]*Team, n)
	for r := range ts {
		var err error
		if ts[r], err = Open(path, n, r, slot, h); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ts[r].Close() })
	}
	return ts
}

// Every operation, mixed, with changing roots and sizes, on 1..9 ranks as
// goroutines: results against the rank-order model. Spinning and sleeping
// (Spin 1 ns: nearly every wait goes through the futex) both.
func TestOperations(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 8, 9} {
		for _, spin := range []time.Duration{0, time.Nanosecond} {
			lead := n%2 == 1
			t.Run(fmt.Sprint("n", n, "/spin", spin, "/lead", lead), func(t *testing.T) {
				const slot = 256
				// Bcasts of more than 40 bytes in pieces when spinning.
				pipe := 0
				if spin == 0 {
					pipe = 40
				}
				runAll(t, teams(t, n, slot, Hooks{Spin: spin, Yield: spin > 0, Lead: lead, Pipe: pipe}), 300, slot)
			})
		}
	}
}

func run(tm *Team, n, r, iters, slot int) error {
	for it := 0; it < iters; it++ {
		size := 16 * (1 + it%(slot/16))
		root := it % n
		switch it % 6 {
		case 0:
			if err := tm.Barrier(); err != nil {
				return err
			}
		case 1:
			buf := input(r, it, size)
			if err := tm.Allreduce(buf, composeAffine); err != nil {
				return err
			}
			if !bytes.Equal(buf, ref(n, it, size)) {
				return fmt.Errorf("rank %d: allreduce %d of %d bytes differs from the model", r, it, size)
			}
		case 2:
			in := input(r, it, size)
			out := make([]byte, size)
			if it%12 == 8 {
				out = in // in place: the root folds over its own input
			}
			if err := tm.Reduce(in, out, root, composeAffine); err != nil {
				return err
			}
			if r == root && !bytes.Equal(out, ref(n, it, size)) {
				return fmt.Errorf("rank %d: reduce %d to root %d differs from the model", r, it, root)
			}
		case 3:
			buf := make([]byte, size)
			if r == root {
				buf = input(root, it, size)
			}
			if err := tm.Bcast(buf, root); err != nil {
				return err
			}
			if !bytes.Equal(buf, input(root, it, size)) {
				return fmt.Errorf("rank %d: bcast %d from root %d differs", r, it, root)
			}
			if it%12 == 3 { // a Barrier after a Bcast (through its root with Lead)
				if err := tm.Barrier(); err != nil {
					return err
				}
			}
		case 4:
			b := size / n / 8 * 8
			out := make([]byte, n*b)
			copy(out[r*b:], input(r, it, b))
			if err := tm.Allgather(out); err != nil {
				return err
			}
			for j := 0; j < n; j++ {
				if !bytes.Equal(out[j*b:(j+1)*b], input(j, it, b)) {
					return fmt.Errorf("rank %d: allgather %d: block %d differs", r, it, j)
				}
			}
		case 5:
			b := size / n / 8 * 8
			in := make([]byte, n*b)
			for j := 0; j < n; j++ {
				copy(in[j*b:], input(r*n+j, it, b)) // rank r's block for rank j
			}
			out := in // in place every other time
			if it%12 == 5 {
				out = make([]byte, n*b)
			}
			if err := tm.Alltoall(in, out); err != nil {
				return err
			}
			for j := 0; j < n; j++ {
				if !bytes.Equal(out[j*b:(j+1)*b], input(j*n+r, it, b)) {
					return fmt.Errorf("rank %d: alltoall %d: block from %d differs", r, it, j)
				}
			}
		}
	}
	return nil
}

// Ranks that disagree on Hooks.Lead (each decides from what it sees of
// the machine) still get through every Barrier after a Bcast.
func TestMixedLead(t *testing.T) {
	const n, slot = 3, 256 // the Bcasts before Barriers in run have root 0, a leading rank
	path := filepath.Join(t.TempDir(), "seg")
	if err := Create(path, n, slot); err != nil {
		t.Fatal(err)
	}
	ts := make([]*Team, n)
	for r := range ts {
		tm, err := Open(path, n, r, slot, Hooks{Lead: r%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tm.Close() })
		ts[r] = tm
	}
	runAll(t, ts, 240, slot)
}

// runAll runs iters rounds of run on every team of ts, one goroutine per
// rank, and fails on the first error.
func runAll(t *testing.T, ts []*Team, iters, slot int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(ts))
	for r, tm := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- run(tm, len(ts), r, iters, slot)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A root that runs ahead through many Bcasts and Reduces never overwrites
// a slot another rank has not read: the slow ranks see every value.
func TestRootRunsAhead(t *testing.T) {
	const n, iters = 3, 200
	ts := teams(t, n, 64, Hooks{})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for it := 0; it < iters; it++ {
				buf := make([]byte, 64)
				if r == 0 {
					buf = input(0, it, 64)
				}
				if err := ts[r].Bcast(buf, 0); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(buf, input(0, it, 64)) {
					errs <- fmt.Errorf("rank %d: bcast %d differs", r, it)
					return
				}
			}
			errs <- nil
		}(r)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A failing Check ends a wait that would never end, and the team stays
// unusable with that error.
func TestCheckEndsWait(t *testing.T) {
	lost := errors.New("peer lost")
	ts := teams(t, 2, 64, Hooks{Spin: time.Nanosecond, Check: func() error { return lost }})
	if err := ts[0].Barrier(); !errors.Is(err, lost) {
		t.Fatalf("barrier without the peer: %v, want %v", err, lost)
	}
	if err := ts[0].Allreduce(make([]byte, 8), composeAffine); !errors.Is(err, lost) {
		t.Fatalf("after a failed wait: %v, want %v", err, lost)
	}
}

// Open refuses a file of the wrong size and a bad team.
func TestOpenErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seg")
	if err := Create(path, 2, 64); err != nil {
		t.Fatal(err)
	}
	if err := Create(path, 2, 64); err == nil {
		t.Error("Create over an existing file succeeded")
	}
	if _, err := Open(path, 3, 0, 64, Hooks{}); err == nil {
		t.Error("Open with the wrong size succeeded")
	}
	if _, err := Open(path, 2, 2, 64, Hooks{}); err == nil {
		t.Error("Open as rank 2 of 2 succeeded")
	}
}

// moveOff leaves the CPU it is given and puts the affinity mask back.
func TestMoveOff(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	if before.Count() < 2 {
		t.Skip("one CPU allowed: nowhere to move")
	}
	from := int(getcpu())
	if !moveOff(from) {
		t.Fatal("moveOff did not move")
	}
	if now := int(getcpu()); now == from {
		t.Errorf("still on CPU %d after moveOff", now)
	}
	var after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("affinity %v after moveOff, was %v", after, before)
	}
	if moveOff(from + 1024) { // not in the mask
		t.Error("moveOff moved off a CPU it was not allowed")
	}
}

// lookColoc: a rank that finds a lower-numbered rank on its CPU moves off
// it and no longer counts as sharing; the lower-numbered rank stays and
// does.
func TestLookColoc(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var mask unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mask); err != nil {
		t.Fatal(err)
	}
	ts := teams(t, 3, 64, Hooks{})
	c := getcpu() + 1
	ts[1].cpuWord(0).Store(c) // rank 0 ran here
	ts[0].cpuWord(2).Store(c) // and so did rank 2
	ts[0].lookColoc()
	if !ts[0].coloc {
		t.Error("rank 0 does not see rank 2 on its CPU")
	}
	if getcpu()+1 != c {
		t.Skip("the thread moved meanwhile")
	}
	ts[1].lookColoc()
	if mask.Count() < 2 {
		if !ts[1].coloc {
			t.Error("rank 1 cannot move but does not count as sharing")
		}
		return
	}
	if ts[1].coloc || getcpu()+1 == c {
		t.Errorf("rank 1 did not move off CPU %d (coloc %v)", c-1, ts[1].coloc)
	}
	if got := ts[0].cpuWord(1).Load(); got != getcpu()+1 {
		t.Errorf("rank 1 stored CPU %d, runs on %d", got-1, getcpu())
	}
}

// storeRel stores the whole value, seen by an atomic load.
func TestStoreRel(t *testing.T) {
	var w atomic.Uint64
	for _, v := range []uint64{1, 1 << 40, ^uint64(0), 0} {
		storeRel((*uint64)(unsafe.Pointer(&w)), v)
		if got := w.Load(); got != v {
			t.Errorf("stored %#x, loaded %#x", v, got)
		}
	}
}

// readSelf is Hooks.Read for teams of goroutines: process_vm_readv of this
// process, as the BTL reads another rank's.
func readSelf(r int, addr uintptr, dst []byte) error {
	local := unix.Iovec{Base: &dst[0]}
	local.SetLen(len(dst))
	remote := unix.RemoteIovec{Base: addr, Len: len(dst)}
	n, err := unix.ProcessVMReadv(unix.Getpid(), []unix.Iovec{local}, []unix.RemoteIovec{remote}, 0)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return fmt.Errorf("read %d of %d bytes", n, len(dst))
	}
	return nil
}

// writeSelf is Hooks.Write for teams of goroutines, as readSelf.
func writeSelf(r int, addr uintptr, src []byte) error {
	local := unix.Iovec{Base: &src[0]}
	local.SetLen(len(src))
	remote := unix.RemoteIovec{Base: addr, Len: len(src)}
	n, err := unix.ProcessVMWritev(unix.Getpid(), []unix.Iovec{local}, []unix.RemoteIovec{remote}, 0)
	if err != nil {
		return err
	}
	if n != len(src) {
		return fmt.Errorf("wrote %d of %d bytes", n, len(src))
	}
	return nil
}

// The single-copy operations, mixed with the slot ones, with changing
// roots and sizes (across readChunk), in place and not: results against
// the rank-order model.
func TestReadOperations(t *testing.T) {
	if err := readSelf(0, uintptr(unsafe.Pointer(&le)), make([]byte, 1)); err != nil {
		t.Skipf("process_vm_readv: %v", err)
	}
	sizes := []int{16, 4096, readChunk, readChunk + 48, 2*readChunk + 16*37}
	for _, n := range []int{1, 2, 3, 4} {
		for _, spin := range []time.Duration{0, time.Nanosecond} {
			for _, write := range []bool{true, false} {
				t.Run(fmt.Sprint("n", n, "/spin", spin, "/write", write), func(t *testing.T) {
					sizes := sizes
					if n == 2 { // Reduces and Bcasts split between root and the other rank (with write)
						// and both reduceHalves shares (halvesRoot)
						sizes = append(sizes, splitMin+64*3, bcastSplitMin+8, halvesMin+16*37, halvesMax)
					}
					h := Hooks{Spin: spin, Yield: spin > 0, Read: readSelf}
					if write {
						h.Write = writeSelf
					}
					ts := teams(t, n, 256, h)
					if !ts[0].CanRead() {
						t.Fatal("CanRead false with Hooks.Read")
					}
					var wg sync.WaitGroup
					errs := make(chan error, n)
					for r, tm := range ts {
						wg.Add(1)
						go func() {
							defer wg.Done()
							errs <- runRead(tm, n, r, 60, sizes)
						}()
					}
					wg.Wait()
					close(errs)
					for err := range errs {
						if err != nil {
							t.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// addU64 adds uint64s element-wise: it commutes.
func addU64(acc, in []byte) {
	for i := 0; i+8 <= len(acc); i += 8 {
		le.PutUint64(acc[i:], le.Uint64(acc[i:])+le.Uint64(in[i:]))
	}
}

func runRead(tm *Team, n, r, iters int, sizes []int) error {
	for it := 0; it < iters; it++ {
		size := sizes[it%len(sizes)]
		root := (it / 5) % n
		switch it % 5 {
		case 0:
			in := input(r, it, size)
			out := make([]byte, size)
			if err := tm.AllreduceRead(in, out, composeAffine); err != nil {
				return err
			}
			if !bytes.Equal(out, ref(n, it, size)) {
				return fmt.Errorf("rank %d: allreduce %d of %d bytes differs from the model", r, it, size)
			}
			if !bytes.Equal(in, input(r, it, size)) {
				return fmt.Errorf("rank %d: allreduce %d changed its input", r, it)
			}
			// Split in parts of 16-byte elements (composeAffine's),
			// each folded by one rank in rank order: the model's bits.
			sz := size / 16 * 16
			out = make([]byte, sz)
			if err := tm.AllreduceSplitRead(in[:sz], out, 16, composeAffine); err != nil {
				return err
			}
			if !bytes.Equal(out, ref(n, it, sz)) {
				return fmt.Errorf("rank %d: split allreduce %d of %d bytes differs from the model", r, it, sz)
			}
		case 1:
			in := input(r, it, size)
			out := make([]byte, size)
			if it%10 == 6 {
				out = in // in place at the root
			}
			if err := tm.ReduceRead(in, out, root, composeAffine, false); err != nil {
				return err
			}
			if r == root && !bytes.Equal(out, ref(n, it, size)) {
				return fmt.Errorf("rank %d: reduce %d of %d bytes to root %d differs from the model", r, it, size, root)
			}
			// A commuting op (sums), root reading others into out first.
			in = input(r, it, size)
			out = make([]byte, size)
			if it%10 == 1 {
				out = in
			}
			if err := tm.ReduceRead(in, out, root, addU64, true); err != nil {
				return err
			}
			want := input(0, it, size)
			for j := 1; j < n; j++ {
				addU64(want, input(j, it, size))
			}
			if r == root && !bytes.Equal(out, want) {
				return fmt.Errorf("rank %d: commuting reduce %d of %d bytes to root %d differs from the sum", r, it, size, root)
			}
		case 2:
			out := make([]byte, n*size)
			in := input(r, it, size)
			if it%10 == 7 {
				copy(out[r*size:], in)
				in = out[r*size : (r+1)*size] // in place
			}
			if err := tm.AllgatherRead(in, out); err != nil {
				return err
			}
			for j := 0; j < n; j++ {
				if !bytes.Equal(out[j*size:(j+1)*size], input(j, it, size)) {
					return fmt.Errorf("rank %d: allgather %d of %d bytes: block %d differs", r, it, size, j)
				}
			}
		case 3:
			b := size / 8 * 8
			in := make([]byte, n*b)
			for j := 0; j < n; j++ {
				copy(in[j*b:], input(r*n+j, it, b))
			}
			out := make([]byte, n*b)
			if err := tm.AlltoallRead(in, out); err != nil {
				return err
			}
			for j := 0; j < n; j++ {
				if !bytes.Equal(out[j*b:(j+1)*b], input(j*n+r, it, b)) {
					return fmt.Errorf("rank %d: alltoall %d: block from %d differs", r, it, j)
				}
			}
		case 4: // the slot operations in between, and BcastRead
			big := make([]byte, size)
			if r == root {
				big = input(root, it, size)
			}
			if err := tm.BcastRead(big, root); err != nil {
				return err
			}
			if !bytes.Equal(big, input(root, it, size)) {
				return fmt.Errorf("rank %d: bcast %d of %d bytes from root %d differs", r, it, size, root)
			}
			buf := make([]byte, 64)
			if r == root {
				buf = input(root, it, 64)
			}
			if err := tm.Bcast(buf, root); err != nil {
				return err
			}
			if !bytes.Equal(buf, input(root, it, 64)) {
				return fmt.Errorf("rank %d: bcast %d differs", r, it)
			}
			small := input(r, it, 48)
			if err := tm.Reduce(small, small, root, composeAffine); err != nil {
				return err
			}
			if r == root && !bytes.Equal(small, ref(n, it, 48)) {
				return fmt.Errorf("rank %d: reduce %d differs", r, it)
			}
		}
	}
	return tm.Barrier()
}
