package rndv

import (
	"reflect"
	"strings"
	"testing"
)

const goodCard = "gorun-card 1\nrank 3\nlocal_rank 3\npid 4242\ncaps sm,cma\naddr \n"

func TestParseCard(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Card   // when wantErr == ""
		err  string // substring of the error
	}{
		{name: "valid", in: goodCard, want: Card{Version: 1, Rank: 3, LocalRank: 3, Pid: 4242, Caps: []string{"sm", "cma"}}},
		{name: "keys in any order, no caps, an addr",
			in:   "gorun-card 1\naddr tcp://h:1\ncaps \npid 1\nlocal_rank 0\nrank 0\n",
			want: Card{Version: 1, Pid: 1, Addr: "tcp://h:1"}},
		{name: "empty", in: "", err: "newline"},
		{name: "truncated (no final newline)", in: strings.TrimSuffix(goodCard, "\n"), err: "newline"},
		{name: "wrong kind", in: strings.Replace(goodCard, "gorun-card", "gorun-segment", 1), err: "first line"},
		{name: "future version", in: strings.Replace(goodCard, "card 1", "card 2", 1), err: "version 2"},
		{name: "version not a number", in: strings.Replace(goodCard, "card 1", "card x", 1), err: "version"},
		{name: "missing key", in: strings.Replace(goodCard, "pid 4242\n", "", 1), err: `key "pid" missing`},
		{name: "duplicate key", in: goodCard + "rank 3\n", err: "given twice"},
		{name: "unknown key", in: goodCard + "color blue\n", err: "unknown key"},
		{name: "blank line", in: goodCard + "\n", err: "unknown key"},
		{name: "negative rank", in: strings.Replace(goodCard, "rank 3\n", "rank -1\n", 1), err: "rank"},
		{name: "rank too large", in: strings.Replace(goodCard, "rank 3\n", "rank 4096\n", 1), err: "0..4095"},
		{name: "leading zero", in: strings.Replace(goodCard, "pid 4242", "pid 04242", 1), err: "plain decimal"},
		{name: "pid zero", in: strings.Replace(goodCard, "pid 4242", "pid 0", 1), err: "1..4194304"},
		{name: "pid huge", in: strings.Replace(goodCard, "pid 4242", "pid 99999999999999999999", 1), err: "out of range"},
		{name: "empty capability", in: strings.Replace(goodCard, "sm,cma", "sm,,cma", 1), err: "capability"},
		{name: "capability with capitals", in: strings.Replace(goodCard, "sm,cma", "SM", 1), err: "capability"},
		{name: "addr with a space", in: strings.Replace(goodCard, "addr \n", "addr a b\n", 1), err: "addr"},
		{name: "CRLF line ends", in: strings.ReplaceAll(goodCard, "\n", "\r\n"), err: "version"},
		{name: "oversized", in: goodCard + strings.Repeat("x", maxFileSize), err: "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCard([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseCard(%q) = %+v, %v; want an error containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseCard(%q) = %+v, %v; want %+v, nil", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestFormatCardRejectsInvalid(t *testing.T) {
	ok := Card{Version: CardVersion, Rank: 1, LocalRank: 1, Pid: 7}
	tests := []struct {
		name string
		edit func(*Card)
	}{
		{"version 0", func(c *Card) { c.Version = 0 }},
		{"rank -1", func(c *Card) { c.Rank = -1 }},
		{"local rank 5000", func(c *Card) { c.LocalRank = 5000 }},
		{"pid 0", func(c *Card) { c.Pid = 0 }},
		{"newline in addr", func(c *Card) { c.Addr = "a\nrank 9" }},
		{"space in capability", func(c *Card) { c.Caps = []string{"s m"} }},
		{"too many capabilities", func(c *Card) { c.Caps = strings.Split(strings.Repeat("a,", maxCaps)+"a", ",") }},
	}
	if _, err := FormatCard(ok); err != nil {
		t.Fatalf("FormatCard(%+v) = %v; want success", ok, err)
	}
	for _, tt := range tests {
		c := ok
		tt.edit(&c)
		if data, err := FormatCard(c); err == nil {
			t.Errorf("%s: FormatCard(%+v) = %q, nil; want an error", tt.name, c, data)
		}
	}
}

const goodSegment = "gorun-segment 2\npath /dev/shm/gorun-0-12-ab.seg\nsize 16777216\nlayout 3\ntoken 0123456789abcdef0123456789abcdef\ndev 25\nino 18446744073709551615\n"

const goodToken = "0123456789abcdef0123456789abcdef"

func TestParseSegment(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Segment
		err  string
	}{
		{name: "valid", in: goodSegment, want: Segment{Version: 2, Path: "/dev/shm/gorun-0-12-ab.seg", Size: 16 << 20, Layout: 3, Token: goodToken, Dev: 25, Ino: 1<<64 - 1}},
		{name: "path with a space, layout max",
			in:   "gorun-segment 2\nino 18446744073709551615\nlayout 4294967295\ntoken " + goodToken + "\nsize 1\ndev 25\npath /tmp/a b/seg\n",
			want: Segment{Version: 2, Path: "/tmp/a b/seg", Size: 1, Layout: 1<<32 - 1, Token: goodToken, Dev: 25, Ino: 1<<64 - 1}},
		{name: "relative path", in: strings.Replace(goodSegment, "/dev/shm/", "shm/", 1), err: "absolute"},
		{name: "unclean path", in: strings.Replace(goodSegment, "/dev/shm/", "/dev/../shm/", 1), err: "clean"},
		{name: "root path", in: strings.Replace(goodSegment, "/dev/shm/gorun-0-12-ab.seg", "/", 1), err: "path"},
		{name: "size 0", in: strings.Replace(goodSegment, "size 16777216", "size 0", 1), err: "size"},
		{name: "size above 1 TiB", in: strings.Replace(goodSegment, "size 16777216", "size 1099511627777", 1), err: "size"},
		{name: "size with suffix", in: strings.Replace(goodSegment, "size 16777216", "size 16m", 1), err: "plain decimal"},
		{name: "layout above uint32", in: strings.Replace(goodSegment, "layout 3", "layout 4294967296", 1), err: "layout"},
		{name: "version 1", in: strings.Replace(goodSegment, "segment 2", "segment 1", 1), err: "version 1"},
		{name: "short token", in: strings.Replace(goodSegment, goodToken, goodToken[1:], 1), err: "token"},
		{name: "uppercase token", in: strings.Replace(goodSegment, goodToken, strings.ToUpper(goodToken), 1), err: "token"},
		{name: "missing token", in: strings.Replace(goodSegment, "token "+goodToken+"\n", "", 1), err: "token"},
		{name: "negative dev", in: strings.Replace(goodSegment, "dev 25", "dev -1", 1), err: "dev"},
		{name: "ino above uint64", in: strings.Replace(goodSegment, "ino 18446744073709551615", "ino 18446744073709551616", 1), err: "ino"},
		{name: "missing layout", in: strings.Replace(goodSegment, "layout 3\n", "", 1), err: "layout"},
		{name: "a card is not a segment", in: goodCard, err: "first line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSegment([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseSegment(%q) = %+v, %v; want an error containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSegment(%q) = %+v, %v; want %+v, nil", tt.in, got, err, tt.want)
			}
		})
	}
}

// FuzzParseCard: no input panics, and whatever parses formats back to a
// file that parses to the same card (the format's round-trip invariant).
func FuzzParseCard(f *testing.F) {
	f.Add([]byte(goodCard))
	f.Add([]byte("gorun-card 1\nrank 0\nlocal_rank 0\npid 1\ncaps \naddr \n")) // smallest valid card
	f.Add([]byte("gorun-card 1\nrank 0\nrank 0\n"))                            // duplicate key
	f.Add([]byte("gorun-card 01\n"))                                           // leading zero in version
	f.Add([]byte("gorun-card 1\nrank 9223372036854775808\n"))                  // int64 overflow
	f.Add([]byte("\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCard(data)
		if err != nil {
			return
		}
		out, err := FormatCard(c)
		if err != nil {
			t.Fatalf("ParseCard(%q) = %+v, which FormatCard rejects: %v", data, c, err)
		}
		c2, err := ParseCard(out)
		if err != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip of %q: got %+v, %v; want %+v", out, c2, err, c)
		}
	})
}

// FuzzParseSegment: as FuzzParseCard, for the segment descriptor.
func FuzzParseSegment(f *testing.F) {
	f.Add([]byte(goodSegment))
	f.Add([]byte("gorun-segment 2\npath /x\nsize 1\nlayout 0\ntoken " + goodToken + "\ndev 0\nino 0\n"))  // smallest valid descriptor
	f.Add([]byte("gorun-segment 2\npath /a/\nsize 1\nlayout 0\ntoken " + goodToken + "\ndev 0\nino 0\n")) // trailing slash: unclean
	f.Add([]byte("gorun-segment 2\npath /a\x00b\nsize 1\nlayout 0\ntoken " + goodToken + "\ndev 0\nino 0\n"))
	f.Add([]byte("gorun-segment 2\npath /a\nsize -1\nlayout -1\ntoken " + goodToken + "\ndev 0\nino 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSegment(data)
		if err != nil {
			return
		}
		out, err := FormatSegment(s)
		if err != nil {
			t.Fatalf("ParseSegment(%q) = %+v, which FormatSegment rejects: %v", data, s, err)
		}
		if s2, err := ParseSegment(out); err != nil || s2 != s {
			t.Fatalf("round trip of %q: got %+v, %v; want %+v", out, s2, err, s)
		}
	})
}
