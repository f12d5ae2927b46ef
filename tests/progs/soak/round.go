package main

import (
	"bufio"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorun-mpi/gorun"
)

// expect is what a receiver knows of a message before it arrives; -1 means
// unknown.
type expect struct{ size, tag int }

// shift is one Sendrecv of a round: every rank sends to me+k and receives
// from me-k, with a tag (and tiny-or-not) all ranks draw alike.
type shift struct {
	m     msgSpec
	src   int
	exact bool // receive with the tag rather than AnyTag
	tiny  bool
}

// roundPlan is what one rank sends in a round, and how it receives.
type roundPlan struct {
	out    [2][]msgSpec // per data communicator, in send order
	shifts []shift

	exp   [2][][]expect // per data communicator and source, in send order
	strat [2]strategy
	how   [2][][]int // per data communicator, source, message: variant drawn by the receiver
	// per communicator and source: headed and tiny messages this round
	headed, tiny [nComms][]int
}

// plan draws this rank's sends of the round and assigns their sequence
// numbers.
func (s *soak) plan() *roundPlan {
	p := &roundPlan{}
	for c := range 2 {
		total := s.rng.IntN(s.cfg.burst*s.n + 1)
		for range total {
			m := msgSpec{dst: s.rng.IntN(s.n), size: pickSize(s.rng, maxSize), method: pickMethod(s.rng)}
			s.headedSpec(&m, c)
			p.out[c] = append(p.out[c], m)
		}
	}
	cr := rand.New(rand.NewPCG(s.cfg.seed^0x5ee0, uint64(s.round)))
	for range 1 + cr.IntN(2) {
		k := cr.IntN(s.n)
		sh := shift{src: (s.me - k + s.n) % s.n, tiny: cr.IntN(20) == 0, exact: cr.IntN(2) == 0}
		tag := dataTags[cr.IntN(len(dataTags))]
		if sh.tiny {
			tag = tinyTag
		}
		size := max(hdrLen, pickSize(s.rng, srMax))
		if sh.tiny {
			size = s.rng.IntN(hdrLen)
		}
		sh.m = msgSpec{dst: (s.me + k) % s.n, size: size, tag: tag}
		s.headedSpec(&sh.m, 2)
		sh.m.tag = tag // all ranks drew it alike, so the receiver may name it
		p.shifts = append(p.shifts, sh)
	}
	return p
}

// headedSpec completes m: tag, payload offset and sequence number.
func (s *soak) headedSpec(m *msgSpec, c int) {
	if m.size < hdrLen {
		m.tag = tinyTag
		return
	}
	m.tag = dataTags[s.rng.IntN(len(dataTags))]
	m.off = s.rng.IntN(len(s.noise) - m.size + 1)
	m.seq = s.sendSeq[c][m.dst]
	s.sendSeq[c][m.dst]++
}

// exchangePlans tells every peer what it will receive from this rank on the
// data communicators, learns the same from every peer, and draws how this
// rank receives.
func (s *soak) exchangePlans(p *roundPlan) *roundPlan {
	reqs := make([]*gorun.Request, 0, s.n)
	for dst := range s.n {
		var b []byte
		for c := range 2 {
			var list []byte
			k := 0
			for _, m := range p.out[c] {
				if m.dst == dst {
					list = binary.LittleEndian.AppendUint32(list, uint32(m.size))
					list = binary.LittleEndian.AppendUint32(list, uint32(m.tag))
					k++
				}
			}
			b = binary.LittleEndian.AppendUint32(b, uint32(k))
			b = append(b, list...)
		}
		r, err := world.Isend(b, dst, ctrlTag)
		check(err, "Isend plan")
		reqs = append(reqs, r)
	}
	buf := make([]byte, 8+16*(s.cfg.burst*s.n+1))
	for c := range 2 {
		p.exp[c] = make([][]expect, s.n)
	}
	for src := range s.n {
		st, err := world.Recv(buf, src, ctrlTag)
		check(err, "Recv plan")
		b := buf[:st.Count]
		for c := range 2 {
			if len(b) < 4 {
				fail("plan from rank %d: %d bytes left at communicator %d, want a count", src, len(b), c)
			}
			k := int(binary.LittleEndian.Uint32(b))
			b = b[4:]
			if len(b) < 8*k {
				fail("plan from rank %d: %d messages on communicator %d need %d bytes, have %d", src, k, c, 8*k, len(b))
			}
			for i := range k {
				p.exp[c][src] = append(p.exp[c][src], expect{
					size: int(binary.LittleEndian.Uint32(b[8*i:])), tag: int(binary.LittleEndian.Uint32(b[8*i+4:]))})
			}
			b = b[8*k:]
		}
	}
	_, err := gorun.WaitAll(reqs...)
	check(err, "WaitAll plans")

	for c := range nComms {
		p.headed[c], p.tiny[c] = make([]int, s.n), make([]int, s.n)
	}
	for c := range 2 {
		p.strat[c] = strategy(s.rng.IntN(int(nStrategies)))
		p.how[c] = make([][]int, s.n)
		for src, list := range p.exp[c] {
			for _, e := range list {
				p.how[c][src] = append(p.how[c][src], s.rng.IntN(8))
				if e.size < hdrLen {
					p.tiny[c][src]++
				} else {
					p.headed[c][src]++
				}
				if p.strat[c] == rIrecvAnySource && e.size > 64<<10 {
					p.strat[c] = rProbe // AnySource receives of large messages would take too much memory
				}
			}
		}
		s.stratUse[p.strat[c]]++
	}
	for _, sh := range p.shifts {
		if sh.tiny {
			p.tiny[2][sh.src]++
		} else {
			p.headed[2][sh.src]++
		}
	}
	return p
}

// dataPhase runs the round's sends and receives and checks that each source
// delivered exactly what its plan said.
func (s *soak) dataPhase(p *roundPlan) {
	var base [nComms][]uint64
	for c := range nComms {
		base[c] = append([]uint64(nil), s.next[c]...)
		for src := range s.n {
			s.tiny[c][src].Store(0)
		}
	}
	var wg sync.WaitGroup
	for c := range 2 {
		total := 0
		for _, l := range p.exp[c] {
			total += len(l)
		}
		s.left[c].Store(int64(total))
		wg.Go(func() { s.sendAll(c, p.out[c]) })
		wg.Go(func() { s.receive(c, p) })
	}
	s.left[2].Store(int64(len(p.shifts)))
	wg.Go(func() { s.sendrecv(p.shifts) })
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.cfg.stall):
		fail("round %d stalled for %v: messages still expected on world %d (%s), dup %d (%s), sendrecv %d",
			s.round, s.cfg.stall, s.left[0].Load(), stratNames[p.strat[0]], s.left[1].Load(), stratNames[p.strat[1]], s.left[2].Load())
	}
	for c := range nComms {
		for src := range s.n {
			got, want := s.next[c][src]-base[c][src], uint64(p.headed[c][src])
			if got != want {
				fail("round %d: %d headed messages from rank %d on communicator %d, its plan said %d (lost or misdelivered)", s.round, got, src, c, want)
			}
			if got, want := s.tiny[c][src].Load(), int64(p.tiny[c][src]); got != want {
				fail("round %d: %d tiny messages from rank %d on communicator %d, its plan said %d (lost, duplicated or misdelivered)", s.round, got, src, c, want)
			}
		}
	}
}

// sendAll sends list on data communicator c in order.
func (s *soak) sendAll(c int, list []msgSpec) {
	comm := s.comms[c]
	reqs := make([]*gorun.Request, 0, len(list))
	victim := -1 // the message the -inject fault hits
	if s.cfg.inject != "" && s.me == 1 && s.round == 2 && c == 0 {
		for i, m := range list {
			if m.size >= hdrLen && m.size <= 1024 {
				victim = i
				break
			}
		}
	}
	for i := range list {
		m := &list[i]
		b := build(m, s.me, c, s.round, s.noise)
		if i == victim {
			switch s.cfg.inject {
			case "corrupt":
				b[len(b)-1] ^= 0x5a
			case "dup": // an extra eager copy, ahead of the real one
				if err := comm.Send(b, m.dst, m.tag); err != nil {
					fail("inject dup: %v", err)
				}
			case "drop":
				continue
			}
		}
		var r *gorun.Request
		var err error
		switch m.method {
		case mSend:
			err = comm.Send(b, m.dst, m.tag)
		case mSsend:
			err = comm.Ssend(b, m.dst, m.tag)
		case mIsend:
			r, err = comm.Isend(b, m.dst, m.tag)
		case mIssend:
			r, err = comm.Issend(b, m.dst, m.tag)
		}
		if err != nil {
			fail("round %d: %s of %d bytes to rank %d tag %d on communicator %d: %v", s.round, methodNames[m.method], m.size, m.dst, m.tag, c, err)
		}
		if r != nil {
			reqs = append(reqs, r)
		}
		s.methodUse[m.method].Add(1)
		s.sent[c][m.dst]++
		s.sentBytes[c][m.dst] += int64(m.size)
	}
	if _, err := gorun.WaitAll(reqs...); err != nil {
		fail("round %d: WaitAll of %d sends on communicator %d: %v", s.round, len(reqs), c, err)
	}
}

// sendrecv runs the round's shifts on communicator 2.
func (s *soak) sendrecv(shifts []shift) {
	comm := s.comms[2]
	rbuf := make([]byte, srMax)
	for i := range shifts {
		sh := &shifts[i]
		b := build(&sh.m, s.me, 2, s.round, s.noise)
		rtag := gorun.AnyTag
		if sh.exact {
			rtag = sh.m.tag
		}
		st, err := comm.Sendrecv(b, sh.m.dst, sh.m.tag, rbuf, sh.src, rtag)
		if err != nil {
			fail("round %d: Sendrecv of %d bytes to rank %d, from rank %d tag %d: %v", s.round, sh.m.size, sh.m.dst, sh.src, rtag, err)
		}
		s.sent[2][sh.m.dst]++
		s.sentBytes[2][sh.m.dst] += int64(sh.m.size)
		if st.Count < 0 || st.Count > len(rbuf) {
			fail("round %d: Sendrecv status %+v, buffer %d bytes", s.round, st, len(rbuf))
		}
		s.verify(2, st, rbuf[:st.Count], expect{size: -1, tag: sh.m.tag}, sh.src)
		if (st.Count < hdrLen) != sh.tiny {
			fail("round %d: Sendrecv from rank %d got %d bytes, want a tiny message: %v", s.round, sh.src, st.Count, sh.tiny)
		}
	}
}

// figures is this rank's [received messages, received bytes, VmRSS KiB,
// RssAnon KiB, VmHWM KiB, live KiB]. It forces a GC and returns freed memory
// to the OS first, so that the figures show what is live (a leak), not how
// far the heap grew between two collections. live is the Go runtime's own
// count of heap objects and goroutine stacks after that GC: exact, where
// RssAnon also moves by megabytes with how the kernel backs freed and reused
// pages (transparent huge pages), with nothing leaked.
func (s *soak) figures() []int64 {
	debug.FreeOSMemory() // runs a GC
	var msgs, bytes int64
	for c := range nComms {
		for src := range s.n {
			msgs += s.recvMsgs[c][src].Load()
			bytes += s.recvBytes[c][src].Load()
		}
	}
	rss, anon, hwm := procStatus()
	live := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(live)
	var liveB uint64
	for _, m := range live {
		if m.Value.Kind() != metrics.KindUint64 {
			fail("runtime/metrics has no %s", m.Name)
		}
		liveB += m.Value.Uint64()
	}
	return []int64{msgs, bytes, rss, anon, hwm, int64(liveB >> 10)}
}

// procStatus reads VmRSS, RssAnon and VmHWM (KiB) from /proc/self/status.
func procStatus() (rss, anon, hwm int64) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		fail("reading RSS: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *int64
		switch name {
		case "VmRSS":
			dst = &rss
		case "RssAnon":
			dst = &anon
		case "VmHWM":
			dst = &hwm
		default:
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			fail("/proc/self/status %s: %q is not a number of kB", name, val)
		}
		*dst = n
	}
	return rss, anon, hwm
}
