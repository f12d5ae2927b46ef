package rndv

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// SegmentVersion is the version of the segment-descriptor format
// (2: the creator's token and the file's device and inode).
const SegmentVersion = 2

// TokenLen is the length of Segment.Token: 32 lowercase hex digits.
const TokenLen = 32

// MaxSegmentSize bounds Segment.Size (1 TiB): far above any real segment,
// low enough that a corrupt size is caught before anyone maps it.
const MaxSegmentSize = 1 << 40

// segmentFile is the descriptor's name in the session directory.
const segmentFile = "segment"

// Segment describes the shared-memory segment created by local rank 0.
type Segment struct {
	Version int    // SegmentVersion
	Path    string // file backing the segment (in /dev/shm or the session dir)
	Size    int64  // bytes
	Layout  uint32 // layout version of the segment's contents (mpool's)

	// Identity of the file local rank 0 created: the random token it wrote
	// into the segment's header (TokenLen hex digits) and the file's device
	// and inode numbers. An attacher maps the file only when all three match,
	// so a file put in the segment's place is refused. The descriptor itself
	// lives in the session directory, which only the job's user can write.
	Token    string
	Dev, Ino uint64
}

var segmentKeys = []string{"path", "size", "layout", "token", "dev", "ino"}

// Validate checks every field of s against the format's rules.
func (s Segment) Validate() error {
	switch {
	case s.Version != SegmentVersion:
		return fmt.Errorf("rndv: segment descriptor version %d; this build reads version %d only", s.Version, SegmentVersion)
	case !filepath.IsAbs(s.Path) || filepath.Clean(s.Path) != s.Path || s.Path == "/" || len(s.Path) > 4096 || !validText(s.Path, true):
		return fmt.Errorf("rndv: segment path %q; allowed: a clean absolute file path of printable ASCII", s.Path)
	case s.Size < 1 || s.Size > MaxSegmentSize:
		return fmt.Errorf("rndv: segment size %d; allowed: 1..%d", s.Size, int64(MaxSegmentSize))
	case !validToken(s.Token):
		return fmt.Errorf("rndv: segment token %q; allowed: %d lowercase hex digits", s.Token, TokenLen)
	}
	return nil
}

// FormatSegment returns the descriptor's file contents for s, which must be
// valid:
//
//	gorun-segment 2
//	path /dev/shm/gorun-1000-4242-9f3a01c2.seg
//	size 16777216
//	layout 3
//	token 0f1e2d3c4b5a69788796a5b4c3d2e1f0
//	dev 25
//	ino 1187
func FormatSegment(s Segment) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gorun-segment %d\npath %s\nsize %d\nlayout %d\ntoken %s\ndev %d\nino %d\n",
		s.Version, s.Path, s.Size, s.Layout, s.Token, s.Dev, s.Ino)
	return []byte(b.String()), nil
}

// ParseSegment reads a descriptor written by FormatSegment. It returns an
// error, never panics, on malformed input.
func ParseSegment(data []byte) (Segment, error) {
	f, err := parseFields(data, "gorun-segment", segmentKeys)
	if err != nil {
		return Segment{}, fmt.Errorf("rndv: malformed segment descriptor: %v", err)
	}
	if f.version != SegmentVersion {
		return Segment{}, fmt.Errorf("rndv: segment descriptor version %d; this build reads version %d only", f.version, SegmentVersion)
	}
	s := Segment{Version: f.version, Path: f.kv["path"]}
	if s.Size, err = parseDecimal64(f.kv["size"], 1, MaxSegmentSize); err != nil {
		return Segment{}, fmt.Errorf("rndv: segment size %q: %v", f.kv["size"], err)
	}
	layout, err := parseDecimal64(f.kv["layout"], 0, 1<<32-1)
	if err != nil {
		return Segment{}, fmt.Errorf("rndv: segment layout %q: %v", f.kv["layout"], err)
	}
	s.Layout = uint32(layout)
	s.Token = f.kv["token"]
	for _, x := range []struct {
		key string
		dst *uint64
	}{{"dev", &s.Dev}, {"ino", &s.Ino}} {
		v, err := parseUint64(f.kv[x.key])
		if err != nil {
			return Segment{}, fmt.Errorf("rndv: segment %s %q: %v", x.key, f.kv[x.key], err)
		}
		*x.dst = v
	}
	if err := s.Validate(); err != nil {
		return Segment{}, err
	}
	return s, nil
}

// SegmentPath is the descriptor's file in dir.
func SegmentPath(dir string) string { return filepath.Join(dir, segmentFile) }

// rankOfName returns the rank in a "<prefix><rank>" file name ("card.3",
// "gone.12"); the rank must be written canonically (no sign, no leading zero).
func rankOfName(prefix, name string) (int, bool) {
	s, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	r, err := strconv.Atoi(s)
	if err != nil || r < 0 || strconv.Itoa(r) != s {
		return 0, false
	}
	return r, true
}

func validToken(s string) bool {
	if len(s) != TokenLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// parseUint64 accepts a plain decimal uint64: no sign, no leading zeros.
func parseUint64(s string) (uint64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a plain decimal integer")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("out of range; allowed: 0..%d", uint64(1<<64-1))
	}
	return n, nil
}
