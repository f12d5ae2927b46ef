package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorun-mpi/gorun"
)

// Tags of the control traffic on the world communicator. Data messages on
// the world use dataTags and tinyTag; a Barrier separates the rounds, so an
// AnyTag data receive never sees control traffic.
const (
	ctrlTag  = 100 // a round's plan, sender to receiver
	decTag   = 101 // rank 0's decision after a round
	statTag  = 102 // a rank's figures, to rank 0
	countTag = 103 // final sent counts, sender to receiver
)

type config struct {
	seed                       uint64
	duration, progress, warmup time.Duration
	stall                      time.Duration
	burst                      int
	memGrowth                  float64
	inject                     string // a fault rank 1 injects in round 2, to show the checks fire
}

// nComms: 0 is the world, 1 a Dup for data, 2 a Dup for Sendrecv shifts.
const nComms = 3

// soak is one rank's state. The sender goroutine of communicator c is the
// only writer of sendSeq[c], sent[c] and sentBytes[c] during a round; the
// receiving side of c is the only writer of next[c] (one goroutine per
// source at a time); the main goroutine reads them between rounds.
type soak struct {
	cfg    config
	me, n  int
	comms  [nComms]*gorun.Comm
	rng    *rand.Rand // main goroutine only
	noise  []byte     // read-only payload source
	round  int
	start  time.Time
	memBeg [][2]int64 // rank 0: [live, RssAnon] (KiB) of every rank after warm-up
	memEnd [][2]int64 // rank 0: [live, RssAnon] (KiB) of every rank at the end

	sendSeq   [nComms][]uint64
	sent      [nComms][]int64
	sentBytes [nComms][]int64
	next      [nComms][]uint64

	recvMsgs  [nComms][]atomic.Int64
	recvBytes [nComms][]atomic.Int64
	tiny      [nComms][]atomic.Int64 // tiny messages received this round
	left      [nComms]atomic.Int64   // messages still expected this round

	methodUse [nMethods]atomic.Int64
	stratUse  [nStrategies]int64
}

var world *gorun.Comm

// fail reports a broken invariant and ends the job with status 1.
func fail(format string, a ...any) {
	r := "?"
	if world != nil {
		r = fmt.Sprint(world.Rank())
	}
	fmt.Fprintf(os.Stderr, "soak FAIL rank %s: %s\n", r, fmt.Sprintf(format, a...))
	os.Exit(1)
}

func check(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

func main() {
	var cfg config
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of every rank's generator (rank r uses seed, r)")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long the traffic runs")
	flag.DurationVar(&cfg.progress, "progress", 30*time.Second, "interval of rank 0's progress lines")
	flag.DurationVar(&cfg.warmup, "warmup", 0, "when the start memory is taken (0: a fifth of -duration, at most 60s)")
	flag.DurationVar(&cfg.stall, "stall", 2*time.Minute, "a round taking longer fails the job as stalled")
	flag.IntVar(&cfg.burst, "burst", 6, "mean messages per peer per communicator per round is burst/2")
	flag.Float64Var(&cfg.memGrowth, "mem-growth", 20, "allowed growth of live memory (Go heap objects and stacks) from warm-up to the end, percent")
	flag.StringVar(&cfg.inject, "inject", "", "self-test: rank 1 breaks one message of round 2: corrupt, dup or drop")
	flag.Parse()
	switch cfg.inject {
	case "", "corrupt", "dup", "drop":
	default:
		fmt.Fprintf(os.Stderr, "soak: -inject %q: want corrupt, dup or drop\n", cfg.inject)
		os.Exit(2)
	}
	if cfg.burst < 0 || cfg.duration <= 0 || cfg.progress <= 0 || cfg.stall <= 0 {
		fmt.Fprintf(os.Stderr, "soak: -burst %d, -duration %v, -progress %v, -stall %v: want burst >= 0 and positive durations\n",
			cfg.burst, cfg.duration, cfg.progress, cfg.stall)
		os.Exit(2)
	}
	if cfg.warmup <= 0 {
		cfg.warmup = min(cfg.duration/5, time.Minute)
	}

	var err error
	if world, err = gorun.Init(); err != nil {
		fail("Init: %v", err)
	}
	s := newSoak(cfg)
	s.run()
	s.finish()
	check(gorun.Finalize(), "Finalize")
}

func newSoak(cfg config) *soak {
	s := &soak{cfg: cfg, me: world.Rank(), n: world.Size(), start: time.Now()}
	s.rng = rand.New(rand.NewPCG(cfg.seed, uint64(s.me)))
	s.noise = make([]byte, maxSize+64<<10)
	for i := 0; i+8 <= len(s.noise); i += 8 {
		binary.LittleEndian.PutUint64(s.noise[i:], s.rng.Uint64())
	}
	s.comms[0] = world
	for c := 1; c < nComms; c++ {
		dup, err := world.Dup()
		check(err, "Dup")
		s.comms[c] = dup
	}
	for c := range nComms {
		s.sendSeq[c] = make([]uint64, s.n)
		s.sent[c] = make([]int64, s.n)
		s.sentBytes[c] = make([]int64, s.n)
		s.next[c] = make([]uint64, s.n)
		s.recvMsgs[c] = make([]atomic.Int64, s.n)
		s.recvBytes[c] = make([]atomic.Int64, s.n)
		s.tiny[c] = make([]atomic.Int64, s.n)
	}
	return s
}

// Decision bits, sent by rank 0 after each round.
const (
	dStop        = 1 << iota // last round done
	dReport                  // every rank sends its figures to rank 0
	dSampleStart             // figures carry the warm-up memory
	dSampleEnd               // figures carry the final memory
)

func (s *soak) run() {
	nextReport := s.cfg.progress
	warm := false
	for s.round = 0; ; s.round++ {
		in := s.exchangePlans(s.plan())
		s.dataPhase(in)
		check(world.Barrier(), "Barrier")

		var d byte
		if s.me == 0 {
			el := time.Since(s.start)
			if !warm && el >= s.cfg.warmup {
				d |= dReport | dSampleStart
				warm = true
			}
			if el >= nextReport {
				d |= dReport
				nextReport += s.cfg.progress
			}
			if el >= s.cfg.duration {
				d |= dStop | dReport | dSampleEnd
				if !warm {
					d |= dSampleStart
				}
			}
			for r := 1; r < s.n; r++ {
				check(world.Send([]byte{d}, r, decTag), "Send decision")
			}
		} else {
			b := make([]byte, 1)
			_, err := world.Recv(b, 0, decTag)
			check(err, "Recv decision")
			d = b[0]
		}
		if d&dReport != 0 {
			s.report(d)
		}
		if d&dStop != 0 {
			return
		}
	}
}

// report gathers every rank's figures to rank 0, which prints a progress
// line and keeps the warm-up memory.
func (s *soak) report(d byte) {
	fig := s.figures()
	all := s.gather(fig, statTag)
	if s.me != 0 {
		return
	}
	var msgs, bytes int64
	rss, anon, live := make([]string, s.n), make([]string, s.n), make([]string, s.n)
	for r, f := range all {
		msgs += f[0]
		bytes += f[1]
		rss[r] = fmt.Sprintf("%dk", f[2])
		anon[r] = fmt.Sprintf("%dk", f[3])
		live[r] = fmt.Sprintf("%dk", f[5])
	}
	sample := func() [][2]int64 {
		m := make([][2]int64, s.n)
		for r, f := range all {
			m[r] = [2]int64{f[5], f[3]}
		}
		return m
	}
	if d&dSampleStart != 0 {
		s.memBeg = sample()
	}
	if d&dSampleEnd != 0 {
		s.memEnd = sample()
	}
	what := "progress"
	switch {
	case d&dSampleStart != 0 && d&dSampleEnd == 0:
		what = "warm-up"
	case d&dSampleEnd != 0:
		what = "end"
	}
	fmt.Printf("soak %s: t=%s rounds=%d msgs=%d bytes=%d rss=%s anon=%s live=%s\n", what,
		time.Since(s.start).Round(time.Second), s.round+1, msgs, bytes,
		strings.Join(rss, ","), strings.Join(anon, ","), strings.Join(live, ","))
}

// gather sends v to rank 0 on tag; rank 0 returns every rank's v.
func (s *soak) gather(v []int64, tag int) [][]int64 {
	if s.me != 0 {
		check(world.Send(encode(v), 0, tag), "Send figures")
		return nil
	}
	all := make([][]int64, s.n)
	all[0] = v
	buf := make([]byte, 8*len(v))
	for r := 1; r < s.n; r++ {
		st, err := world.Recv(buf, r, tag)
		check(err, "Recv figures")
		if st.Count != len(buf) {
			fail("figures from rank %d: %d bytes, want %d", r, st.Count, len(buf))
		}
		all[r] = decode(buf)
	}
	return all
}

// finish exchanges the final sent counts with every peer, compares them
// with what was received, gathers the verdict to rank 0 and prints it.
func (s *soak) finish() {
	reqs := make([]*gorun.Request, 0, s.n)
	for dst := range s.n {
		v := make([]int64, 0, 2*nComms)
		for c := range nComms {
			v = append(v, s.sent[c][dst], s.sentBytes[c][dst])
		}
		r, err := world.Isend(encode(v), dst, countTag)
		check(err, "Isend counts")
		reqs = append(reqs, r)
	}
	var lost, dup, badBytes, msgs, bytes int64
	buf := make([]byte, 16*nComms)
	for src := range s.n {
		_, err := world.Recv(buf, src, countTag)
		check(err, "Recv counts")
		v := decode(buf)
		for c := range nComms {
			got, gotB := s.recvMsgs[c][src].Load(), s.recvBytes[c][src].Load()
			want, wantB := v[2*c], v[2*c+1]
			if got != want || gotB != wantB {
				fmt.Fprintf(os.Stderr, "soak: rank %d received %d messages (%d bytes) from rank %d on communicator %d, which sent %d (%d bytes)\n",
					s.me, got, gotB, src, c, want, wantB)
			}
			lost += max(0, want-got)
			dup += max(0, got-want)
			if got == want && gotB != wantB {
				badBytes++
			}
			msgs += got
			bytes += gotB
		}
	}
	_, err := gorun.WaitAll(reqs...)
	check(err, "WaitAll counts")
	all := s.gather([]int64{lost, dup, badBytes, msgs, bytes}, statTag)
	if s.me != 0 {
		return
	}
	var tot [5]int64
	for _, f := range all {
		for i := range tot {
			tot[i] += f[i]
		}
	}
	fmt.Printf("soak coverage (rank 0): sends %s; receive strategies %s\n", s.methodCounts(), s.stratCounts())
	if tot[0] != 0 || tot[1] != 0 || tot[2] != 0 {
		fail("final counts disagree: lost=%d duplicated=%d corrupted=%d", tot[0], tot[1], tot[2])
	}
	s.checkMem(tot[3], tot[4])
}

// checkMem prints the final line, or fails if a rank's memory grew too
// much: its live memory (Go heap objects and stacks) by more than
// -mem-growth percent and 4 MiB (the runtime's free lists, bounded to
// about 2.5 MiB, fill up to their bound over a run), or its RssAnon by more than 50% and 32 MiB
// (a leak outside the Go heap; RssAnon alone moves by megabytes with how the
// kernel backs reused pages, so its bound is loose).
func (s *soak) checkMem(msgs, bytes int64) {
	var beg, end []string
	var grew []string
	for r := range s.n {
		b, e := s.memBeg[r], s.memEnd[r]
		beg = append(beg, fmt.Sprintf("%dk/%dk", b[0], b[1]))
		end = append(end, fmt.Sprintf("%dk/%dk", e[0], e[1]))
		for i, c := range []struct {
			what      string
			pct, keep float64
		}{{"live memory", s.cfg.memGrowth, 4 << 10}, {"RssAnon", 50, 32 << 10}} {
			limit := max(float64(b[i])*(1+c.pct/100), float64(b[i])+c.keep)
			if float64(e[i]) > limit {
				grew = append(grew, fmt.Sprintf("rank %d %s %dk -> %dk (allowed %.0fk)", r, c.what, b[i], e[i], limit))
			}
		}
	}
	line := fmt.Sprintf("msgs=%d bytes=%d lost=0 corrupted=0 duplicated=0 live/anon_start=%s live/anon_end=%s wall=%s rounds=%d",
		msgs, bytes, strings.Join(beg, ","), strings.Join(end, ","), time.Since(s.start).Round(time.Second), s.round+1)
	if len(grew) > 0 {
		fail("memory grew: %s (%s)", strings.Join(grew, "; "), line)
	}
	fmt.Println("soak ok: " + line)
}

func (s *soak) methodCounts() string {
	var b []string
	for m := range nMethods {
		b = append(b, fmt.Sprintf("%s=%d", methodNames[m], s.methodUse[m].Load()))
	}
	return strings.Join(b, " ")
}

func (s *soak) stratCounts() string {
	var b []string
	for k := range nStrategies {
		b = append(b, fmt.Sprintf("%s=%d", stratNames[k], s.stratUse[k]))
	}
	return strings.Join(b, " ")
}

func encode(v []int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

func decode(b []byte) []int64 {
	v := make([]int64, len(b)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}
