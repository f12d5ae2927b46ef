package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// row is one measured size: its value(s) in the mode's columns.
type row struct {
	size   int
	values []float64 // lat, multi_lat: µs; bw, bibw: MB/s; mr: MB/s, messages/s
}

// latencyRow turns a ping-pong time into OSU's half round trip in µs.
func latencyRow(size, iters int, elapsed time.Duration) row {
	return row{size, []float64{elapsed.Seconds() * 1e6 / (2 * float64(iters))}}
}

// bandwidthRow turns a windowed run into MB/s (OSU's MB = 10^6 B), counting
// both directions for bibw; mr adds messages/s.
func bandwidthRow(m Mode, size, iters int, elapsed time.Duration) row {
	t := elapsed.Seconds()
	bytes := float64(size) * window * float64(iters)
	if m == ModeBiBW {
		bytes *= 2
	}
	r := row{size, []float64{bytes / 1e6 / t}}
	if m == ModeMR {
		r.values = append(r.values, window*float64(iters)/t)
	}
	return r
}

// report prints the rows of a sweep as they come, in OSU's text format or as
// CSV, and keeps them for the plot.
type report struct {
	w     io.Writer
	mode  Mode
	csv   bool
	pairs int // multi_lat: number of pairs, for the header
	np    int // the collectives: number of ranks, for the header
	rows  []row
}

// header prints the lines before the first row.
func (r *report) header() error {
	var err error
	if r.csv {
		_, err = fmt.Fprintln(r.w, strings.Join(csvColumns(r.mode), ","))
		return err
	}
	switch r.mode {
	case ModeLat:
		_, err = fmt.Fprintf(r.w, "# OSU-style gorun Latency Test (own implementation)\n# %-10s %18s\n", "Size", "Latency (us)")
	case ModeMultiLat:
		_, err = fmt.Fprintf(r.w, "# OSU-style gorun Multi-pair Latency Test, %d pairs (own implementation)\n# %-10s %18s\n",
			r.pairs, "Size", "Latency (us)")
	case ModeBW, ModeBiBW:
		name := "Bandwidth"
		if r.mode == ModeBiBW {
			name = "Bi-Directional Bandwidth"
		}
		_, err = fmt.Fprintf(r.w, "# OSU-style gorun %s Test, window %d (own implementation)\n# %-10s %18s\n",
			name, window, "Size", "Bandwidth (MB/s)")
	case ModeMR:
		_, err = fmt.Fprintf(r.w, "# OSU-style gorun Multiple Bandwidth / Message Rate Test, 1 pair, window %d (own implementation)\n# %-10s %14s %18s\n",
			window, "Size", "MB/s", "Messages/s")
	case ModeAllreduce, ModeReduce, ModeBcast, ModeAllgather, ModeAlltoall:
		_, err = fmt.Fprintf(r.w, "# OSU-style gorun %s Latency Test (own implementation), np=%d\n# %-10s %18s\n",
			r.mode, r.np, "Size", "Avg Latency (us)")
	default:
		err = fmt.Errorf("mode %s has no size sweep to report", r.mode)
	}
	return err
}

// add prints one row and keeps it.
func (r *report) add(x row) error {
	r.rows = append(r.rows, x)
	var err error
	switch {
	case r.csv:
		f := []string{strconv.Itoa(x.size)}
		for _, v := range x.values {
			f = append(f, strconv.FormatFloat(v, 'f', 3, 64))
		}
		_, err = fmt.Fprintln(r.w, strings.Join(f, ","))
	case r.mode == ModeMR:
		_, err = fmt.Fprintf(r.w, "%-12d %14.2f %18.2f\n", x.size, x.values[0], x.values[1])
	default:
		_, err = fmt.Fprintf(r.w, "%-12d %18.2f\n", x.size, x.values[0])
	}
	return err
}

// series is the report's rows as a plot line: the value column against size.
func (r *report) series(label string) Series {
	s := Series{Label: label, Metric: r.mode.metric()}
	for _, x := range r.rows {
		s.Points = append(s.Points, Point{Size: x.size, Value: x.values[0]})
	}
	return s
}

// csvColumns is the CSV header of a mode. Its second column names the metric,
// which is how overlays are recognised (series.go).
func csvColumns(m Mode) []string {
	switch m {
	case ModeLat, ModeMultiLat, ModeAllreduce, ModeReduce, ModeBcast, ModeAllgather, ModeAlltoall:
		return []string{"size", "latency_us"}
	case ModeBW, ModeBiBW:
		return []string{"size", "mb_per_s"}
	case ModeMR:
		return []string{"size", "mb_per_s", "messages_per_s"}
	}
	return []string{"mode", "np", "rounds", "total_s", "us_per_round", "us_per_hop"}
}

// ringResult is one ring or shift run: the slowest rank's time for all rounds.
type ringResult struct {
	shift  bool
	name   string // another mode timed per round (barrier); "": ring or shift
	np     int
	rounds int
	total  time.Duration
}

// write prints the result as bench.c does ("ring np=4 rounds=10000
// total_s=... us_per_round=... us_per_hop=..."), or as a CSV header and row.
// A ring round is np hops; a shift round is one (all ranks hop at once).
func (r ringResult) write(w io.Writer, csv bool) error {
	name, t := "ring", r.total.Seconds()
	perRound := t * 1e6 / float64(r.rounds)
	perHop := perRound / float64(r.np)
	if r.shift {
		name, perHop = "shift", perRound
	}
	if r.name != "" {
		name, perHop = r.name, perRound
	}
	var err error
	if csv {
		_, err = fmt.Fprintf(w, "%s\n%s,%d,%d,%.6f,%.3f,%.3f\n", strings.Join(csvColumns(ModeRing), ","),
			name, r.np, r.rounds, t, perRound, perHop)
	} else {
		_, err = fmt.Fprintf(w, "%s np=%d rounds=%d total_s=%.4f us_per_round=%.3f us_per_hop=%.3f\n",
			name, r.np, r.rounds, t, perRound, perHop)
	}
	return err
}
