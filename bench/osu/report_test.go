package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestLatencyRow(t *testing.T) {
	// 1000 ping-pongs in 2 ms: 2 µs per round trip, 1 µs one way.
	got := latencyRow(64, 1000, 2*time.Millisecond)
	if got.size != 64 || len(got.values) != 1 || math.Abs(got.values[0]-1) > 1e-12 {
		t.Errorf("latencyRow(64, 1000, 2ms) = %+v, want {64 [1]}", got)
	}
}

func TestBandwidthRow(t *testing.T) {
	// 100 windows of 64 messages of 1000 B in 64 ms: 6.4 MB in 0.064 s.
	tests := []struct {
		mode Mode
		want []float64
	}{
		{ModeBW, []float64{100}},
		{ModeBiBW, []float64{200}}, // both directions count
		{ModeMR, []float64{100, 100000}},
	}
	for _, tt := range tests {
		got := bandwidthRow(tt.mode, 1000, 100, 64*time.Millisecond)
		if got.size != 1000 || len(got.values) != len(tt.want) {
			t.Fatalf("bandwidthRow(%v) = %+v, want values %v", tt.mode, got, tt.want)
		}
		for i := range tt.want {
			if math.Abs(got.values[i]-tt.want[i]) > 1e-6*tt.want[i] {
				t.Errorf("bandwidthRow(%v).values[%d] = %v, want %v", tt.mode, i, got.values[i], tt.want[i])
			}
		}
	}
}

// The text format is bench.c's printf formats, byte for byte (the expected
// strings were printed by printf(1) with bench.c's format strings).
func TestReportText(t *testing.T) {
	tests := []struct {
		mode  Mode
		pairs int
		rows  []row
		want  string
	}{
		{ModeLat, 1, []row{{0, []float64{0.0912}}, {4194304, []float64{612.345}}},
			"# OSU-style gorun Latency Test (own implementation)\n" +
				"# Size             Latency (us)\n" +
				"0                          0.09\n" +
				"4194304                  612.35\n"},
		{ModeMultiLat, 2, []row{{8, []float64{1.5}}},
			"# OSU-style gorun Multi-pair Latency Test, 2 pairs (own implementation)\n" +
				"# Size             Latency (us)\n" +
				"8                          1.50\n"},
		{ModeBW, 1, []row{{1, []float64{12.5}}},
			"# OSU-style gorun Bandwidth Test, window 64 (own implementation)\n" +
				"# Size         Bandwidth (MB/s)\n" +
				"1                         12.50\n"},
		{ModeBiBW, 1, []row{{1, []float64{12.5}}},
			"# OSU-style gorun Bi-Directional Bandwidth Test, window 64 (own implementation)\n" +
				"# Size         Bandwidth (MB/s)\n" +
				"1                         12.50\n"},
		{ModeMR, 1, []row{{65536, []float64{34000.456, 518806.2}}},
			"# OSU-style gorun Multiple Bandwidth / Message Rate Test, 1 pair, window 64 (own implementation)\n" +
				"# Size                 MB/s         Messages/s\n" +
				"65536              34000.46          518806.20\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		r := &report{w: &b, mode: tt.mode, pairs: tt.pairs}
		if err := r.header(); err != nil {
			t.Fatal(err)
		}
		for _, x := range tt.rows {
			if err := r.add(x); err != nil {
				t.Fatal(err)
			}
		}
		if b.String() != tt.want {
			t.Errorf("%v report:\n%q\nwant\n%q", tt.mode, b.String(), tt.want)
		}
		if len(r.rows) != len(tt.rows) {
			t.Errorf("%v report kept %d rows, want %d", tt.mode, len(r.rows), len(tt.rows))
		}
	}
}

func TestReportCSV(t *testing.T) {
	var b strings.Builder
	r := &report{w: &b, mode: ModeMR, csv: true}
	if err := r.header(); err != nil {
		t.Fatal(err)
	}
	_ = r.add(row{1, []float64{0.5, 500000}})
	_ = r.add(row{2, []float64{1.0004, 500000.25}})
	want := "size,mb_per_s,messages_per_s\n1,0.500,500000.000\n2,1.000,500000.250\n"
	if b.String() != want {
		t.Errorf("mr CSV:\n%q\nwant\n%q", b.String(), want)
	}
	s := r.series("x")
	if s.Metric != MetricBandwidth || len(s.Points) != 2 || s.Points[1] != (Point{2, 1.0004}) {
		t.Errorf("series = %+v, want bandwidth points {1 0.5} {2 1.0004}", s)
	}
}

func TestReportRejectsRingModes(t *testing.T) {
	r := &report{w: &strings.Builder{}, mode: ModeRing}
	if err := r.header(); err == nil {
		t.Error("report.header for ring succeeded; want an error (ring has no size sweep)")
	}
}

func TestRingResultWrite(t *testing.T) {
	tests := []struct {
		res  ringResult
		csv  bool
		want string
	}{
		{ringResult{np: 4, rounds: 10000, total: 120 * time.Millisecond}, false,
			"ring np=4 rounds=10000 total_s=0.1200 us_per_round=12.000 us_per_hop=3.000\n"},
		{ringResult{shift: true, np: 8, rounds: 1000, total: 5 * time.Millisecond}, false,
			"shift np=8 rounds=1000 total_s=0.0050 us_per_round=5.000 us_per_hop=5.000\n"},
		{ringResult{np: 2, rounds: 4, total: 10 * time.Microsecond}, true,
			"mode,np,rounds,total_s,us_per_round,us_per_hop\nring,2,4,0.000010,2.500,1.250\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := tt.res.write(&b, tt.csv); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("%+v.write(csv=%v) = %q, want %q", tt.res, tt.csv, b.String(), tt.want)
		}
	}
}
