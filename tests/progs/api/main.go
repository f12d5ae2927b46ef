// Command api checks the API that ported MPI programs rely on (typed
// nonblocking calls, element counts, Wtime, ProcessorName, matched probe)
// under the real launcher. Usage: gorun -np N api MODE; it prints
// "MODE ok" on rank 0 and exits non-zero with a message naming the broken
// rule otherwise.
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/gorun-mpi/gorun"
	"github.com/gorun-mpi/gorun/jobenv"
	"github.com/gorun-mpi/gorun/tests/progs/internal/rankprog"
)

var world *gorun.Comm

func main() {
	var mode string
	var f func()
	world, mode, f = rankprog.Start("api", map[string]func(){
		"typed": typed, "names": names, "mprobe": mprobe,
		"fatal-send": fatalSend, "fatal-slice": fatalSlice, "fatal-exempt": fatalExempt, "fatal-peer": fatalPeer,
		"ignoreterm": ignoreTerm, "fatal-coll": fatalColl,
	})
	f()
	rankprog.Check(gorun.Finalize(), "Finalize")
	if world.Rank() == 0 {
		fmt.Println(mode, "ok")
	}
}

// typed: IsendSlice/IrecvSlice/SendrecvSlice on []float64, []int32 and
// []int between ranks in a ring, with Count per type.
func typed() {
	n, me := world.Size(), world.Rank()
	right, left := (me+1)%n, (me-1+n)%n
	for _, elems := range []int{0, 1, 100, 1000, 100000} { // eager and rendezvous
		f := make([]float64, elems)
		for i := range f {
			f[i] = float64(me)*1e6 + float64(i) + 0.5
		}
		fr := make([]float64, elems)
		r, err := gorun.IrecvSlice(world, fr, left, 1)
		rankprog.Check(err, "IrecvSlice")
		s, err := gorun.IsendSlice(world, f, right, 1)
		rankprog.Check(err, "IsendSlice")
		sts, err := gorun.WaitAll(r, s)
		rankprog.Check(err, "WaitAll")
		if gorun.Count[float64](sts[0]) != elems || sts[0].Source != left {
			rankprog.Fail("IrecvSlice of %d float64: status %+v, Count %d", elems, sts[0], gorun.Count[float64](sts[0]))
		}
		for i, v := range fr {
			if v != float64(left)*1e6+float64(i)+0.5 {
				rankprog.Fail("IrecvSlice of %d float64: element %d = %v", elems, i, v)
			}
		}

		is := make([]int32, elems)
		for i := range is {
			is[i] = int32(me*100000 + i)
		}
		ir := make([]int, elems) // a different element type on the receiving side
		st, err := gorun.SendrecvSlice(world, is, right, 2, ir, left, 2)
		rankprog.Check(err, "SendrecvSlice")
		wantBytes := 4 * elems
		if st.Count != wantBytes || st.Source != left || st.Tag != 2 {
			rankprog.Fail("SendrecvSlice of %d int32: status %+v, want %d bytes from %d", elems, st, wantBytes, left)
		}
		if got := gorun.Count[int32](st); got != elems {
			rankprog.Fail("Count[int32] of %d int32 = %d", elems, got)
		}
		want64 := elems / 2
		if elems%2 != 0 {
			want64 = gorun.Undefined
		}
		if unsafe.Sizeof(int(0)) == 8 {
			if got := gorun.Count[int](st); got != want64 {
				rankprog.Fail("Count[int] of %d int32 = %d, want %d", elems, got, want64)
			}
		}
		got32 := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(ir))), elems)
		for i, v := range got32 {
			if v != int32(left*100000+i) {
				rankprog.Fail("SendrecvSlice of %d int32: element %d = %d", elems, i, v)
			}
		}

		// Go's int both ways.
		ints := make([]int, elems)
		for i := range ints {
			ints[i] = -(me<<40 + i)
		}
		back := make([]int, elems)
		st, err = gorun.SendrecvSlice(world, ints, right, 3, back, left, 3)
		rankprog.Check(err, "SendrecvSlice of int")
		if gorun.Count[int](st) != elems {
			rankprog.Fail("SendrecvSlice of %d int: Count %d", elems, gorun.Count[int](st))
		}
		for i, v := range back {
			if v != -(left<<40 + i) {
				rankprog.Fail("SendrecvSlice of %d int: element %d = %d", elems, i, v)
			}
		}
	}
}

// names: every rank of a one-machine job has the same, non-empty
// ProcessorName (the hostname), and Wtime never goes backwards.
func names() {
	name := gorun.ProcessorName()
	host, _ := os.Hostname()
	if name == "" || (host != "" && name != host) {
		rankprog.Fail("ProcessorName() = %q, want the hostname %q", name, host)
	}
	buf := make([]byte, 256)
	st, err := world.Sendrecv([]byte(name), (world.Rank()+1)%world.Size(), 0,
		buf, (world.Rank()-1+world.Size())%world.Size(), 0)
	rankprog.Check(err, "Sendrecv")
	if string(buf[:st.Count]) != name {
		rankprog.Fail("rank %d's ProcessorName %q differs from ours %q on one machine", st.Source, buf[:st.Count], name)
	}
	prev := gorun.Wtime()
	for i := 0; i < 100000; i++ {
		now := gorun.Wtime()
		if now < prev {
			rankprog.Fail("Wtime went backwards: %v after %v", now, prev)
		}
		prev = now
	}
	a := gorun.Wtime()
	rankprog.Check(world.Barrier(), "Barrier")
	if d := gorun.Wtime() - a; d < 0 {
		rankprog.Fail("Wtime difference across a Barrier is %v", d)
	}
}

// mprobe: G goroutines of rank 0 take messages from rank 1 by matched
// probes (half blocking Mprobe, half polling Improbe; receiving through
// Message.Recv or Message.Irecv), eager and rendezvous sizes mixed: every
// message is received exactly once, intact. A Message is received once.
func mprobe() {
	const G, M, stopTag = 8, 600, 2
	size := func(i int) int { return 4 + (i*7919)%150000 }
	msg := func(i int) []byte {
		b := make([]byte, size(i))
		for j := range b {
			b[j] = byte(j*13 + i)
		}
		binary.LittleEndian.PutUint32(b, uint32(i))
		return b
	}
	switch world.Rank() {
	case 1:
		for i := 0; i < M; i++ {
			rankprog.Check(world.Send(msg(i), 0, 1), "Send")
		}
		for g := 0; g < G; g++ {
			rankprog.Check(world.Send(nil, 0, stopTag), "Send stop")
		}
	case 0:
		var mu sync.Mutex
		seen := make([]int, M)
		var wg sync.WaitGroup
		for g := 0; g < G; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				buf := make([]byte, 150004)
				for k := 0; ; k++ {
					m, st, ok := probeFrom1(g%2 == 0)
					if !ok {
						continue
					}
					receiveProbed(m, st, buf, k%2 == 0)
					if st.Tag == stopTag {
						return
					}
					i := int(binary.LittleEndian.Uint32(buf))
					if i >= M || st.Count != size(i) || !bytes.Equal(buf[:st.Count], msg(i)) {
						rankprog.Fail("message %d (%d bytes): corrupted or wrong size", i, st.Count)
					}
					mu.Lock()
					seen[i]++
					mu.Unlock()
				}
			}(g)
		}
		wg.Wait()
		for i, n := range seen {
			if n != 1 {
				rankprog.Fail("message %d received %d times, want exactly once", i, n)
			}
		}
		var nilMsg *gorun.Message
		if _, err := nilMsg.Recv(nil); !errors.Is(err, gorun.ErrInvalidArg) {
			rankprog.Fail("Recv of a nil Message: %v, want ErrInvalidArg", err)
		}
		if _, _, ok, err := world.Improbe(1, gorun.AnyTag); ok || err != nil {
			rankprog.Fail("Improbe after every message was taken: ok=%v err=%v", ok, err)
		}
	}
}

// probeFrom1 probes for any message from rank 1: with Mprobe (blocking)
// or with Improbe (ok false when nothing is there yet).
func probeFrom1(blocking bool) (*gorun.Message, gorun.Status, bool) {
	if blocking {
		m, st, err := world.Mprobe(1, gorun.AnyTag)
		rankprog.Check(err, "Mprobe")
		return m, st, true
	}
	m, st, ok, err := world.Improbe(1, gorun.AnyTag)
	rankprog.Check(err, "Improbe")
	if !ok && m != nil {
		rankprog.Fail("Improbe returned a Message with ok=false")
	}
	return m, st, ok
}

// receiveProbed receives the probed message m into buf (with Recv, or
// Irecv and Wait), checks that its status is the probe's, and that m
// cannot be received twice.
func receiveProbed(m *gorun.Message, st gorun.Status, buf []byte, blocking bool) {
	var rst gorun.Status
	var err error
	if blocking {
		rst, err = m.Recv(buf)
	} else {
		var r *gorun.Request
		r, err = m.Irecv(buf)
		rankprog.Check(err, "Message.Irecv")
		rst, err = r.Wait()
	}
	rankprog.Check(err, "Message receive")
	if rst != st {
		rankprog.Fail("received %+v, the probe said %+v", rst, st)
	}
	if _, err := m.Recv(buf); !errors.Is(err, gorun.ErrInvalidArg) {
		rankprog.Fail("a second Recv of a Message: %v, want ErrInvalidArg", err)
	}
	if r, err := m.Irecv(buf); r != nil || !errors.Is(err, gorun.ErrInvalidArg) {
		rankprog.Fail("Irecv of a received Message: %v %v, want nil and ErrInvalidArg", r, err)
	}
}

// fatal-send: rank 0 sends to rank Size(), a rank that does not exist.
// Under mpi_base_errors_fatal the job stops there with exit 1; otherwise
// Send returns ErrInvalidRank and the program says so.
func fatalSend() {
	if world.Rank() != 0 {
		return
	}
	err := world.Send([]byte("x"), world.Size(), 0)
	fmt.Printf("Send returned: %v\n", err)
	if !errors.Is(err, gorun.ErrInvalidRank) {
		rankprog.Fail("Send to rank %d of %d: %v, want ErrInvalidRank", world.Size(), world.Size(), err)
	}
}

// fatal-slice: the error of a typed helper is reported under its own name.
func fatalSlice() {
	if world.Rank() != 0 {
		return
	}
	err := gorun.SendSlice(world, []float64{1}, 0, -5)
	fmt.Printf("SendSlice returned: %v\n", err)
	os.Exit(3)
}

// fatal-exempt: what a program asks for is returned even when errors are
// fatal: a cancelled receive's ErrCanceled (alone, or joined by WaitAll)
// and a context's end in WaitContext.
func fatalExempt() {
	r, err := world.Irecv(make([]byte, 4), gorun.AnySource, 99)
	rankprog.Check(err, "Irecv")
	rankprog.Check(r.Cancel(), "Cancel")
	if _, err := r.Wait(); !errors.Is(err, gorun.ErrCanceled) {
		rankprog.Fail("Wait of a cancelled receive: %v", err)
	}
	if _, err := gorun.WaitAll(r, nil, r); !errors.Is(err, gorun.ErrCanceled) {
		rankprog.Fail("WaitAll of cancelled receives: %v", err)
	}
	r2, err := world.Irecv(make([]byte, 4), gorun.AnySource, 98)
	rankprog.Check(err, "Irecv")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := r2.WaitContext(ctx); !errors.Is(err, context.DeadlineExceeded) {
		rankprog.Fail("WaitContext past its deadline: %v", err)
	}
	rankprog.Check(r2.Cancel(), "Cancel")
	rankprog.Check(world.Barrier(), "Barrier")
}

// fatal-peer [CODE]: rank 1 exits with status CODE (default 7) without
// Finalize; rank 0's receive from it fails with ErrPeerLost. Under
// mpi_base_errors_fatal gorun's exit status is the peer's CODE when it is a
// failure, not rank 0's abort.
func fatalPeer() {
	code := 7
	if len(os.Args) > 2 {
		fmt.Sscan(os.Args[2], &code)
	}
	rankprog.Check(world.Barrier(), "Barrier") // both past Init
	switch world.Rank() {
	case 1:
		if code == 0 {
			// Pass for a rank that finalized: gorun would otherwise take
			// the exit for a failure (issue 16 item 4) and stop the job.
			jobenv.RecordFinalize()
		}
		os.Exit(code)
	case 0:
		_, err := world.Recv(make([]byte, 4), 1, 0)
		fmt.Printf("Recv returned: %v\n", err)
		os.Exit(3)
	}
}

// ignoreterm: every rank but 0 ignores SIGTERM and sleeps; once all have,
// rank 0 prints "ready" and exits with 3. gorun must still stop them (by
// SIGKILL after its grace) and exit with 3 within the contract's 10 s.
func ignoreTerm() {
	if world.Rank() != 0 {
		signal.Ignore(syscall.SIGTERM)
	}
	rankprog.Check(world.Barrier(), "Barrier")
	if world.Rank() == 0 {
		fmt.Println("ready")
		os.Exit(3)
	}
	time.Sleep(time.Hour)
}

// fatal-coll: a collective's argument error (a root outside the
// communicator) under mpi_base_errors_fatal stops the job, naming the
// collective.
func fatalColl() {
	err := gorun.Bcast(world, []float64{1}, world.Size())
	fmt.Printf("Bcast returned: %v\n", err)
	os.Exit(3)
}
