package main

import (
	"errors"
	"sync"

	"github.com/gorun-mpi/gorun"
	"github.com/gorun-mpi/gorun/tests/progs/internal/rankprog"
)

func init() {
	modes["split"] = split
	modes["concurrentdup"] = concurrentDup
}

// split: colors and keys, Undefined, rank translation in Status.Source,
// isolation of the parent's wildcard receives, SplitShared, Free.
func split() {
	n, me := world.Size(), world.Rank()
	color := me % 3
	if me == n-1 && n > 2 {
		color = gorun.Undefined
	}
	// A wildcard receive on the world posted first must not see split traffic.
	wbuf := make([]byte, 4)
	wreq, err := world.Irecv(wbuf, gorun.AnySource, gorun.AnyTag)
	rankprog.Check(err, "world Irecv")
	s, err := world.Split(color, n-me) // reversed order within a color
	rankprog.Check(err, "Split")
	if color == gorun.Undefined {
		if s != nil {
			rankprog.Fail("Split with Undefined gave a communicator")
		}
	} else {
		var members []int
		for r := n - 1; r >= 0; r-- {
			if r%3 == color && !(r == n-1 && n > 2) {
				members = append(members, r)
			}
		}
		if s.Size() != len(members) || members[s.Rank()] != me {
			rankprog.Fail("split color %d: rank %d size %d; want position of %d in %v", color, s.Rank(), s.Size(), me, members)
		}
		// Ring inside the split: Status.Source is the split rank.
		k := s.Size()
		next, prev := (s.Rank()+1)%k, (s.Rank()+k-1)%k
		buf := make([]byte, 8)
		st, err := s.Sendrecv([]byte{byte(me)}, next, 5, buf, gorun.AnySource, gorun.AnyTag)
		rankprog.Check(err, "split Sendrecv")
		if st.Source != prev || buf[0] != byte(members[prev]) || st.Tag != 5 {
			rankprog.Fail("split ring: got %v from %d tag %d; want world rank %d from split rank %d", buf[0], st.Source, st.Tag, members[prev], prev)
		}
		if err := s.Send(nil, k, 0); !errors.Is(err, gorun.ErrInvalidRank) {
			rankprog.Fail("send to rank %d of a %d-rank split: %v; want ErrInvalidRank", k, k, err)
		}
		rankprog.Check(s.Barrier(), "split Barrier")
		// A Dup of the split, then a split of the split.
		d, err := s.Dup()
		rankprog.Check(err, "Dup of split")
		if d.Size() != k || d.Rank() != s.Rank() {
			rankprog.Fail("dup of split: rank %d size %d", d.Rank(), d.Size())
		}
		ss, err := d.Split(0, d.Rank())
		rankprog.Check(err, "split of dup")
		rankprog.Check(ss.Barrier(), "barrier of split of dup")
		rankprog.Check(ss.Free(), "Free")
		rankprog.Check(d.Free(), "Free")
		rankprog.Check(s.Free(), "Free")
		if err := s.Send(nil, 0, 0); !errors.Is(err, gorun.ErrInvalidComm) {
			rankprog.Fail("Send on a freed comm: %v; want ErrInvalidComm", err)
		}
		if _, err := s.Dup(); !errors.Is(err, gorun.ErrInvalidComm) {
			rankprog.Fail("Dup of a freed comm: %v; want ErrInvalidComm", err)
		}
	}
	if err := world.Free(); !errors.Is(err, gorun.ErrInvalidComm) {
		rankprog.Fail("Free(world): %v; want ErrInvalidComm", err)
	}
	var nilComm *gorun.Comm
	if _, err := nilComm.Split(0, 0); !errors.Is(err, gorun.ErrInvalidComm) {
		rankprog.Fail("Split of nil: %v; want ErrInvalidComm", err)
	}
	// SplitShared: one machine, so everyone, in key order.
	sh, err := world.SplitShared(-me)
	rankprog.Check(err, "SplitShared")
	if sh.Size() != n || sh.Rank() != n-1-me {
		rankprog.Fail("SplitShared: rank %d size %d; want %d of %d", sh.Rank(), sh.Size(), n-1-me, n)
	}
	rankprog.Check(sh.Free(), "Free shared")
	// The world's wildcard receive still gets the world message.
	rankprog.Check(world.Send([]byte{byte(me)}, (me+1)%n, 9), "world send")
	st, err := wreq.Wait()
	rankprog.Check(err, "world wildcard")
	if st.Source != (me+n-1)%n || st.Tag != 9 {
		rankprog.Fail("world wildcard got source %d tag %d; want %d tag 9", st.Source, st.Tag, (me+n-1)%n)
	}
}

// concurrentDup (issue 16 item 2): goroutines Dup different communicators
// at once, in opposite orders on odd and even ranks; every new context is
// distinct, so each Dup's traffic stays its own and no rank panics.
func concurrentDup() {
	n, me := world.Size(), world.Rank()
	a, err := world.Dup()
	rankprog.Check(err, "Dup")
	b, err := world.Split(0, me)
	rankprog.Check(err, "Split")
	parents := []*gorun.Comm{world, a, b}
	for iter := 0; iter < 50; iter++ {
		out := make([]*gorun.Comm, len(parents))
		var wg sync.WaitGroup
		for j := range parents {
			i := j
			if me%2 == 1 {
				i = len(parents) - 1 - j
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := parents[i].Dup()
				rankprog.Check(err, "concurrent Dup")
				out[i] = d
			}()
		}
		wg.Wait()
		var sends sync.WaitGroup
		for i, d := range out {
			sends.Add(1)
			go func() {
				defer sends.Done()
				rankprog.Check(d.Send([]byte{byte(i), byte(iter)}, (me+1)%n, 3), "ring send")
			}()
		}
		for i, d := range out {
			buf := make([]byte, 2)
			_, err := d.Recv(buf, (me+n-1)%n, 3)
			rankprog.Check(err, "ring recv")
			if buf[0] != byte(i) || buf[1] != byte(iter) {
				rankprog.Fail("iteration %d comm %d got message %v: contexts mixed", iter, i, buf)
			}
		}
		sends.Wait()
		for _, d := range out {
			rankprog.Check(d.Free(), "Free")
		}
	}
}
