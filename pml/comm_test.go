package pml

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/pml/match"
)

// MPI_Comm_split: ranks of one color form a communicator ordered by
// (key, parent rank); Undefined gets nil; ranks, sizes and Status.Source are
// the new communicator's; traffic stays within it.
func TestSplitGroupsAndTranslatesRanks(t *testing.T) {
	const n = 5
	job(t, newFakeNet(n, 256, 1024), func(t *testing.T, w *Comm) {
		me := w.Rank()
		color := me % 2
		if me == 4 {
			color = -1
		}
		s, err := w.Split(color, -me) // reverse order within a color
		if err != nil {
			t.Errorf("rank %d: Split: %v", me, err)
			return
		}
		if me == 4 {
			if s != nil {
				t.Errorf("rank 4: Undefined color gave a communicator")
			}
			return
		}
		members := map[int][]int{0: {2, 0}, 1: {3, 1}}[color]
		if s.Size() != 2 || s.WorldRank(s.Rank()) != me || members[s.Rank()] != me {
			t.Errorf("rank %d: split rank %d size %d; want position of %d in %v", me, s.Rank(), s.Size(), me, members)
			return
		}
		peer := 1 - s.Rank()
		buf := make([]byte, 8)
		var r Request
		if err := s.Irecv(&r, buf, match.AnySource, AnyTagForTest); err != nil {
			t.Error(err)
			return
		}
		if err := s.Send([]byte(fmt.Sprint(me)), peer, 7, false); err != nil {
			t.Error(err)
		}
		st, err := r.Wait(nil)
		if err != nil || st.Source != peer || string(buf[:st.Count]) != fmt.Sprint(members[peer]) {
			t.Errorf("rank %d: got %q from %d (%v); want %q from %d", me, buf[:st.Count], st.Source, err, fmt.Sprint(members[peer]), peer)
		}
		if err := s.Send(nil, 2, 0, false); !errors.Is(err, errs.ErrInvalidRank) {
			t.Errorf("send to rank 2 of a 2-rank split: %v; want ErrInvalidRank", err)
		}
		if _, err := s.Recv(nil, 2, 0); !errors.Is(err, errs.ErrInvalidRank) {
			t.Errorf("receive from rank 2 of a 2-rank split: %v; want ErrInvalidRank", err)
		}
		var bad Handle
		if err := s.StartIrecv(&bad, nil, 2, 0); !errors.Is(err, errs.ErrInvalidRank) {
			t.Errorf("Irecv from rank 2 of a 2-rank split: %v; want ErrInvalidRank", err)
		}
		if err := s.Barrier(); err != nil {
			t.Error(err)
		}
		if err := s.Free(); err != nil {
			t.Error(err)
		}
		if err := s.Send(nil, peer, 0, false); !errors.Is(err, errs.ErrInvalidComm) {
			t.Errorf("send on a freed comm: %v; want ErrInvalidComm", err)
		}
		if err := s.Free(); !errors.Is(err, errs.ErrInvalidComm) {
			t.Errorf("second Free: %v; want ErrInvalidComm", err)
		}
	})
}

// AnyTagForTest is match.AnyTag (kept short in the tests above).
const AnyTagForTest = match.AnyTag

// Free of the world is ErrInvalidComm.
func TestFreeWorld(t *testing.T) {
	job(t, newFakeNet(1, 256, 1024), func(t *testing.T, w *Comm) {
		if err := w.Free(); !errors.Is(err, errs.ErrInvalidComm) {
			t.Errorf("Free(world) = %v; want ErrInvalidComm", err)
		}
	})
}

// Issue 16 item 2: concurrent Dups of different communicators, started in
// different orders on different ranks, get distinct context ids everywhere,
// and each new communicator's traffic stays its own.
func TestConcurrentDupsDistinctContexts(t *testing.T) {
	const n = 4
	job(t, newFakeNet(n, 256, 1024), func(t *testing.T, w *Comm) {
		a, err := w.Dup()
		if err != nil {
			t.Error(err)
			return
		}
		b, err := w.Split(0, 0)
		if err != nil {
			t.Error(err)
			return
		}
		parents := []*Comm{w, a, b}
		for iter := 0; iter < 20; iter++ {
			out := make([]*Comm, len(parents))
			var wg sync.WaitGroup
			for i := range parents {
				i := i
				if w.Rank()%2 == 1 {
					i = len(parents) - 1 - i
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					d, err := parents[i].Dup()
					if err != nil {
						t.Error(err)
						return
					}
					out[i] = d
				}()
			}
			wg.Wait()
			seen := map[uint32]bool{w.ctx: true, a.ctx: true, b.ctx: true}
			for _, d := range out {
				if d == nil {
					return
				}
				if seen[d.ctx] {
					t.Errorf("rank %d iteration %d: context %d given twice", w.Rank(), iter, d.ctx)
				}
				seen[d.ctx] = true
			}
			// Each new comm carries a ring message; a shared context would mix them.
			var sends sync.WaitGroup
			for i, d := range out {
				sends.Add(1)
				go func(i int, d *Comm) {
					defer sends.Done()
					if err := d.Send([]byte{byte(i)}, (d.Rank()+1)%n, 1, false); err != nil {
						t.Error(err)
					}
				}(i, d)
			}
			for i, d := range out {
				buf := make([]byte, 1)
				st, err := d.Recv(buf, (d.Rank()+n-1)%n, 1)
				if err != nil || st.Count != 1 || buf[0] != byte(i) {
					t.Errorf("comm %d: got %v %v", i, buf, err)
				}
			}
			sends.Wait()
			for _, d := range out {
				d.Free()
			}
		}
	})
}

// Issue 16 item 2: an envelope the engine would refuse (a duplicate seq, a
// stale one) is logged and dropped, and later traffic still flows.
func TestDuplicateEnvelopeDropped(t *testing.T) {
	net := newFakeNet(2, 256, 1024)
	job(t, net, func(t *testing.T, c *Comm) {
		if c.Rank() == 0 {
			c.Send([]byte("one"), 1, 1, false)
			// A replay of the same MATCH (seq 0), then a real second message.
			h := matchHdr{ctx: 0, tag: 1, seq: 0}
			var hb [btl.MaxHeader]byte
			net.mods[0].deliverTo(1, btl.TagPMLMatch, h.encodeMatch(hb[:]), []byte("dup"))
			c.Send([]byte("two"), 1, 1, false)
			return
		}
		for _, want := range []string{"one", "two"} {
			buf := make([]byte, 8)
			st, err := c.Recv(buf, 0, 1)
			if err != nil || string(buf[:st.Count]) != want {
				t.Errorf("got %q %v; want %q", buf[:st.Count], err, want)
			}
		}
	})
}

// TestBarrierPollsBeforeSleeping: a rank with a core of its own that
// waits in a Barrier for a late peer polls (no sleep in the transport, see
// spun) for as long as the peer takes within pml_ob1_spin_time; an
// oversubscribed rank (Yield) sleeps after its spin count.
func TestBarrierPollsBeforeSleeping(t *testing.T) {
	hangGuard(t, hangDeadline)
	for _, yield := range []bool{false, true} {
		net := newFakeNet(2, 64, 1024)
		var pmls [2]*PML
		for i := range pmls {
			// The bound is not what this test looks at: an hour.
			p, err := New(Config{Rank: i, Size: 2, Modules: []btl.Module{net.mods[i]}, SpinCount: 1, Yield: yield,
				SpinUsec: int(time.Hour / time.Microsecond), SleepTimeout: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			pmls[i] = p
		}
		c0, c1 := pmls[0].World(), pmls[1].World()
		done := make(chan error, 1)
		go func() { done <- c0.Barrier() }()
		// Rank 1 comes late: after rank 0 has polled 2000 times (it would
		// have slept after its spin count of 1) or, oversubscribed, once it
		// has slept.
		m0 := net.mods[0]
		for m0.sleeps.Load() == 0 && (yield || m0.polls.Load() < 2000) {
			time.Sleep(50 * time.Microsecond) // not runnable: a waiter yields to runnable goroutines instead of sleeping
		}
		if err := c1.Barrier(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if s := m0.sleeps.Load(); !yield && s != 0 {
			t.Errorf("rank 0 slept %d times in a Barrier that waited %d polls; want it polling", s, m0.polls.Load())
		} else if yield && s == 0 {
			t.Errorf("oversubscribed rank 0 never slept in a Barrier that waited for its peer; want the usual wait")
		}
		for _, p := range pmls {
			p.Close()
		}
	}
}
