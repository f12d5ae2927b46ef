// Command pmlhard checks how the point-to-point layer holds up under
// concurrency and faults (issue 16 items 3, 5, 10 and 14) under the real
// launcher. Usage: gorun -np N pmlhard MODE. Each rank prints "MODE ok R"
// (finalizerace also its counts) and exits 0; a broken rule is a message on
// stderr and exit status 1.
package main

import (
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

func main() {
	var mode string
	var f func()
	world, mode, f = rankprog.Start("pmlhard", map[string]func(){
		"finalizerace": finalizeRace, "waitany": waitAny, "anylost": anyLost, "finalizequeue": finalizeQueue,
	})
	f()
	fmt.Printf("%s ok %d\n", mode, world.Rank())
}

// Tags of finalizerace's traffic.
const (
	tagSsend = 1 + iota
	tagLarge
	tagFlood
)

// finalizeRace (item 3): goroutines send and receive while the main
// goroutine calls Finalize. Every call must either complete or return
// ErrFinalized (receives: ErrCanceled too, Finalize cancels them; sends to
// a peer that already left: ErrPeerLost), no goroutine may spin forever
// after Finalize, nothing may touch the unmapped segment (SIGSEGV), and a
// synchronous send that returned nil was matched: the rank prints how many
// Ssends succeeded and how many the peer received, and the test compares.
func finalizeRace() {
	me, peer := world.Rank(), 1-world.Rank()
	var ssendOK, recvSsend, ops atomic.Int64
	var wg sync.WaitGroup
	sendErr := func(what string, err error) bool {
		if err == nil {
			return false
		}
		if !errors.Is(err, gorun.ErrFinalized) && !errors.Is(err, gorun.ErrPeerLost) {
			rankprog.Fail("%s racing Finalize: %v, want nil, ErrFinalized or ErrPeerLost", what, err)
		}
		return true
	}
	small, large := make([]byte, 64), make([]byte, 256<<10)
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() { // synchronous and rendezvous sends, with gaps Finalize can wait for
			defer wg.Done()
			for {
				if sendErr("Ssend", world.Ssend(small, peer, tagSsend)) {
					return
				}
				ssendOK.Add(1)
				ops.Add(1)
				if sendErr("Send (rendezvous)", world.Send(large, peer, tagLarge)) {
					return
				}
				time.Sleep(20 * time.Microsecond)
			}
		}()
	}
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() { // eager sends: some by reference once fragments run out
			defer wg.Done()
			buf := make([]byte, 4000)
			for {
				if sendErr("Send (eager)", world.Send(buf, peer, tagFlood)) {
					return
				}
				ops.Add(1)
			}
		}()
	}
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, len(large))
			for {
				st, err := world.Recv(buf, peer, gorun.AnyTag)
				if err != nil {
					if !errors.Is(err, gorun.ErrFinalized) && !errors.Is(err, gorun.ErrCanceled) && !errors.Is(err, gorun.ErrPeerLost) {
						rankprog.Fail("Recv racing Finalize: %v, want nil, ErrFinalized, ErrCanceled or ErrPeerLost", err)
					}
					return
				}
				if st.Tag == tagSsend {
					recvSsend.Add(1)
				}
				ops.Add(1)
			}
		}()
	}
	for ops.Load() < 200 { // traffic flows both ways before Finalize starts
		time.Sleep(time.Millisecond)
	}
	if err := gorun.Finalize(); err != nil && !errors.Is(err, gorun.ErrPeerLost) {
		rankprog.Fail("Finalize: %v", err)
	}
	wg.Wait() // a goroutine spinning forever after Finalize hangs here
	fmt.Printf("ssend-ok %d %d\nrecv-ssend %d %d\n", me, ssendOK.Load(), me, recvSsend.Load())
}

// waitAny (item 5): several goroutines call WaitAny over the same
// requests; each index is returned exactly once, and every call ends (-1
// once none is left), round after round.
func waitAny() {
	const rounds, n, goroutines = 40, 48, 8
	for round := 0; round < rounds; round++ {
		if world.Rank() == 0 {
			for i := 0; i < n; i++ {
				rankprog.Check(world.Send([]byte{byte(i)}, 1, round), "Send")
			}
			continue
		}
		reqs := make([]*gorun.Request, n)
		for i := range reqs {
			var err error
			reqs[i], err = world.Irecv(make([]byte, 1), 0, round)
			rankprog.Check(err, "Irecv")
		}
		var got [n]atomic.Int32
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i, _, err := gorun.WaitAny(reqs...)
					rankprog.Check(err, "WaitAny")
					if i < 0 {
						return
					}
					if got[i].Add(1) != 1 {
						rankprog.Fail("round %d: WaitAny returned index %d twice", round, i)
					}
				}
			}()
		}
		wg.Wait()
		for i := range got {
			if got[i].Load() != 1 {
				rankprog.Fail("round %d: index %d returned %d times, want once", round, i, got[i].Load())
			}
		}
	}
	rankprog.Check(gorun.Finalize(), "Finalize")
}

// anyLost (item 10): once every other rank has ended, receives and probes
// from AnySource fail with ErrPeerLost (pending, new, blocking and not),
// while a message already here is still received.
func anyLost() {
	if world.Rank() != 0 {
		if world.Rank() == 1 {
			rankprog.Check(world.Send([]byte("left"), 0, 3), "Send")
		}
		rankprog.Check(world.Barrier(), "Barrier")
		// Ends without Finalize (rank 0 must not wait forever), passing
		// for a rank that finalized: gorun would otherwise take the exit
		// for a failure (issue 16 item 4) and stop the job.
		jobenv.RecordFinalize()
		os.Exit(0)
	}
	pending, err := world.Irecv(make([]byte, 4), gorun.AnySource, 9) // never sent
	rankprog.Check(err, "Irecv")
	rankprog.Check(world.Barrier(), "Barrier")
	if _, err := world.Recv(make([]byte, 4), gorun.AnySource, 7); !errors.Is(err, gorun.ErrPeerLost) {
		rankprog.Fail("Recv from AnySource after every other rank ended: %v, want ErrPeerLost", err)
	}
	if _, err := pending.Wait(); !errors.Is(err, gorun.ErrPeerLost) {
		rankprog.Fail("a pending AnySource receive after every other rank ended: %v, want ErrPeerLost", err)
	}
	if _, err := world.Probe(gorun.AnySource, gorun.AnyTag+8); !errors.Is(err, gorun.ErrPeerLost) {
		rankprog.Fail("Probe from AnySource after every other rank ended: %v, want ErrPeerLost", err)
	}
	if _, err := world.Irecv(make([]byte, 4), gorun.AnySource, 7); !errors.Is(err, gorun.ErrPeerLost) {
		rankprog.Fail("Irecv from AnySource after every other rank ended: %v, want ErrPeerLost", err)
	}
	// A message that arrived before its sender left is still received.
	if st, err := world.Recv(make([]byte, 4), gorun.AnySource, 3); err != nil || st.Source != 1 {
		rankprog.Fail("Recv of a message already here: %+v %v, want it from rank 1", st, err)
	}
	jobenv.RecordFinalize() // Finalize cannot synchronize with ranks that are gone
}

// finalizeQueue (item 14): rank 1 sends rank 0 more messages than its FIFO
// holds, so they queue in rank 1, then both finalize at once: rank 1's
// barrier message queues behind them, and its Finalize must deliver it
// before closing, or rank 0 waits for it and finds rank 1 gone.
func finalizeQueue() {
	const flood = 20000
	if world.Rank() == 0 {
		rankprog.Check(world.Send([]byte("go"), 1, 1), "Send")
		rankprog.Check(gorun.Finalize(), "Finalize")
		return
	}
	_, err := world.Recv(make([]byte, 2), 0, 1)
	rankprog.Check(err, "Recv")
	msg := make([]byte, 64)
	for i := 0; i < flood; i++ {
		rankprog.Check(world.Send(msg, 0, 5), "Send")
	}
	rankprog.Check(gorun.Finalize(), "Finalize")
}
