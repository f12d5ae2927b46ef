package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestParseArgs(t *testing.T) {
	t.Setenv("OSU_EXACT", "")
	tests := []struct {
		name string
		args []string
		want options // compared field by field below
	}{
		{"lat defaults", []string{"lat"},
			options{mode: ModeLat, minSize: 0, maxSize: 4 << 20, rounds: 10000, label: "gorun"}},
		{"latency is an alias of lat", []string{"latency"},
			options{mode: ModeLat, minSize: 0, maxSize: 4 << 20, rounds: 10000, label: "gorun"}},
		{"bw sweeps from 1 byte", []string{"bw"},
			options{mode: ModeBW, minSize: 1, maxSize: 4 << 20, rounds: 10000, label: "gorun"}},
		{"bench.c's second argument is the largest size", []string{"lat", "65536"},
			options{mode: ModeLat, minSize: 0, maxSize: 65536, rounds: 10000, label: "gorun"}},
		{"largest size with a suffix", []string{"mr", "8m"},
			options{mode: ModeMR, minSize: 1, maxSize: 8 << 20, rounds: 10000, label: "gorun"}},
		{"-m MIN:MAX", []string{"bibw", "-m", "4k:64k"},
			options{mode: ModeBiBW, minSize: 4096, maxSize: 65536, rounds: 10000, label: "gorun"}},
		{"bench.c's second argument is ring's rounds", []string{"ring", "500"},
			options{mode: ModeRing, minSize: 1, maxSize: 4 << 20, rounds: 500, label: "gorun"}},
		{"shift --rounds", []string{"shift", "--rounds", "7"},
			options{mode: ModeShift, minSize: 1, maxSize: 4 << 20, rounds: 7, label: "gorun"}},
		{"goroutine's second argument is its rounds", []string{"goroutine", "300"},
			options{mode: ModeGoroutine, minSize: 1, maxSize: 4 << 20, rounds: 300, label: "gorun"}},
		{"flags before the mode, and overrides", []string{"-i", "5", "-x", "0", "--osu-exact", "multi_lat"},
			options{mode: ModeMultiLat, minSize: 0, maxSize: 4 << 20, rounds: 10000, label: "gorun",
				iters: 5, warmup: 0, warmupSet: true, exact: true}},
		{"csv, plot, overlays, label", []string{"lat", "--csv", "--plot", "x.PNG", "--overlay", "a.csv", "--overlay", "b.txt", "--label", "mine"},
			options{mode: ModeLat, minSize: 0, maxSize: 4 << 20, rounds: 10000, label: "mine",
				csv: true, plot: "x.PNG", overlays: []string{"a.csv", "b.txt"}}},
		{"allreduce sweeps float32s from 4 bytes", []string{"allreduce"},
			options{mode: ModeAllreduce, minSize: 4, maxSize: 4 << 20, rounds: 10000, label: "gorun"}},
		{"alltoall blocks up to 1 MiB, as bench.c", []string{"alltoall"},
			options{mode: ModeAlltoall, minSize: 1, maxSize: 1 << 20, rounds: 10000, label: "gorun"}},
		{"barrier's argument is its rounds", []string{"barrier", "300"},
			options{mode: ModeBarrier, minSize: 1, maxSize: 4 << 20, rounds: 300, label: "gorun"}},
		{"plot mode", []string{"plot", "--plot", "p.svg", "--overlay", "a.csv"},
			options{mode: ModePlot, minSize: 1, maxSize: 4 << 20, rounds: 10000, label: "gorun",
				plot: "p.svg", overlays: []string{"a.csv"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseArgs(tt.args)
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tt.args, err)
			}
			w := tt.want
			if got.mode != w.mode || got.minSize != w.minSize || got.maxSize != w.maxSize || got.rounds != w.rounds ||
				got.iters != w.iters || got.warmup != w.warmup || got.warmupSet != w.warmupSet || got.exact != w.exact ||
				got.csv != w.csv || got.plot != w.plot || got.label != w.label || !slices.Equal(got.overlays, w.overlays) {
				t.Errorf("parseArgs(%q) =\n %+v\nwant\n %+v", tt.args, got, w)
			}
		})
	}
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{nil, "missing MODE"},
		{[]string{"pingpong"}, `unknown mode "pingpong"; want one of lat, latency, multi_lat`},
		{[]string{"lat", "1", "2"}, "too many arguments"},
		{[]string{"lat", "64q"}, `size "64q"`},
		{[]string{"bw", "0"}, "largest size 0 is below the first size 1 of mode bw"},
		{[]string{"lat", "4k", "-m", "8k"}, "largest size given twice"},
		{[]string{"ring", "0"}, `rounds "0": want a whole number, 1 or more`},
		{[]string{"ring", "5", "-r", "6"}, "rounds given twice"},
		{[]string{"shift", "-r", "0"}, "--rounds 0: want 1 or more"},
		{[]string{"lat", "-i", "0"}, "--iterations 0: want 1 or more"},
		{[]string{"lat", "-x", "-3"}, "--warmup -3: want 0 or more"},
		{[]string{"lat", "--plot", "out.pdf"}, `unknown image type ".pdf"; want a .svg or .png file`},
		{[]string{"ring", "--plot", "out.svg"}, "mode ring has no size axis to plot"},
		{[]string{"lat", "--overlay", "a.csv"}, "give --plot FILE too"},
		{[]string{"plot", "--plot", "p.svg"}, "at least one --overlay FILE"},
		{[]string{"plot", "3", "--plot", "p.svg", "--overlay", "a"}, `mode plot takes no argument, got "3"`},
		{[]string{"lat", "--bogus"}, "unknown flag: --bogus"},
	}
	for _, tt := range tests {
		_, err := parseArgs(tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("parseArgs(%q) error = %v; want it to contain %q", tt.args, err, tt.wantErr)
		}
	}
	if _, err := parseArgs([]string{"-h"}); !errors.Is(err, pflag.ErrHelp) {
		t.Errorf("parseArgs(-h) error = %v, want pflag.ErrHelp", err)
	}
}

func TestOSUExactFromEnvironment(t *testing.T) {
	for env, want := range map[string]bool{"1": true, "0": false, "": false} {
		t.Setenv("OSU_EXACT", env)
		o, err := parseArgs([]string{"bw"})
		if err != nil || o.exact != want {
			t.Errorf("OSU_EXACT=%q: exact = %v, %v; want %v", env, o.exact, err, want)
		}
	}
}

func TestCountsFor(t *testing.T) {
	tests := []struct {
		args []string
		size int
		want counts
	}{
		{[]string{"lat"}, 8, counts{10000, 100}},
		{[]string{"multi_lat"}, 1 << 20, counts{1000, 10}},
		{[]string{"bw"}, 8, counts{1000, 100}},
		{[]string{"mr", "--osu-exact"}, 1 << 20, counts{20, 2}},
		{[]string{"lat", "-i", "3"}, 8, counts{3, 100}},
		{[]string{"bw", "-x", "0"}, 8, counts{1000, 0}},
	}
	for _, tt := range tests {
		t.Setenv("OSU_EXACT", "")
		o, err := parseArgs(tt.args)
		if err != nil {
			t.Fatalf("parseArgs(%q): %v", tt.args, err)
		}
		if got := o.countsFor(tt.size); got != tt.want {
			t.Errorf("%q: countsFor(%d) = %+v, want %+v", tt.args, tt.size, got, tt.want)
		}
	}
}

func TestCheckRanks(t *testing.T) {
	tests := []struct {
		mode    Mode
		np      int
		wantErr string
	}{
		{ModeLat, 2, ""},
		{ModeLat, 1, "mode lat needs exactly 2 ranks, got 1"},
		{ModeBW, 3, "mode bw needs exactly 2 ranks, got 3"},
		{ModeMultiLat, 4, ""},
		{ModeMultiLat, 2, ""},
		{ModeMultiLat, 3, "needs an even number of ranks (N/2 pairs), got 3"},
		{ModeMultiLat, 1, "got 1"},
		{ModeRing, 1, ""},
		{ModeShift, 8, ""},
	}
	for _, tt := range tests {
		err := tt.mode.checkRanks(tt.np)
		if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%v.checkRanks(%d) = %v; want error %q", tt.mode, tt.np, err, tt.wantErr)
		}
	}
}
