package main

import (
	"fmt"
	"strings"
)

// Mode is what the benchmark measures.
type Mode int

// The modes. Their names are bench.c's (and compare.py's), plus OSU's
// multi-pair latency and the plot-only mode.
const (
	ModeLat       Mode = iota // osu_latency: blocking ping-pong, half round trip in µs
	ModeMultiLat              // osu_multi_lat: N/2 pairs ping-pong at once, average latency
	ModeBW                    // osu_bw: windows of 64 Isend, ack per window, MB/s
	ModeBiBW                  // osu_bibw: both ranks send a window at once, MB/s of both directions
	ModeMR                    // osu_mbw_mr with 1 pair: the bw loop, plus messages/s
	ModeRing                  // token ring over all ranks, µs per round
	ModeShift                 // every rank Sendrecv to rank+1 from rank-1, µs per round
	ModeGoroutine             // a rank's goroutines around a blocked Recv (goroutine.go)
	ModePlot                  // no measurement: draw --overlay files into --plot
	// The collectives (osu_allreduce etc., any number of ranks): average
	// latency over ranks per size, a Barrier between timed calls.
	ModeAllreduce // float32 Sum of size/4 elements
	ModeReduce    // float32 Sum of size/4 elements to root 0
	ModeBcast     // size bytes from root 0
	ModeAllgather // size bytes per rank
	ModeAlltoall  // size bytes per pair of ranks
	ModeBarrier   // µs per Barrier, like ring
)

var modeNames = []struct {
	name string
	mode Mode
}{
	{"lat", ModeLat}, {"latency", ModeLat},
	{"multi_lat", ModeMultiLat},
	{"bw", ModeBW},
	{"bibw", ModeBiBW},
	{"mr", ModeMR},
	{"ring", ModeRing},
	{"shift", ModeShift},
	{"goroutine", ModeGoroutine},
	{"plot", ModePlot},
	{"allreduce", ModeAllreduce},
	{"reduce", ModeReduce},
	{"bcast", ModeBcast},
	{"allgather", ModeAllgather},
	{"alltoall", ModeAlltoall},
	{"barrier", ModeBarrier},
}

// parseMode reads a mode name; "latency" is an alias of "lat".
func parseMode(s string) (Mode, error) {
	for _, m := range modeNames {
		if m.name == s {
			return m.mode, nil
		}
	}
	var all []string
	for _, m := range modeNames {
		all = append(all, m.name)
	}
	return 0, fmt.Errorf("unknown mode %q; want one of %s", s, strings.Join(all, ", "))
}

// String is the mode's canonical name.
func (m Mode) String() string {
	for _, n := range modeNames {
		if n.mode == m {
			return n.name
		}
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// sweep reports whether the mode measures a range of message sizes (and so
// has rows to print as CSV and to plot), rather than one ring figure.
func (m Mode) sweep() bool { return m <= ModeMR || m.collective() }

// collective reports whether m is one of the size-sweeping collectives.
func (m Mode) collective() bool { return m >= ModeAllreduce && m <= ModeAlltoall }

// minSize is the first size of the mode's default sweep: 0 B for latencies,
// 1 B for bandwidths (as in bench.c).
func (m Mode) minSize() int {
	switch m {
	case ModeLat, ModeMultiLat:
		return 0
	case ModeAllreduce, ModeReduce:
		return 4 // one float32
	}
	return 1
}

// metric is what the mode's value column (the second) measures.
func (m Mode) metric() Metric {
	switch m {
	case ModeLat, ModeMultiLat, ModeAllreduce, ModeReduce, ModeBcast, ModeAllgather, ModeAlltoall:
		return MetricLatency
	case ModeBW, ModeBiBW, ModeMR:
		return MetricBandwidth
	}
	return MetricUnknown
}

// checkRanks says whether a job of np ranks can run the mode: lat, bw, bibw
// and mr need exactly 2 (like bench.c), multi_lat an even number, ring and
// shift any number (one rank passes the token to itself).
func (m Mode) checkRanks(np int) error {
	switch m {
	case ModeLat, ModeBW, ModeBiBW, ModeMR, ModeGoroutine:
		if np != 2 {
			return fmt.Errorf("mode %s needs exactly 2 ranks, got %d (run it as: gorun -np 2 osu %s)", m, np, m)
		}
	case ModeMultiLat:
		if np < 2 || np%2 != 0 {
			return fmt.Errorf("mode %s needs an even number of ranks (N/2 pairs), got %d (run it as: gorun -np 4 osu %s)", m, np, m)
		}
	}
	return nil
}
