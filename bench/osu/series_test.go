package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadSeries(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		metric Metric
		points []Point
	}{
		{"osu --csv, latency", "size,latency_us\n0,0.100\n8,0.125\n",
			MetricLatency, []Point{{0, 0.1}, {8, 0.125}}},
		{"osu --csv, mr: the second column is MB/s", "size,mb_per_s,messages_per_s\n1,5.000,5000000.000\n",
			MetricBandwidth, []Point{{1, 5}}},
		{"bench.c text output, latency", "# OSU-style MPI Latency Test (own implementation)\n# Size             Latency (us)\n0                          0.09\n1    0.10\n",
			MetricLatency, []Point{{0, 0.09}, {1, 0.1}}},
		{"bench.c text output, mr", "# OSU-style MPI Multiple Bandwidth / Message Rate Test, 1 pair, window 64 (own implementation)\n# Size                 MB/s         Messages/s\n65536              34000.46          518806.20\n",
			MetricBandwidth, []Point{{65536, 34000.46}}},
		{"no header: metric unknown", "1,2\n\n  4 , 8 \n",
			MetricUnknown, []Point{{1, 2}, {4, 8}}},
		{"CRLF line ends and extra columns", "size,mb_per_s\r\n2,3,ignored\r\n",
			MetricBandwidth, []Point{{2, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := readSeries(strings.NewReader(tt.in), "L")
			if err != nil {
				t.Fatalf("readSeries: %v", err)
			}
			if s.Label != "L" || s.Metric != tt.metric || !slices.Equal(s.Points, tt.points) {
				t.Errorf("readSeries = %+v, want label L, %v, %v", s, tt.metric, tt.points)
			}
		})
	}
}

func TestReadSeriesErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{"", "no data lines"},
		{"# only a comment\nsize,latency_us\n", "no data lines"},
		{"size,latency_us\n-1,2\n", `line 2: size "-1": want a whole number of bytes, 0 or more`},
		{"size,latency_us\n1.5,2\n", `line 2: size "1.5"`},
		{"size,latency_us\n8\n", `line 2: "8" has a size but no value`},
		{"size,latency_us\n8,fast\n", `line 2: value "fast": want a finite number, 0 or more`},
		{"8,-1\n", `line 1: value "-1"`},
		{"8,NaN\n", `value "NaN"`},
		{"8,+Inf\n", `value "+Inf"`},
		{"size,latency_us\n8,1\nsize,latency_us\n", `line 3: size "size"`}, // one header, before the data
		{"mode,np,rounds,total_s,us_per_round,us_per_hop\nring,2,4,0.1,2.5,1.25\n", "ring or shift result"},
		{"ring np=4 rounds=10 total_s=0.1 us_per_round=1 us_per_hop=1\nring np=4\n", `line 2: size "ring"`},
	}
	for _, tt := range tests {
		_, err := readSeries(strings.NewReader(tt.in), "L")
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("readSeries(%q) error = %v; want it to contain %q", tt.in, err, tt.wantErr)
		}
	}
}

// What osu --csv writes, readSeries reads back (to the 3 decimals written).
func TestCSVRoundTrip(t *testing.T) {
	for _, m := range []Mode{ModeLat, ModeMultiLat, ModeBW, ModeBiBW, ModeMR} {
		var b strings.Builder
		r := &report{w: &b, mode: m, csv: true}
		if err := r.header(); err != nil {
			t.Fatal(err)
		}
		for _, size := range sizes(m.minSize(), 1<<20) {
			x := row{size, []float64{float64(size)/3 + 0.25, 7}}
			if m != ModeMR {
				x.values = x.values[:1]
			}
			_ = r.add(x)
		}
		s, err := readSeries(strings.NewReader(b.String()), "x")
		if err != nil {
			t.Fatalf("%v: readSeries of its own CSV: %v\n%s", m, err, b.String())
		}
		want := r.series("x")
		if s.Metric != want.Metric || len(s.Points) != len(want.Points) {
			t.Fatalf("%v: read %+v, want %+v", m, s, want)
		}
		for i := range s.Points {
			if s.Points[i].Size != want.Points[i].Size || math.Abs(s.Points[i].Value-want.Points[i].Value) > 0.0005 {
				t.Errorf("%v: point %d = %+v, want %+v", m, i, s.Points[i], want.Points[i])
			}
		}
	}
}

func TestReadSeriesFile(t *testing.T) {
	s, err := readSeriesFile(filepath.Join("testdata", "openmpi_lat.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Label != "openmpi_lat" || s.Metric != MetricLatency || len(s.Points) != 6 {
		t.Errorf("readSeriesFile = %+v, want label openmpi_lat, latency, 6 points", s)
	}
	_, err = readSeriesFile(filepath.Join(t.TempDir(), "missing.csv"))
	if err == nil || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("readSeriesFile(missing) error = %v, want one naming the file", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("size,latency_us\nx,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = readSeriesFile(bad)
	if err == nil || !strings.Contains(err.Error(), "bad.csv") || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("readSeriesFile(bad) error = %v, want one naming the file and line 2", err)
	}
}

// FuzzReadSeries: any input either fails with an error or gives at least
// one point, every size >= 0 and every value finite and >= 0.
func FuzzReadSeries(f *testing.F) {
	for _, seed := range []string{
		"size,latency_us\n0,0.1\n8,0.2\n",           // osu --csv
		"size,mb_per_s,messages_per_s\n1,5,5e6\n",   // osu --csv, mr
		"# Latency\n# Size  Latency (us)\n0 0.09\n", // bench.c
		"mode,np\nring,2\n",                         // ring CSV
		"1,\n", ",\n", "\n\n#\n", "size\n",          // fragments
		"8,1e400\n", "8,-0\n", "9223372036854775808,1\n", // overflow
		"\xff\xfe,1\n", strings.Repeat("9", 5000) + ",1\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := readSeries(strings.NewReader(in), "f")
		if err != nil {
			return
		}
		if len(s.Points) == 0 {
			t.Fatalf("readSeries(%q) gave no points and no error", in)
		}
		for _, p := range s.Points {
			if p.Size < 0 || p.Value < 0 || math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
				t.Fatalf("readSeries(%q) gave point %+v", in, p)
			}
		}
	})
}
