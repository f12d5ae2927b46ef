package launcher

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseHosts(t *testing.T) {
	tests := []struct {
		in   string
		want []Host
		err  string
	}{
		{in: "h1", want: []Host{{Name: "h1"}}},
		{in: "h1:4,h2:2,h3", want: []Host{{"h1", 4}, {"h2", 2}, {"h3", 0}}},
		{in: "10.77.0.2:1", want: []Host{{"10.77.0.2", 1}}},
		{in: "", err: "empty host name"},
		{in: "h1,,h2", err: "empty host name"},
		{in: "h1:0", err: `slots "0": want a positive integer`},
		{in: "h1:-2", err: "want a positive integer"},
		{in: "h1:x", err: "want a positive integer"},
		{in: "h1:", err: "want a positive integer"},
		{in: "h1:+3", err: "want a positive integer"},
		{in: "h1:99999", err: "want a positive integer"},
		{in: "h1,H1:2", err: "host H1 named twice"},
		{in: "h 1", err: "character ' '"},
		{in: "-oBatchMode", err: "must not start with '-'"},
	}
	for _, tt := range tests {
		got, err := ParseHosts(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseHosts(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseHosts(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseHostfile(t *testing.T) {
	tests := []struct {
		in   string
		want []Host
		err  string
	}{
		{in: "h1\nh2 slots=3\n", want: []Host{{"h1", 0}, {"h2", 3}}},
		{in: "# cluster\n\n  h1   slots=2   # the first\n\th2\n", want: []Host{{"h1", 2}, {"h2", 0}}},
		{in: "h1 slots=2", want: []Host{{"h1", 2}}},
		{in: "", err: "hf: no host in the file"},
		{in: "# only a comment\n", err: "no host"},
		{in: "h1\nh2 slots=0\n", err: `hf:2: host h2: slots "0": want a positive integer`},
		{in: "h1\n\nh2 slots=two\n", err: "hf:3: host h2: slots \"two\""},
		{in: "h1 cpus=2\n", err: `hf:1: "cpus=2" after the host name`},
		{in: "h1 slots=1 slots=2\n", err: "hf:1: 3 words"},
		{in: "h1\nh2\nh1 slots=3\n", err: "hf:3: host h1 named twice"},
		{in: "h!1\n", err: "hf:1: host name \"h!1\""},
	}
	for _, tt := range tests {
		got, err := ParseHostfile("hf", []byte(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseHostfile(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseHostfile(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestPlaceRanks(t *testing.T) {
	tests := []struct {
		np      int
		slots   []int
		want    []int
		mapping string
	}{
		{np: 8, slots: []int{4, 4}, want: []int{4, 4}, mapping: "(vector,(0,2,4))"},
		{np: 3, slots: []int{2, 2}, want: []int{2, 1}, mapping: "(vector,(0,1,2),(1,1,1))"},
		{np: 2, slots: []int{2, 2, 2}, want: []int{2, 0, 0}, mapping: "(vector,(0,1,2))"},
		{np: 6, slots: []int{2, 2, 2}, want: []int{2, 2, 2}, mapping: "(vector,(0,3,2))"},
		{np: 7, slots: []int{2, 2}, want: []int{4, 3}, mapping: "(vector,(0,1,4),(1,1,3))"},
		{np: 5, slots: []int{1}, want: []int{5}, mapping: "(vector,(0,1,5))"},
		{np: 4, slots: []int{1, 3}, want: []int{1, 3}, mapping: "(vector,(0,1,1),(1,1,3))"},
	}
	for _, tt := range tests {
		got := placeRanks(tt.np, tt.slots)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("placeRanks(%d, %v) = %v; want %v", tt.np, tt.slots, got, tt.want)
		}
		if m := processMapping(got); m != tt.mapping {
			t.Errorf("processMapping(%v) = %s; want %s", got, m, tt.mapping)
		}
	}
	if got := rankBlocks([]int{2, 0, 3}); !reflect.DeepEqual(got, []int{0, 2, 2}) {
		t.Errorf("rankBlocks = %v", got)
	}
}

func TestIsLocal(t *testing.T) {
	l := newLocalNames()
	for _, n := range []string{"localhost", "LOCALHOST", "127.0.0.1", "127.0.0.5", "::1"} {
		if !l.isLocal(n) {
			t.Errorf("isLocal(%q) = false; want true", n)
		}
	}
	for _, n := range []string{"h-not-this-machine.invalid", "10.255.255.1"} {
		if l.isLocal(n) {
			t.Errorf("isLocal(%q) = true; want false", n)
		}
	}
}

// FuzzParseHostfile: no file panics; a parsed one has hosts with valid
// names, positive or default slots, and no name twice.
func FuzzParseHostfile(f *testing.F) {
	for _, s := range []string{"h1\nh2 slots=3\n", "# x\n h slots=0", "a slots=1 slots=2", "a\nA\n", "h1 slots=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hosts, err := ParseHostfile("f", []byte(s))
		if err != nil {
			return
		}
		if len(hosts) == 0 {
			t.Fatalf("ParseHostfile(%q): no hosts and no error", s)
		}
		if err := checkDuplicates(hosts); err != nil {
			t.Fatalf("ParseHostfile(%q): %v", s, err)
		}
		for _, h := range hosts {
			if checkHostName(h.Name) != nil || h.Slots < 0 || h.Slots > maxSlots {
				t.Fatalf("ParseHostfile(%q): bad host %+v", s, h)
			}
		}
	})
}

// FuzzParseHosts: as FuzzParseHostfile, for --host.
func FuzzParseHosts(f *testing.F) {
	for _, s := range []string{"h1:4,h2", "h1:0", ",", "a:1:2", "h1,h1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hosts, err := ParseHosts(s)
		if err != nil {
			return
		}
		if err := checkDuplicates(hosts); err != nil {
			t.Fatalf("ParseHosts(%q): %v", s, err)
		}
		for _, h := range hosts {
			if checkHostName(h.Name) != nil || h.Slots < 0 || h.Slots > maxSlots {
				t.Fatalf("ParseHosts(%q): bad host %+v", s, h)
			}
		}
	})
}

// FuzzPlaceRanks: every rank is placed, and no host gets more than its
// share of full passes plus one.
func FuzzPlaceRanks(f *testing.F) {
	f.Add(7, []byte{2, 2})
	f.Add(1, []byte{1, 5, 3})
	f.Fuzz(func(t *testing.T, np int, raw []byte) {
		if np < 1 || np > MaxNP || len(raw) == 0 || len(raw) > 64 {
			return
		}
		slots := make([]int, len(raw))
		total := 0
		for i, b := range raw {
			slots[i] = int(b) + 1
			total += slots[i]
		}
		counts := placeRanks(np, slots)
		sum := 0
		for i, c := range counts {
			sum += c
			if passes := (np + total - 1) / total; c > passes*slots[i] {
				t.Fatalf("placeRanks(%d, %v) = %v: host %d over %d passes", np, slots, counts, i, passes)
			}
		}
		if sum != np {
			t.Fatalf("placeRanks(%d, %v) = %v: %d ranks placed", np, slots, counts, sum)
		}
	})
}
