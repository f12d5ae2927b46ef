package main

import (
	"context"
	"hash/crc32"
	"runtime"
	"sync"

	"github.com/gorun-mpi/gorun"
)

// strategy is how a rank receives one data communicator's messages in a
// round. Each one either posts all its receives before waiting, or keeps
// one receiver per source that consumes in send order, or accepts any
// source: so every blocking send is eventually matched (no deadlock).
type strategy int

const (
	rIrecvWaitAll   strategy = iota // Irecv each message (per source, in order), WaitAll
	rIrecvWaitAny                   // the same, completed with WaitAny
	rIrecvTest                      // the same, completed by a loop of Test
	rPerSource                      // a goroutine per source: Recv, Irecv+WaitContext or Probe+Recv, in order
	rProbe                          // Probe(AnySource, AnyTag), then Recv of exactly that message
	rIprobe                         // a loop of Iprobe(AnySource, AnyTag), then Recv
	rRecvAny                        // Recv(AnySource, AnyTag) into a buffer of the largest size
	rIrecvAnySource                 // Irecv(AnySource, AnyTag) for each message, WaitAll (small rounds only)
	nStrategies
)

var stratNames = [nStrategies]string{
	"irecv+waitall", "irecv+waitany", "irecv+test", "per-source", "probe+recv", "iprobe+recv", "recv-any", "irecv-any",
}

// receive receives every message p says comes on data communicator c.
func (s *soak) receive(c int, p *roundPlan) {
	comm, exp, how := s.comms[c], p.exp[c], p.how[c]
	total, largest := 0, 0
	for _, l := range exp {
		total += len(l)
		for _, e := range l {
			largest = max(largest, e.size)
		}
	}
	switch strat := p.strat[c]; strat {
	case rIrecvWaitAll, rIrecvWaitAny, rIrecvTest:
		s.postedInOrder(c, strat, exp, how)
	case rPerSource:
		var wg sync.WaitGroup
		for src := range exp {
			wg.Go(func() { s.fromOneSource(c, src, exp[src], how[src]) })
		}
		wg.Wait()
	case rProbe, rIprobe:
		for range total {
			var st gorun.Status
			var err error
			if strat == rProbe {
				st, err = comm.Probe(gorun.AnySource, gorun.AnyTag)
			} else {
				for ok := false; !ok && err == nil; {
					if st, ok, err = comm.Iprobe(gorun.AnySource, gorun.AnyTag); !ok {
						runtime.Gosched()
					}
				}
			}
			s.checkCall(err, c, "%s", stratNames[strat])
			buf := make([]byte, st.Count)
			got, err := comm.Recv(buf, st.Source, st.Tag)
			s.checkCall(err, c, "Recv after probe %+v", st)
			if got != st {
				fail("round %d communicator %d: probe said %+v, the Recv that followed got %+v", s.round, c, st, got)
			}
			s.verify(c, got, buf, expect{-1, -1}, -1)
		}
	case rRecvAny:
		buf := make([]byte, largest)
		for range total {
			st, err := comm.Recv(buf, gorun.AnySource, gorun.AnyTag)
			s.checkCall(err, c, "Recv(AnySource, AnyTag) into %d bytes", len(buf))
			s.verify(c, st, buf[:st.Count], expect{-1, -1}, -1)
		}
	case rIrecvAnySource:
		reqs, bufs := make([]*gorun.Request, total), make([][]byte, total)
		for i := range reqs {
			bufs[i] = make([]byte, largest)
			var err error
			reqs[i], err = comm.Irecv(bufs[i], gorun.AnySource, gorun.AnyTag)
			s.checkCall(err, c, "Irecv(AnySource, AnyTag)")
		}
		sts, err := gorun.WaitAll(reqs...)
		s.checkCall(err, c, "WaitAll of %d Irecv(AnySource, AnyTag)", total)
		for i, st := range sts { // post order: per source, the send order
			s.verify(c, st, bufs[i][:st.Count], expect{-1, -1}, -1)
		}
	}
}

// postedInOrder posts a receive for every expected message, each source's
// in send order, then completes them all by WaitAll, WaitAny or Test.
func (s *soak) postedInOrder(c int, strat strategy, exp [][]expect, how [][]int) {
	comm := s.comms[c]
	var reqs []*gorun.Request
	var bufs [][]byte
	var wants []expect
	var srcs []int
	for i, more := 0, true; more; i++ {
		more = false
		for src, list := range exp {
			if i >= len(list) {
				continue
			}
			more = true
			want, h := list[i], how[src][i]
			tag := gorun.AnyTag
			if h&1 == 1 {
				tag = want.tag
			}
			buf := make([]byte, want.size+(h>>2)*7) // some with room to spare
			r, err := comm.Irecv(buf, src, tag)
			s.checkCall(err, c, "Irecv(%d bytes, source %d, tag %d)", len(buf), src, tag)
			reqs, bufs, wants, srcs = append(reqs, r), append(bufs, buf), append(wants, want), append(srcs, src)
		}
	}
	sts := make([]gorun.Status, len(reqs))
	switch strat {
	case rIrecvWaitAll:
		var err error
		sts, err = gorun.WaitAll(reqs...)
		s.checkCall(err, c, "WaitAll of %d receives", len(reqs))
	case rIrecvWaitAny:
		seen := make([]bool, len(reqs))
		for {
			i, st, err := gorun.WaitAny(reqs...)
			s.checkCall(err, c, "WaitAny of %d receives", len(reqs))
			if i < 0 {
				break
			}
			if seen[i] {
				fail("round %d communicator %d: WaitAny returned index %d twice", s.round, c, i)
			}
			seen[i], sts[i] = true, st
		}
		for i, ok := range seen {
			if !ok {
				fail("round %d communicator %d: WaitAny returned -1 before request %d of %d completed", s.round, c, i, len(reqs))
			}
		}
	case rIrecvTest:
		for left := len(reqs); left > 0; {
			for i, r := range reqs {
				if r == nil {
					continue
				}
				st, done, err := r.Test()
				s.checkCall(err, c, "Test of receive %d", i)
				if done {
					sts[i], reqs[i] = st, nil
					left--
				}
			}
			runtime.Gosched()
		}
	}
	for i, st := range sts {
		s.verify(c, st, bufs[i][:min(st.Count, len(bufs[i]))], wants[i], srcs[i])
	}
}

// fromOneSource receives list from src in order, one call at a time.
func (s *soak) fromOneSource(c, src int, list []expect, how []int) {
	comm := s.comms[c]
	for i, want := range list {
		h := how[i]
		buf := make([]byte, want.size+(h>>2)*7)
		var st gorun.Status
		var err error
		switch h & 3 {
		case 0:
			st, err = comm.Recv(buf, src, gorun.AnyTag)
		case 1:
			st, err = comm.Recv(buf, src, want.tag)
		case 2:
			var r *gorun.Request
			if r, err = comm.Irecv(buf, src, gorun.AnyTag); err == nil {
				st, err = r.WaitContext(context.Background())
			}
		case 3:
			var pst gorun.Status
			if pst, err = comm.Probe(src, gorun.AnyTag); err == nil {
				if pst.Count != want.size || pst.Source != src {
					fail("round %d communicator %d: Probe(%d, AnyTag) = %+v, want %d bytes from rank %d", s.round, c, src, pst, want.size, src)
				}
				st, err = comm.Recv(buf, src, pst.Tag)
			}
		}
		s.checkCall(err, c, "receive %d from rank %d (variant %d)", i, src, h&3)
		s.verify(c, st, buf[:min(st.Count, len(buf))], want, src)
	}
}

func (s *soak) checkCall(err error, c int, format string, a ...any) {
	if err != nil {
		fail("round %d communicator %d: "+format+": %v", append(append([]any{s.round, c}, a...), err)...)
	}
}

// verify checks one received message against the Status, the header, the
// payload checksum and the per-source sequence, and counts it. want holds
// what the receiver knew (-1: unknown); wantSrc likewise.
func (s *soak) verify(c int, st gorun.Status, data []byte, want expect, wantSrc int) {
	src := st.Source
	switch {
	case src < 0 || src >= s.n || (wantSrc >= 0 && src != wantSrc):
		fail("round %d communicator %d: status %+v, want source %d (misdelivered)", s.round, c, st, wantSrc)
	case want.size >= 0 && st.Count != want.size:
		fail("round %d communicator %d: status %+v from rank %d, want %d bytes (corrupted)", s.round, c, st, src, want.size)
	case want.tag >= 0 && st.Tag != want.tag:
		fail("round %d communicator %d: status %+v from rank %d, want tag %d (misdelivered)", s.round, c, st, src, want.tag)
	case len(data) != st.Count:
		fail("round %d communicator %d: status %+v but %d bytes in the buffer", s.round, c, st, len(data))
	}
	if st.Count < hdrLen {
		if st.Tag != tinyTag {
			fail("round %d communicator %d: %d-byte message from rank %d with tag %d, tiny ones have tag %d (corrupted)", s.round, c, st.Count, src, st.Tag, tinyTag)
		}
		for j, b := range data {
			if w := tinyPattern(src, st.Count, j); b != w {
				fail("round %d communicator %d: %d-byte message from rank %d: byte %d is %#x, want %#x (corrupted)", s.round, c, st.Count, src, j, b, w)
			}
		}
		s.tiny[c][src].Add(1)
	} else {
		h, ok := parseHeader(data)
		switch {
		case !ok:
			fail("round %d communicator %d: %d-byte message from rank %d tag %d has no header (corrupted): % x", s.round, c, st.Count, src, st.Tag, data[:hdrLen])
		case int(h.src) != src || int(h.dst) != s.me || int(h.comm) != c || int(h.tag) != st.Tag:
			fail("round %d communicator %d: status %+v but header %+v (misdelivered or corrupted)", s.round, c, st, h)
		case int(h.round) != s.round:
			fail("round %d communicator %d: message from rank %d of round %d (header %+v)", s.round, c, src, h.round, h)
		case int(h.length) != st.Count-hdrLen:
			fail("round %d communicator %d: status %+v but header says %d payload bytes (truncated or corrupted)", s.round, c, st, h.length)
		}
		if sum := crc32.Checksum(data[hdrLen:], castagnoli); sum != h.crc {
			fail("round %d communicator %d: message %d from rank %d (%d bytes, tag %d): payload CRC %#x, header says %#x (corrupted)",
				s.round, c, h.seq, src, st.Count, st.Tag, sum, h.crc)
		}
		next := s.next[c][src]
		switch {
		case h.seq < next:
			fail("round %d communicator %d: message %d from rank %d again, after %d (duplicated or overtaken)", s.round, c, h.seq, src, next-1)
		case h.seq > next:
			fail("round %d communicator %d: message %d from rank %d, want %d (lost or overtaken)", s.round, c, h.seq, src, next)
		}
		s.next[c][src] = next + 1
	}
	s.recvMsgs[c][src].Add(1)
	s.recvBytes[c][src].Add(int64(st.Count))
	s.left[c].Add(-1)
}
