package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Metric is what a series' values measure; it picks the plot's y axis.
type Metric int

// The metrics a plot can show.
const (
	MetricUnknown   Metric = iota
	MetricLatency          // µs, lower is better
	MetricBandwidth        // MB/s (10^6 B/s), higher is better
)

// String names the metric as the y axis does.
func (m Metric) String() string {
	switch m {
	case MetricLatency:
		return "Latency (µs)"
	case MetricBandwidth:
		return "Bandwidth (MB/s)"
	}
	return "Value"
}

// Point is one message size and its value.
type Point struct {
	Size  int
	Value float64
}

// Series is one run: what the plot's legend calls it, what it measures, and
// its points in file order.
type Series struct {
	Label  string
	Metric Metric
	Points []Point
}

// readSeriesFile reads an overlay file; its label is the file's base name
// without the extension.
func readSeriesFile(path string) (Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return Series{}, fmt.Errorf("overlay: %w", err)
	}
	defer f.Close()
	label := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	s, err := readSeries(f, label)
	if err != nil {
		return s, fmt.Errorf("overlay %s: %w", path, err)
	}
	return s, nil
}

// maxLine bounds one line of an overlay file (1 MiB): real lines are tens of
// bytes, and bufio.Scanner needs a bound.
const maxLine = 1 << 20

// readSeries reads a run saved by --csv, or OSU-style text output (osu's own,
// bench.c's or the OSU benchmarks'), so that Open MPI's output can be
// overlaid as it is:
//   - blank lines are skipped; lines starting with '#' are comments, in which
//     "Latency" or "MB/s"/"Bandwidth" tell the metric;
//   - fields are split on commas if the line has one, else on blanks;
//   - one header line (a first field that is not a number) may come before
//     the data; its second column names the metric ("latency_us", "mb_per_s");
//   - a data line is a size (whole bytes) and a value (a finite number >= 0);
//     further fields are ignored.
//
// It fails on anything else, naming the line, and on a file with no data.
func readSeries(r io.Reader, label string) (Series, error) {
	s := Series{Label: label}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	header := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if line[0] == '#' {
			if s.Metric == MetricUnknown {
				s.Metric = metricOfText(line)
			}
			continue
		}
		var f []string
		if strings.Contains(line, ",") {
			f = strings.Split(line, ",")
			for i := range f {
				f[i] = strings.TrimSpace(f[i])
			}
		} else {
			f = strings.Fields(line)
		}
		size, err := strconv.Atoi(f[0])
		if err != nil && len(s.Points) == 0 && !header && !startsNumeric(f[0]) {
			header = true
			if strings.EqualFold(f[0], "mode") {
				return s, fmt.Errorf("line %d: a ring or shift result (%q) has no size axis to plot", n, line)
			}
			if len(f) > 1 {
				if m := metricOfText(f[1]); m != MetricUnknown {
					s.Metric = m
				}
			}
			continue
		}
		if err != nil || size < 0 {
			return s, fmt.Errorf("line %d: size %q: want a whole number of bytes, 0 or more", n, f[0])
		}
		if len(f) < 2 {
			return s, fmt.Errorf("line %d: %q has a size but no value; want SIZE,VALUE or SIZE VALUE", n, line)
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return s, fmt.Errorf("line %d: value %q: want a finite number, 0 or more", n, f[1])
		}
		s.Points = append(s.Points, Point{Size: size, Value: v})
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	if len(s.Points) == 0 {
		return s, fmt.Errorf("no data lines; want SIZE,VALUE rows as written by osu --csv")
	}
	return s, nil
}

// startsNumeric reports whether a field looks like a number gone wrong
// ("-3", "12x") rather than a column name, so that it is reported as a bad
// size instead of being taken for a header.
func startsNumeric(f string) bool {
	return f != "" && (f[0] == '-' || f[0] == '+' || f[0] == '.' || (f[0] >= '0' && f[0] <= '9'))
}

// metricOfText guesses the metric from a column name or a comment line.
func metricOfText(s string) Metric {
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "lat"):
		return MetricLatency
	case strings.Contains(l, "mb/s"), strings.Contains(l, "mb_per_s"), strings.Contains(l, "bandwidth"), strings.Contains(l, "bw"):
		return MetricBandwidth
	}
	return MetricUnknown
}
