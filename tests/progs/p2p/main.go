// Command p2p checks the point-to-point rules of the contract under the
// real launcher. Usage: gorun -np N p2p MODE; it prints "MODE ok" on rank 0
// and exits non-zero with a message naming the broken rule otherwise.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorun-mpi/gorun"
	"github.com/gorun-mpi/gorun/jobenv"
	"github.com/gorun-mpi/gorun/tests/progs/internal/rankprog"
)

var world *gorun.Comm

// pattern is the content of message i of n bytes from src.
func pattern(n, src, i int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(j*31 + src*7 + i*13)
	}
	return b
}

var sizes = []int{0, 1, 100, 4095, 4096, 4097, 8192, 32 << 10, 100 << 10, 1 << 20, 3, 0, 4 << 20, 7}

func main() {
	var mode string
	var f func()
	world, mode, f = rankprog.Start("p2p", map[string]func(){
		"order": order, "wildcard": wildcard, "probe": probe, "trunc": trunc, "ssend": ssend,
		"cancel": cancel, "dup": dup, "goroutines": goroutines, "flood": flood, "alltoall": alltoall,
		"peerlost": peerlost, "args": args, "finalize": finalize, "finalizesends": finalizeSends,
		"busy": busy,
	})
	f()
	if mode != "finalize" && mode != "finalizesends" {
		rankprog.Check(gorun.Finalize(), "Finalize")
	}
	if world.Rank() == 0 {
		fmt.Println(mode, "ok")
	}
}

// order: non-overtaking across the eager/rendezvous boundary, mixed sizes,
// all sent before the receiver posts anything.
func order() {
	switch world.Rank() {
	case 0:
		reqs := make([]*gorun.Request, len(sizes))
		for i, n := range sizes {
			var err error
			reqs[i], err = world.Isend(pattern(n, 0, i), 1, 42)
			rankprog.Check(err, "Isend")
		}
		_, err := gorun.WaitAll(reqs...)
		rankprog.Check(err, "WaitAll")
	case 1:
		time.Sleep(200 * time.Millisecond)
		buf := make([]byte, 5<<20)
		for i, n := range sizes {
			src := 0
			if i%2 == 1 {
				src = gorun.AnySource
			}
			st, err := world.Recv(buf, src, 42)
			rankprog.Check(err, "Recv")
			if st.Count != n || st.Source != 0 || st.Tag != 42 || !bytes.Equal(buf[:n], pattern(n, 0, i)) {
				rankprog.Fail("message %d: status %+v, want %d bytes of message %d (non-overtaking broken)", i, st, n, i)
			}
		}
	}
}

// wildcard: AnySource/AnyTag receives report the true source, tag, count.
func wildcard() {
	const per = 50
	if world.Rank() != 0 {
		for i := 0; i < per; i++ {
			n := (i * 997) % 9000
			rankprog.Check(world.Send(pattern(n, world.Rank(), i), 0, 100+i%3), "Send")
		}
		return
	}
	next := make([]int, world.Size())
	buf := make([]byte, 9000)
	for k := 0; k < per*(world.Size()-1); k++ {
		st, err := world.Recv(buf, gorun.AnySource, gorun.AnyTag)
		rankprog.Check(err, "Recv")
		i := next[st.Source]
		next[st.Source]++
		n := (i * 997) % 9000
		if st.Tag != 100+i%3 || st.Count != n || !bytes.Equal(buf[:n], pattern(n, st.Source, i)) {
			rankprog.Fail("wildcard receive %d: status %+v, want message %d of rank %d (%d bytes, tag %d)", k, st, i, st.Source, n, 100+i%3)
		}
	}
}

// probe: Probe reports the full length without consuming; then receive.
func probe() {
	switch world.Rank() {
	case 1:
		a, err := world.Isend(pattern(200000, 1, 0), 0, 5)
		rankprog.Check(err, "Isend")
		b, err := world.Isend(pattern(10, 1, 1), 0, 6)
		rankprog.Check(err, "Isend")
		_, err = gorun.WaitAll(a, b)
		rankprog.Check(err, "WaitAll")
	case 0:
		st, err := world.Probe(gorun.AnySource, 6)
		rankprog.Check(err, "Probe")
		if st.Source != 1 || st.Tag != 6 || st.Count != 10 {
			rankprog.Fail("Probe(AnySource, 6) = %+v, want source 1 tag 6 count 10", st)
		}
		st, err = world.Probe(1, gorun.AnyTag)
		rankprog.Check(err, "Probe")
		if st.Tag != 5 || st.Count != 200000 {
			rankprog.Fail("Probe(1, AnyTag) = %+v, want the earlier message: tag 5, 200000 bytes", st)
		}
		buf := make([]byte, st.Count)
		if _, err := world.Recv(buf, st.Source, st.Tag); err != nil || !bytes.Equal(buf, pattern(200000, 1, 0)) {
			rankprog.Fail("Recv after Probe: %v", err)
		}
		if _, ok, err := world.Iprobe(1, 5); ok || err != nil {
			rankprog.Fail("Iprobe sees a received message (ok=%v err=%v)", ok, err)
		}
		_, err = world.Recv(buf, 1, 6)
		rankprog.Check(err, "Recv")
	}
}

// trunc: truncation keeps the prefix, names the sizes, and traffic goes on.
func trunc() {
	lens := []int{100, 5000, 300000}
	switch world.Rank() {
	case 0:
		for i, n := range lens {
			rankprog.Check(world.Send(pattern(n, 0, i), 1, 1), "Send of a message the receiver truncates")
			rankprog.Check(world.Send([]byte("after"), 1, 2), "Send after truncation")
		}
	case 1:
		for i, n := range lens {
			buf := make([]byte, 64)
			st, err := world.Recv(buf, 0, 1)
			if !errors.Is(err, gorun.ErrTruncate) || st.Count != 64 || !bytes.Equal(buf, pattern(n, 0, i)[:64]) {
				rankprog.Fail("truncated receive of %d bytes: status %+v err %v", n, st, err)
			}
			for _, want := range []string{fmt.Sprint(n), "64", "rank 0", "tag 1"} {
				if !bytes.Contains([]byte(err.Error()), []byte(want)) {
					rankprog.Fail("truncation error %q does not mention %q", err, want)
				}
			}
			st, err = world.Recv(buf, 0, 2)
			if err != nil || string(buf[:st.Count]) != "after" {
				rankprog.Fail("receive after truncation: %+v %v", st, err)
			}
		}
	}
}

// ssend: a synchronous send does not complete before the receive is
// posted, nonblocking (Issend) or blocking (Ssend, which must not return).
func ssend() {
	issend()
	for _, n := range []int{0, 100, 100000} {
		switch world.Rank() {
		case 0:
			var returned atomic.Bool
			done := make(chan error, 1)
			go func() {
				err := world.Ssend(pattern(n, 0, n), 1, 5)
				returned.Store(true)
				done <- err
			}()
			time.Sleep(300 * time.Millisecond)
			if returned.Load() {
				rankprog.Fail("Ssend of %d bytes returned before the receiver posted its receive", n)
			}
			rankprog.Check(world.Send(nil, 1, 6), "Send go")
			rankprog.Check(<-done, "Ssend")
		case 1:
			_, err := world.Recv(nil, 0, 6)
			rankprog.Check(err, "Recv go")
			buf := make([]byte, n)
			st, err := world.Recv(buf, 0, 5)
			if err != nil || st.Count != n || !bytes.Equal(buf, pattern(n, 0, n)) {
				rankprog.Fail("receive of the blocking Ssend: %+v %v", st, err)
			}
		}
	}
}

// issend: the nonblocking half of ssend.
func issend() {
	for _, n := range []int{0, 100, 100000} {
		switch world.Rank() {
		case 0:
			r, err := world.Issend(pattern(n, 0, n), 1, 3)
			rankprog.Check(err, "Issend")
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			_, err = r.WaitContext(ctx)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				rankprog.Fail("Issend of %d bytes completed before the receiver posted its receive (err %v)", n, err)
			}
			rankprog.Check(world.Send(nil, 1, 4), "Send go")
			_, err = r.Wait()
			rankprog.Check(err, "Issend Wait")
		case 1:
			_, err := world.Recv(nil, 0, 4)
			rankprog.Check(err, "Recv go")
			buf := make([]byte, n)
			st, err := world.Recv(buf, 0, 3)
			if err != nil || st.Count != n || !bytes.Equal(buf, pattern(n, 0, n)) {
				rankprog.Fail("receive of the Ssend: %+v %v", st, err)
			}
		}
	}
}

// cancel: a cancelled receive completes with ErrCanceled, the buffer is
// untouched, the message goes to the next receive.
func cancel() {
	switch world.Rank() {
	case 0:
		buf := []byte("untouched")
		r, err := world.Irecv(buf, 1, 9)
		rankprog.Check(err, "Irecv")
		rankprog.Check(r.Cancel(), "Cancel")
		if _, err := r.Wait(); !errors.Is(err, gorun.ErrCanceled) {
			rankprog.Fail("Wait after Cancel: %v, want ErrCanceled", err)
		}
		st, err := r.Wait()
		if !errors.Is(err, gorun.ErrCanceled) || st != (gorun.Status{}) {
			rankprog.Fail("second Wait after Cancel: %+v %v", st, err)
		}
		rankprog.Check(world.Send(nil, 1, 1), "Send go")
		b2 := make([]byte, 16)
		st, err = world.Recv(b2, 1, 9)
		if err != nil || string(b2[:st.Count]) != "payload" || string(buf) != "untouched" {
			rankprog.Fail("after cancel: %+v %v %q %q", st, err, b2, buf)
		}
		s, err := world.Isend(nil, 1, 2)
		rankprog.Check(err, "Isend")
		if s.Cancel() == nil {
			rankprog.Fail("Cancel of a send request returned nil")
		}
		_, err = s.Wait()
		rankprog.Check(err, "send Wait")
	case 1:
		_, err := world.Recv(nil, 0, 1)
		rankprog.Check(err, "Recv go")
		rankprog.Check(world.Send([]byte("payload"), 0, 9), "Send")
		_, err = world.Recv(nil, 0, 2)
		rankprog.Check(err, "Recv")
	}
}

// dup: communicators are isolated matching contexts.
func dup() {
	d, err := world.Dup()
	rankprog.Check(err, "Dup")
	d2, err := d.Dup()
	rankprog.Check(err, "Dup of a Dup")
	if world.Rank() == 0 {
		rankprog.Check(d2.Send([]byte("d2"), 1, 1), "Send")
		rankprog.Check(d.Send([]byte("d"), 1, 1), "Send")
		rankprog.Check(world.Send([]byte("world"), 1, 1), "Send")
	} else if world.Rank() == 1 {
		buf := make([]byte, 8)
		for _, c := range []struct {
			comm *gorun.Comm
			want string
		}{{world, "world"}, {d, "d"}, {d2, "d2"}} {
			st, err := c.comm.Recv(buf, gorun.AnySource, gorun.AnyTag)
			if err != nil || string(buf[:st.Count]) != c.want {
				rankprog.Fail("communicator %q received %q (%v): contexts are not isolated", c.want, buf[:st.Count], err)
			}
		}
	}
	rankprog.Check(d.Barrier(), "Barrier")
}

// goroutines: many goroutines share one Comm in both directions.
func goroutines() {
	const G, M = 16, 300
	peer := 1 - world.Rank()
	if world.Rank() > 1 {
		return
	}
	var wg sync.WaitGroup
	for g := 0; g < G; g++ {
		wg.Add(2)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < M; i++ {
				n := (i * 1031) % 20000
				rankprog.Check(world.Send(pattern(n, world.Rank(), g*M+i), peer, g), "Send")
			}
		}(g)
		go func(g int) {
			defer wg.Done()
			buf := make([]byte, 20000)
			for i := 0; i < M; i++ {
				n := (i * 1031) % 20000
				st, err := world.Recv(buf, peer, g)
				if err != nil || st.Count != n || !bytes.Equal(buf[:n], pattern(n, peer, g*M+i)) {
					rankprog.Fail("goroutine %d message %d: %+v %v", g, i, st, err)
				}
			}
		}(g)
	}
	wg.Wait()
}

// flood: 20 000 small and 200 large messages, all sent before any receive.
func flood() {
	const small, large, largeN = 20000, 200, 256 << 10
	switch world.Rank() {
	case 0:
		reqs := make([]*gorun.Request, 0, small+large)
		big := pattern(largeN, 0, 0)
		for i := 0; i < small+large; i++ {
			var r *gorun.Request
			var err error
			if i%100 == 99 {
				r, err = world.Isend(big, 1, 2)
			} else {
				r, err = world.Isend(pattern(16, 0, i), 1, 1)
			}
			rankprog.Check(err, "Isend")
			reqs = append(reqs, r)
		}
		_, err := gorun.WaitAll(reqs...)
		rankprog.Check(err, "WaitAll")
	case 1:
		time.Sleep(time.Second)
		buf := make([]byte, largeN)
		for i := 0; i < small+large; i++ {
			if i%100 == 99 {
				st, err := world.Recv(buf, 0, 2)
				if err != nil || st.Count != largeN || !bytes.Equal(buf, pattern(largeN, 0, 0)) {
					rankprog.Fail("large message %d: %+v %v", i, st, err)
				}
				continue
			}
			st, err := world.Recv(buf, 0, 1)
			if err != nil || st.Count != 16 || !bytes.Equal(buf[:16], pattern(16, 0, i)) {
				rankprog.Fail("small message %d: %+v %v", i, st, err)
			}
		}
	}
}

// alltoall: every rank exchanges with every other, several rounds.
func alltoall() {
	n, me := world.Size(), world.Rank()
	for round, size := range []int{8, 4096, 40000, 300000} {
		var reqs []*gorun.Request
		bufs := make([][]byte, n)
		for p := 0; p < n; p++ {
			if p == me {
				continue
			}
			bufs[p] = make([]byte, size)
			r, err := world.Irecv(bufs[p], p, round)
			rankprog.Check(err, "Irecv")
			reqs = append(reqs, r)
		}
		for p := 0; p < n; p++ {
			if p == me {
				continue
			}
			r, err := world.Isend(pattern(size, me, p), p, round)
			rankprog.Check(err, "Isend")
			reqs = append(reqs, r)
		}
		_, err := gorun.WaitAll(reqs...)
		rankprog.Check(err, "WaitAll")
		for p := 0; p < n; p++ {
			if p != me && !bytes.Equal(bufs[p], pattern(size, p, me)) {
				rankprog.Fail("round %d: data from rank %d corrupted", round, p)
			}
		}
	}
}

// peerlost: rank 1 exits without Finalize; rank 0's receive from it
// returns ErrPeerLost instead of hanging.
func peerlost() {
	switch world.Rank() {
	case 1:
		// Pass for a rank that finalized: gorun would otherwise take the
		// exit for a failure (issue 16 item 4) and stop the job.
		jobenv.RecordFinalize()
		os.Exit(0)
	case 0:
		_, err := world.Recv(make([]byte, 4), 1, 0)
		if !errors.Is(err, gorun.ErrPeerLost) {
			rankprog.Fail("Recv from a rank that exited: %v, want ErrPeerLost", err)
		}
		fmt.Println("peerlost ok")
		os.Exit(0)
	}
}

// busy: a receiver that computes for busyFor between MPI calls while a
// 64 MiB message streams to its posted receive and small messages queue
// up behind it. Over TCP its socket's window stays shut meanwhile: the job
// must still succeed when busyFor is several times btl_tcp_timeout (a rank
// that is busy, not gone, is no lost peer).
func busy() {
	const busyFor, bigN, smallN = 6 * time.Second, 64 << 20, 200
	switch world.Rank() {
	case 0:
		reqs := []*gorun.Request{}
		r, err := world.Isend(pattern(bigN, 0, 0), 1, 3)
		rankprog.Check(err, "Isend")
		reqs = append(reqs, r)
		for i := 0; i < smallN; i++ {
			r, err := world.Isend(pattern(4096, 0, i), 1, 4)
			rankprog.Check(err, "Isend")
			reqs = append(reqs, r)
		}
		rankprog.Check(world.Barrier(), "Barrier")
		_, err = gorun.WaitAll(reqs...)
		rankprog.Check(err, "WaitAll")
	case 1:
		big := make([]byte, bigN)
		r, err := world.Irecv(big, 0, 3)
		rankprog.Check(err, "Irecv")
		rankprog.Check(world.Barrier(), "Barrier")
		time.Sleep(busyFor) // the computation: no MPI call
		_, err = r.Wait()
		rankprog.Check(err, "Wait")
		if !bytes.Equal(big, pattern(bigN, 0, 0)) {
			rankprog.Fail("the 64 MiB message arrived corrupted")
		}
		buf := make([]byte, 4096)
		for i := 0; i < smallN; i++ {
			_, err := world.Recv(buf, 0, 4)
			rankprog.Check(err, "Recv")
			if !bytes.Equal(buf, pattern(4096, 0, i)) {
				rankprog.Fail("small message %d arrived corrupted", i)
			}
		}
	}
}

// args: invalid arguments are reported by the call; nothing is sent.
func args() {
	if world.Rank() != 0 {
		return
	}
	n := world.Size()
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"Send to -1", world.Send(nil, -1, 0), gorun.ErrInvalidRank},
		{"Send to Size", world.Send(nil, n, 0), gorun.ErrInvalidRank},
		{"Send to AnySource", world.Send(nil, gorun.AnySource, 0), gorun.ErrInvalidRank},
		{"Send tag -1", world.Send(nil, 0, -1), gorun.ErrInvalidTag},
		{"Send tag MaxTag+1", world.Send(nil, 0, gorun.MaxTag+1), gorun.ErrInvalidTag},
		{"Recv tag MaxTag+1", func() error { _, err := world.Recv(nil, 0, gorun.MaxTag+1); return err }(), gorun.ErrInvalidTag},
		{"Recv tag -2", func() error { _, err := world.Recv(nil, 0, -2); return err }(), gorun.ErrInvalidTag},
		{"Probe rank Size", func() error { _, err := world.Probe(n, 0); return err }(), gorun.ErrInvalidRank},
		{"Sendrecv bad recv half", func() error { _, err := world.Sendrecv(nil, 0, 0, nil, n, 0); return err }(), gorun.ErrInvalidRank},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) {
			rankprog.Fail("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if r, err := world.Isend(nil, n, 0); r != nil || !errors.Is(err, gorun.ErrInvalidRank) {
		rankprog.Fail("Isend to Size: %v %v, want nil request and ErrInvalidRank", r, err)
	}
	// Nothing of the bad Sendrecv was sent: no message waits for us.
	if _, ok, _ := world.Iprobe(gorun.AnySource, gorun.AnyTag); ok {
		rankprog.Fail("a bad Sendrecv sent its send half")
	}
}

// finalize: Finalize is idempotent, later calls return ErrFinalized, Init too.
func finalize() {
	d, err := world.Dup()
	rankprog.Check(err, "Dup")
	pending, err := world.Irecv(make([]byte, 4), gorun.AnySource, 77) // never sent
	rankprog.Check(err, "Irecv")
	rankprog.Check(gorun.Finalize(), "Finalize")
	rankprog.Check(gorun.Finalize(), "second Finalize")
	if _, err := pending.Wait(); !errors.Is(err, gorun.ErrCanceled) {
		rankprog.Fail("a receive pending at Finalize: %v, want ErrCanceled", err)
	}
	for name, err := range map[string]error{
		"Send":        world.Send(nil, 0, 0),
		"Send on Dup": d.Send(nil, 0, 0),
		"Barrier":     world.Barrier(),
		"Recv":        func() error { _, err := world.Recv(nil, 0, 0); return err }(),
		"Iprobe":      func() error { _, _, err := world.Iprobe(0, 0); return err }(),
		"Isend":       func() error { _, err := world.Isend(nil, 0, 0); return err }(),
		"Dup":         func() error { _, err := world.Dup(); return err }(),
	} {
		if !errors.Is(err, gorun.ErrFinalized) {
			rankprog.Fail("%s after Finalize: %v, want ErrFinalized", name, err)
		}
	}
	if _, err := gorun.Init(); !errors.Is(err, gorun.ErrFinalized) {
		rankprog.Fail("Init after Finalize: %v", err)
	}
}

// finalizesends: Finalize completes the sends still outstanding, without
// a Wait: a rendezvous message to self (whose receive is posted but never
// waited for: with one rank, Finalize's barrier drives no progress) and,
// with more ranks, rendezvous messages to the next rank, which receives
// them before its own Finalize. After Finalize every send has completed.
func finalizeSends() {
	n, me := world.Size(), world.Rank()
	const size = 1 << 20 // rendezvous on every BTL
	_, err := world.Irecv(make([]byte, size), me, 1)
	rankprog.Check(err, "Irecv from self")
	s, err := world.Isend(pattern(size, me, 0), me, 1)
	rankprog.Check(err, "Isend to self")
	sends := []*gorun.Request{s}
	if n > 1 {
		for i := 0; i < 3; i++ {
			s, err := world.Isend(pattern(size, me, i), (me+1)%n, 2)
			rankprog.Check(err, "Isend")
			sends = append(sends, s)
		}
		buf := make([]byte, size)
		for i := 0; i < 3; i++ {
			st, err := world.Recv(buf, (me-1+n)%n, 2)
			if err != nil || st.Count != size || !bytes.Equal(buf, pattern(size, (me-1+n)%n, i)) {
				rankprog.Fail("message %d from rank %d: %+v %v", i, (me-1+n)%n, st, err)
			}
		}
	}
	rankprog.Check(gorun.Finalize(), "Finalize")
	for i, s := range sends {
		if _, ok, err := s.Test(); !ok || err != nil {
			rankprog.Fail("send %d after Finalize: done=%v err=%v; Finalize must complete outstanding sends", i, ok, err)
		}
	}
}
