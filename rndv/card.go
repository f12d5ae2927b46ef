package rndv

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// CardVersion is the version of the business-card format written by this build.
const CardVersion = 1

// MaxRanks bounds the rank numbers a card may carry; the launcher refuses
// larger jobs.
const MaxRanks = 4096

// maxPid is the kernel's PID_MAX_LIMIT on 64-bit Linux.
const maxPid = 1 << 22

// maxCaps bounds the capability list of a card.
const maxCaps = 64

// Card is a rank's business card, published once at Init.
type Card struct {
	Version   int      // CardVersion
	Rank      int      // world rank
	LocalRank int      // index among the ranks on this machine
	Pid       int      // process id
	Caps      []string // capabilities, e.g. "sm", "cma" (process_vm_readv works)
	Addr      string   // reserved for a future network transport; empty today
}

var cardKeys = []string{"rank", "local_rank", "pid", "caps", "addr"}

// Validate checks every field of c against the format's rules.
func (c Card) Validate() error {
	switch {
	case c.Version != CardVersion:
		return fmt.Errorf("rndv: card version %d; this build reads version %d only", c.Version, CardVersion)
	case c.Rank < 0 || c.Rank >= MaxRanks:
		return fmt.Errorf("rndv: card rank %d; allowed: 0..%d", c.Rank, MaxRanks-1)
	case c.LocalRank < 0 || c.LocalRank >= MaxRanks:
		return fmt.Errorf("rndv: card local rank %d; allowed: 0..%d", c.LocalRank, MaxRanks-1)
	case c.Pid < 1 || c.Pid > maxPid:
		return fmt.Errorf("rndv: card pid %d; allowed: 1..%d", c.Pid, maxPid)
	case len(c.Caps) > maxCaps:
		return fmt.Errorf("rndv: card has %d capabilities; allowed: at most %d", len(c.Caps), maxCaps)
	case !validText(c.Addr, false):
		return fmt.Errorf("rndv: card addr %q; allowed: printable ASCII without spaces", c.Addr)
	}
	for _, cap := range c.Caps {
		if !validCap(cap) {
			return fmt.Errorf("rndv: card capability %q; allowed: 1..32 characters of a-z, 0-9, '_', '-'", cap)
		}
	}
	return nil
}

func validCap(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// FormatCard returns the file contents for c, which must be valid:
//
//	gorun-card 1
//	rank 3
//	local_rank 3
//	pid 4242
//	caps sm,cma
//	addr
func FormatCard(c Card) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gorun-card %d\n", c.Version)
	fmt.Fprintf(&b, "rank %d\nlocal_rank %d\npid %d\n", c.Rank, c.LocalRank, c.Pid)
	fmt.Fprintf(&b, "caps %s\naddr %s\n", strings.Join(c.Caps, ","), c.Addr)
	return []byte(b.String()), nil
}

// ParseCard reads a card written by FormatCard. It returns an error, never
// panics, on malformed input.
func ParseCard(data []byte) (Card, error) {
	f, err := parseFields(data, "gorun-card", cardKeys)
	if err != nil {
		return Card{}, fmt.Errorf("rndv: malformed card: %v", err)
	}
	if f.version != CardVersion {
		return Card{}, fmt.Errorf("rndv: card version %d; this build reads version %d only", f.version, CardVersion)
	}
	c := Card{Version: f.version, Addr: f.kv["addr"]}
	for _, x := range []struct {
		key string
		dst *int
		max int64
	}{
		{"rank", &c.Rank, MaxRanks - 1},
		{"local_rank", &c.LocalRank, MaxRanks - 1},
		{"pid", &c.Pid, maxPid},
	} {
		min := int64(0)
		if x.key == "pid" {
			min = 1
		}
		if *x.dst, err = parseDecimal(f.kv[x.key], min, x.max); err != nil {
			return Card{}, fmt.Errorf("rndv: card %s %q: %v", x.key, f.kv[x.key], err)
		}
	}
	if caps := f.kv["caps"]; caps != "" {
		c.Caps = strings.Split(caps, ",")
	}
	if err := c.Validate(); err != nil {
		return Card{}, err
	}
	return c, nil
}

// CardPath is the file of rank's card in dir.
func CardPath(dir string, rank int) string {
	return filepath.Join(dir, "card."+strconv.Itoa(rank))
}

// parseCardFast reads a card in exactly the form FormatCard writes (its
// keys in its order, values in canonical form) without ParseCard's general
// framing (a map and a string per line): the all-cards file holds one card
// per rank, and every rank reads it. ok is false for any other input,
// which ParseCard then reads (and explains when it is malformed). What it
// accepts, ParseCard accepts with the same result (FuzzParseCardFast).
func parseCardFast(data []byte) (c Card, ok bool) {
	if len(data) > maxFileSize {
		return Card{}, false
	}
	rest, ok := bytes.CutPrefix(data, []byte("gorun-card 1\n"))
	if !ok {
		return Card{}, false
	}
	// field cuts "key value\n" off rest; value without the newline.
	field := func(key string) ([]byte, bool) {
		var after []byte
		if after, ok = bytes.CutPrefix(rest, []byte(key)); !ok || len(after) == 0 || after[0] != ' ' {
			return nil, false
		}
		value, tail, found := bytes.Cut(after[1:], []byte("\n"))
		if !found {
			return nil, false
		}
		rest = tail
		return value, true
	}
	c.Version = CardVersion
	for _, x := range []struct {
		key string
		dst *int
	}{{"rank", &c.Rank}, {"local_rank", &c.LocalRank}, {"pid", &c.Pid}} {
		v, ok := field(x.key)
		if !ok || !plainDecimal(v) {
			return Card{}, false
		}
		for _, d := range v {
			*x.dst = *x.dst*10 + int(d-'0')
		}
	}
	caps, ok := field("caps")
	if !ok {
		return Card{}, false
	}
	if len(caps) > 0 {
		c.Caps = strings.Split(string(caps), ",")
	}
	addr, ok := field("addr")
	if !ok || len(rest) != 0 {
		return Card{}, false
	}
	c.Addr = string(addr)
	if c.Validate() != nil {
		return Card{}, false
	}
	return c, true
}

// plainDecimal reports whether b is 1 to 8 decimal digits without a
// leading zero (or just "0"): a value parseDecimal accepts, before its
// range check, and that cannot overflow an int.
func plainDecimal(b []byte) bool {
	if len(b) == 0 || len(b) > 8 || len(b) > 1 && b[0] == '0' {
		return false
	}
	for _, d := range b {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}
