package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testSeries reads the two small runs in testdata.
func testSeries(t testing.TB) []Series {
	t.Helper()
	var out []Series
	for _, f := range []string{"gorun_lat.csv", "openmpi_lat.txt"} {
		s, err := readSeriesFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestSavePlotSVG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lat.svg")
	if err := savePlot(path, "osu lat", testSeries(t)); err != nil {
		t.Fatalf("savePlot: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Valid XML from the first token to the last, with an <svg> root.
	dec := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not valid XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("SVG root element = %q, want svg", root)
	}
	// The legend names both runs; the axis is labelled as latency.
	for _, want := range []string{"gorun_lat", "openmpi_lat", "Latency"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("SVG does not contain %q", want)
		}
	}
}

func TestSavePlotPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lat.PNG") // the extension's case does not matter
	if err := savePlot(path, "osu lat", testSeries(t)); err != nil {
		t.Fatalf("savePlot: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < 100 || b.Dy() < 100 {
		t.Fatalf("PNG is %dx%d, want a real plot", b.Dx(), b.Dy())
	}
	if uniform(img) {
		t.Error("PNG is one colour: nothing was drawn")
	}
}

func uniform(img image.Image) bool {
	b := img.Bounds()
	r0, g0, b0, a0 := img.At(b.Min.X, b.Min.Y).RGBA()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, a := img.At(x, y).RGBA(); r != r0 || g != g0 || bl != b0 || a != a0 {
				return false
			}
		}
	}
	return true
}

func TestWritePlotErrors(t *testing.T) {
	lat := Series{Label: "a", Metric: MetricLatency, Points: []Point{{1, 1}}}
	bw := Series{Label: "b", Metric: MetricBandwidth, Points: []Point{{1, 1}}}
	tests := []struct {
		name    string
		series  []Series
		wantErr string
	}{
		{"latency and bandwidth on one axis", []Series{lat, bw}, `series "b" holds Bandwidth (MB/s) but "a" holds Latency (µs)`},
		{"only points that a log axis cannot show", []Series{{Label: "z", Points: []Point{{0, 1}, {8, 0}}}}, "nothing to plot"},
		{"no series", nil, "nothing to plot"},
	}
	for _, tt := range tests {
		err := writePlot(io.Discard, "svg", "t", tt.series)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: writePlot error = %v, want it to contain %q", tt.name, err, tt.wantErr)
		}
	}
	if err := savePlot(filepath.Join(t.TempDir(), "x.pdf"), "t", []Series{lat}); err == nil {
		t.Error("savePlot(x.pdf) succeeded, want an error: only .svg and .png")
	}
}

// One point (a one-value range on both log axes) still plots.
func TestWritePlotSinglePoint(t *testing.T) {
	var b bytes.Buffer
	s := []Series{{Label: "one", Metric: MetricBandwidth, Points: []Point{{4096, 1000}}}}
	if err := writePlot(&b, "svg", "t", s); err != nil || b.Len() == 0 {
		t.Fatalf("writePlot of one point: %d bytes, %v", b.Len(), err)
	}
}

func TestSizeTicks(t *testing.T) {
	ticks := sizeTicks{}.Ticks(1, 4<<20)
	if len(ticks) != 23 {
		t.Fatalf("Ticks(1, 4m) gave %d ticks, want 23 (2^0 .. 2^22)", len(ticks))
	}
	var labels []string
	for _, tk := range ticks {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	want := "1 4 16 64 256 1k 4k 16k 64k 256k 1m 4m"
	if got := strings.Join(labels, " "); got != want {
		t.Errorf("Ticks(1, 4m) labels = %q, want %q", got, want)
	}
	small := sizeTicks{}.Ticks(3, 40)
	if len(small) != 4 || small[0].Label != "4" || small[3].Label != "32" {
		t.Errorf("Ticks(3, 40) = %+v, want labelled 4, 8, 16, 32", small)
	}
}
