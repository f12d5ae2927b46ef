package main

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/gorun-mpi/gorun"
)

// collective times one size of a collective mode as osu_allreduce and
// bench.c do: warm-up, then per call t = now; collective; timer += now - t;
// Barrier. The row holds the average over ranks of each rank's mean time
// per call, in µs. allreduce and reduce are float32 Sums of size/4
// elements; bcast (root 0), allgather and alltoall move size bytes per rank
// (or per pair of ranks).
func (b *bench) collective(size int, cnt counts) (row, error) {
	c, np := b.c, b.c.Size()
	f32 := func(buf []byte) []float32 {
		return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(buf))), size/4)
	}
	var call func() error
	switch b.o.mode {
	case ModeAllreduce:
		s, r := f32(b.sbuf), f32(b.rbuf)
		call = func() error { return gorun.Allreduce(c, s, r, gorun.Sum[float32]) }
	case ModeReduce:
		s, r := f32(b.sbuf), f32(b.rbuf)
		call = func() error { return gorun.Reduce(c, s, r, gorun.Sum[float32], 0) }
	case ModeBcast:
		buf := b.sbuf[:size]
		call = func() error { return gorun.Bcast(c, buf, 0) }
	case ModeAllgather:
		s, r := b.sbuf[:size], b.rbuf[:size*np]
		call = func() error { return gorun.Allgather(c, s, r) }
	case ModeAlltoall:
		s, r := b.sbuf[:size*np], b.rbuf[:size*np]
		call = func() error { return gorun.Alltoall(c, s, r) }
	default:
		return row{}, fmt.Errorf("mode %s is not a collective", b.o.mode)
	}
	var timer time.Duration
	for i := 0; i < cnt.warmup+cnt.iters; i++ {
		t0 := time.Now()
		if err := call(); err != nil {
			return row{}, err
		}
		if i >= cnt.warmup {
			timer += time.Since(t0)
		}
		if err := c.Barrier(); err != nil {
			return row{}, err
		}
	}
	us := timer.Seconds() * 1e6 / float64(cnt.iters)
	all, err := b.gather(us)
	if err != nil || c.Rank() != 0 {
		return row{size, []float64{us}}, err
	}
	sum := 0.0
	for _, v := range all {
		sum += v
	}
	return row{size, []float64{sum / float64(np)}}, nil
}

// barrier times b.o.rounds Barriers and returns the slowest rank's total on
// rank 0, printed as bench.c's "barrier np=N rounds=R ... us_per_round=X".
func (b *bench) barrier() (ringResult, error) {
	c := b.c
	if err := c.Barrier(); err != nil {
		return ringResult{}, err
	}
	t0 := time.Now()
	for i := 0; i < b.o.rounds; i++ {
		if err := c.Barrier(); err != nil {
			return ringResult{}, fmt.Errorf("barrier %d: %w", i, err)
		}
	}
	el := time.Since(t0)
	all, err := b.gather(el.Seconds())
	if err != nil || c.Rank() != 0 {
		return ringResult{}, err
	}
	slowest := 0.0
	for _, t := range all {
		slowest = max(slowest, t)
	}
	return ringResult{name: "barrier", np: c.Size(), rounds: b.o.rounds,
		total: time.Duration(slowest * float64(time.Second))}, nil
}
