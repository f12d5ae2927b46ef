package rndv

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// maxFileSize bounds what a reader accepts, so a garbage file cannot make a
// reader allocate without limit. A card with 64 capabilities is ~1 KiB.
const maxFileSize = 16 << 10

// fields is a parsed file: its kind line's version and its key/value lines.
type fields struct {
	version int
	kv      map[string]string
}

// parseFields reads "<kind> <version>" then "key value" lines. It checks
// only the framing: the kind word, a decimal version, keys from known, each
// at most once. Field values are checked by the caller.
func parseFields(data []byte, kind string, known []string) (fields, error) {
	if len(data) > maxFileSize {
		return fields{}, fmt.Errorf("%d bytes; allowed: at most %d", len(data), maxFileSize)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		return fields{}, fmt.Errorf("does not end in a newline (truncated?)")
	}
	lines := strings.Split(string(data[:len(data)-1]), "\n")
	head := strings.Split(lines[0], " ")
	if len(head) != 2 || head[0] != kind {
		return fields{}, fmt.Errorf("first line %q; want %q followed by a version", lines[0], kind)
	}
	v, err := parseDecimal(head[1], 1, 1<<20)
	if err != nil {
		return fields{}, fmt.Errorf("version %q: %v", head[1], err)
	}
	f := fields{version: v, kv: make(map[string]string, len(known))}
	for i, line := range lines[1:] {
		key, value, _ := strings.Cut(line, " ")
		if !contains(known, key) {
			return fields{}, fmt.Errorf("line %d: unknown key %q; allowed: %s", i+2, key, strings.Join(known, ", "))
		}
		if _, dup := f.kv[key]; dup {
			return fields{}, fmt.Errorf("line %d: key %q given twice", i+2, key)
		}
		f.kv[key] = value
	}
	for _, key := range known {
		if _, ok := f.kv[key]; !ok {
			return fields{}, fmt.Errorf("key %q missing", key)
		}
	}
	return f, nil
}

// parseDecimal accepts a plain decimal integer in min..max: no sign, no
// leading zeros, no spaces.
func parseDecimal(s string, min, max int64) (int, error) {
	n, err := parseDecimal64(s, min, max)
	return int(n), err
}

func parseDecimal64(s string, min, max int64) (int64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a plain decimal integer")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < min || n > max {
		return 0, fmt.Errorf("out of range; allowed: %d..%d", min, max)
	}
	return n, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// validText reports whether s can be stored as one field value: printable
// ASCII without newlines; spaces only where allowSpace.
func validText(s string, allowSpace bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c > '~' || (c == ' ' && !allowSpace) {
			return false
		}
	}
	return true
}
