package main

import (
	"bytes"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"4096", 4096, true}, {"64k", 64 << 10, true}, {"4M", 4 << 20, true},
		{"1024m", 1 << 30, true}, {"1025m", 0, false}, {"-1", 0, false}, {"x", 0, false}, {"", 0, false},
	} {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tc.in) {
			t.Errorf("parseSize(%q): error %q does not name the input", tc.in, err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for name, m := range modeNames {
		got, err := ParseMode(name)
		if err != nil || got != m || m.String() != name {
			t.Errorf("ParseMode(%q) = %v, %v", name, got, err)
		}
	}
	if _, err := ParseMode("ring"); err == nil || !strings.Contains(err.Error(), "allowed") {
		t.Errorf("ParseMode(ring): %v; want an error listing the modes", err)
	}
}

func TestSchedule(t *testing.T) {
	lat := session{mode: ModeLat, max: 16}
	if got := lat.sizes(); !reflect.DeepEqual(got, []int{0, 1, 2, 4, 8, 16}) {
		t.Errorf("lat sizes %v", got)
	}
	bw := session{mode: ModeBW, max: 5}
	if got := bw.sizes(); !reflect.DeepEqual(got, []int{1, 2, 4}) {
		t.Errorf("bw sizes %v", got)
	}
	for _, tc := range []struct {
		s           session
		size        int
		iters, warm int
	}{
		{lat, 8192, 10000, 100}, {lat, 16384, 1000, 10}, {lat, 8 << 20, 100, 2},
		{bw, 8192, 1000, 100}, {bw, 16384, 100, 10}, {bw, 8 << 20, 10, 1},
		{session{mode: ModeMR, iters: 7, warmup: 3}, 1, 7, 3},
	} {
		i, w := tc.s.counts(tc.size)
		if i != tc.iters || w != tc.warm {
			t.Errorf("%v counts(%d) = %d+%d; want %d+%d", tc.s.mode, tc.size, i, w, tc.iters, tc.warm)
		}
	}
}

func TestHelloRoundTrip(t *testing.T) {
	s := session{mode: ModeBiBW, max: 1 << 20, iters: 5, warmup: 2}
	b := s.encode()
	got, err := decodeSession(b[:])
	if err != nil || got != s {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", s, got, err)
	}
	b[4] = 9
	if _, err := decodeSession(b[:]); err == nil {
		t.Error("a hello with mode 9 was accepted")
	}
	if _, err := decodeSession([]byte("GET / HTTP/1.1\r\n\r\n0123456789abcd")); err == nil {
		t.Error("a stranger's bytes were accepted as a hello")
	}
}

func FuzzDecodeSession(f *testing.F) {
	good := session{mode: ModeLat, max: 4096}.encode()
	f.Add(good[:])
	f.Add([]byte("TCPF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSession(b)
		if err != nil {
			return
		}
		e := s.encode()
		if again, err := decodeSession(e[:]); err != nil || again != s {
			t.Fatalf("a decoded hello %+v does not survive a round trip: %+v, %v", s, again, err)
		}
		if len(s.sizes()) > 32 {
			t.Fatalf("a decoded session sweeps %d sizes", len(s.sizes()))
		}
	})
}

func TestMeasure(t *testing.T) {
	if r := measure(ModeLat, 8, 1000, 2*time.Millisecond); r.values[0] != 1 {
		t.Errorf("lat: %v; want 1 µs", r.values)
	}
	r := measure(ModeMR, 1000, 10, time.Millisecond) // 640 kB in 1 ms, 640 messages
	if len(r.values) != 2 || r.values[0] != 640 || r.values[1] != 640000 {
		t.Errorf("mr: %v; want 640 MB/s, 640000 messages/s", r.values)
	}
	if r := measure(ModeBiBW, 1000, 10, time.Millisecond); r.values[0] != 1280 {
		t.Errorf("bibw: %v; want both directions, 1280 MB/s", r.values)
	}
	if got := formatRow(row{64, []float64{1.5}}); got != "64                       1.50" {
		t.Errorf("formatRow: %q", got)
	}
}

// TestLoopback runs a short session of every mode between a client and a
// server in this process, over loopback, and checks that every size has a
// positive row.
func TestLoopback(t *testing.T) {
	for _, mode := range []string{"lat", "bw", "bibw", "mr"} {
		t.Run(mode, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			srv := make(chan error, 1)
			go func() { srv <- mainErr([]string{"-server", "-addr", addr, "-wait", "20s"}, nil) }()
			var out bytes.Buffer
			if err := mainErr([]string{"-addr", addr, "-i", "5", "-x", "1", mode, "128k"}, &out); err != nil {
				t.Fatalf("client: %v\n%s", err, out.String())
			}
			if err := <-srv; err != nil {
				t.Fatalf("server: %v", err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			want := 2 + 18 // header, then 1 .. 128 KiB (lat adds 0)
			if mode == "lat" {
				want++
			}
			if len(lines) != want {
				t.Fatalf("%d lines; want %d:\n%s", len(lines), want, out.String())
			}
			// Every row is a size and non-negative numbers; the largest
			// size moved something (the small ones may round to 0.00
			// MB/s on a loaded machine).
			for i, l := range lines[2:] {
				f := strings.Fields(l)
				if len(f) < 2 {
					t.Fatalf("row %q: want a size and a value", l)
				}
				for _, v := range f[1:] {
					x, err := strconv.ParseFloat(v, 64)
					if err != nil || x < 0 || (i == len(lines)-3 && x == 0) {
						t.Errorf("row %q: value %q", l, v)
					}
				}
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lat"}, "-addr"},
		{[]string{"-addr", "127.0.0.1:1"}, "usage"},
		{[]string{"-addr", "127.0.0.1:1", "ring"}, "allowed"},
		{[]string{"-addr", "127.0.0.1:1", "lat", "2g"}, "size"},
		{[]string{"-server", "-addr", "127.0.0.1:1", "lat"}, "no mode"},
	} {
		err := mainErr(tc.args, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want an error containing %q", tc.args, err, tc.want)
		}
	}
}
