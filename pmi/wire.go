package pmi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits of one message. PMI-2's length field has six decimal digits.
const (
	MaxLineV1  = 64 << 10 // bytes of one PMI-1 line, newline included
	MaxBodyV2  = 999999   // bytes of one PMI-2 body, length field excluded
	maxKey     = 256      // bytes of one key
	lenFieldV2 = 6        // width of the PMI-2 length field
)

// Arg is one key=value pair of a message.
type Arg struct {
	Key, Val string
}

// Msg is one PMI command or response: the value of its leading "cmd" key
// and the pairs that follow it, in wire order.
type Msg struct {
	Cmd  string
	Args []Arg
}

// NewMsg builds a Msg from cmd and alternating keys and values.
// It panics on an odd number of kv strings (a programming error).
func NewMsg(cmd string, kv ...string) Msg {
	if len(kv)%2 != 0 {
		panic("pmi: NewMsg with an odd number of key/value strings")
	}
	m := Msg{Cmd: cmd, Args: make([]Arg, 0, len(kv)/2)}
	for i := 0; i < len(kv); i += 2 {
		m.Args = append(m.Args, Arg{kv[i], kv[i+1]})
	}
	return m
}

// Get returns the value of the first pair with key.
func (m Msg) Get(key string) (string, bool) {
	for _, a := range m.Args {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// Int returns the value of key as a decimal int, with an error naming the
// command and the key when it is missing or not an integer.
func (m Msg) Int(key string) (int, error) {
	v, ok := m.Get(key)
	if !ok {
		return 0, fmt.Errorf("pmi: %s: key %q missing", m.Cmd, key)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("pmi: %s: %s=%q is not an integer", m.Cmd, key, v)
	}
	return n, nil
}

// String renders m in PMI-1 form for logs and errors (no validation).
func (m Msg) String() string {
	var b strings.Builder
	b.WriteString("cmd=")
	b.WriteString(m.Cmd)
	for _, a := range m.Args {
		b.WriteByte(' ')
		b.WriteString(a.Key)
		b.WriteByte('=')
		b.WriteString(a.Val)
	}
	return b.String()
}

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("pmi: malformed message")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// validKey: 1..maxKey bytes of printable ASCII other than ' ', '=', ';'.
func validKey(k string) bool {
	if k == "" || len(k) > maxKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c > '~' || c == '=' || c == ';' {
			return false
		}
	}
	return true
}

// validValV1: printable ASCII without spaces ('=' allowed).
func validValV1(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// validValV2: any byte but NUL and newline.
func validValV2(v string) bool {
	return strings.IndexByte(v, 0) < 0 && strings.IndexByte(v, '\n') < 0
}

func checkMsg(m Msg, valOK func(string) bool, allowed string) error {
	if !validKey(m.Cmd) {
		return fmt.Errorf("pmi: command name %q; allowed: 1..%d printable characters other than space, '=' and ';'", m.Cmd, maxKey)
	}
	for _, a := range m.Args {
		if !validKey(a.Key) {
			return fmt.Errorf("pmi: %s: key %q; allowed: 1..%d printable characters other than space, '=' and ';'", m.Cmd, a.Key, maxKey)
		}
		if !valOK(a.Val) {
			return fmt.Errorf("pmi: %s: value of %s %q; allowed: %s", m.Cmd, a.Key, a.Val, allowed)
		}
	}
	return nil
}

// AppendV1 appends m's PMI-1 line (newline included) to dst. Values must be
// printable ASCII without spaces: PMI-1 has no escape.
func AppendV1(dst []byte, m Msg) ([]byte, error) {
	if err := checkMsg(m, validValV1, "printable ASCII without spaces"); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, "cmd="...)
	dst = append(dst, m.Cmd...)
	for _, a := range m.Args {
		dst = append(dst, ' ')
		dst = append(dst, a.Key...)
		dst = append(dst, '=')
		dst = append(dst, a.Val...)
	}
	dst = append(dst, '\n')
	if len(dst)-start > MaxLineV1 {
		return dst[:start], fmt.Errorf("pmi: %s: line of %d bytes; allowed: at most %d", m.Cmd, len(dst)-start, MaxLineV1)
	}
	return dst, nil
}

// ParseV1 decodes one PMI-1 line, with or without its newline. Pairs are
// separated by one or more spaces; a value runs to the next space and may
// contain '='. The first pair must be cmd.
func ParseV1(line []byte) (Msg, error) {
	if len(line) > MaxLineV1 {
		return Msg{}, malformed("PMI-1 line of %d bytes; allowed: at most %d", len(line), MaxLineV1)
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	var m Msg
	first := true
	for _, tok := range bytes.Fields(line) {
		k, v, ok := bytes.Cut(tok, []byte("="))
		if !ok || !validKey(string(k)) || !validValV1(string(v)) {
			return Msg{}, malformed("PMI-1 token %q; want key=value", tok)
		}
		if first {
			if string(k) != "cmd" {
				return Msg{}, malformed("PMI-1 line starts with %q; want cmd=NAME", tok)
			}
			if !validKey(string(v)) {
				return Msg{}, malformed("PMI-1 command name %q; want 1..%d printable characters other than '=' and ';'", v, maxKey)
			}
			m.Cmd, first = string(v), false
			continue
		}
		m.Args = append(m.Args, Arg{string(k), string(v)})
	}
	if first {
		return Msg{}, malformed("empty PMI-1 line")
	}
	return m, nil
}

// ReadV1 reads one PMI-1 line from r. A line longer than MaxLineV1 is an
// error (the rest of it is not consumed); io.EOF means a clean end before
// any byte of a line.
func ReadV1(r *bufio.Reader) (Msg, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxLineV1 {
			return Msg{}, malformed("PMI-1 line longer than %d bytes", MaxLineV1)
		}
		if err == nil {
			break
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(line) > 0 {
			return Msg{}, fmt.Errorf("pmi: connection closed in the middle of a PMI-1 line %q: %w", line, io.ErrUnexpectedEOF)
		}
		return Msg{}, err
	}
	return ParseV1(line)
}

// WriteV1 writes m's PMI-1 line to w in one Write.
func WriteV1(w io.Writer, m Msg) error {
	b, err := AppendV1(nil, m)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// AppendV2 appends m in PMI-2 framing (length field and body) to dst.
// A ';' in a value is written ";;"; values must not hold NUL or newline.
func AppendV2(dst []byte, m Msg) ([]byte, error) {
	if err := checkMsg(m, validValV2, "any bytes but NUL and newline"); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, "      "...) // length field, filled below
	dst = append(dst, "cmd="...)
	dst = append(dst, m.Cmd...)
	dst = append(dst, ';')
	for _, a := range m.Args {
		dst = append(dst, a.Key...)
		dst = append(dst, '=')
		for i := 0; i < len(a.Val); i++ {
			if a.Val[i] == ';' {
				dst = append(dst, ';')
			}
			dst = append(dst, a.Val[i])
		}
		dst = append(dst, ';')
	}
	n := len(dst) - start - lenFieldV2
	if n > MaxBodyV2 {
		return dst[:start], fmt.Errorf("pmi: %s: body of %d bytes; allowed: at most %d", m.Cmd, n, MaxBodyV2)
	}
	copy(dst[start:start+lenFieldV2], strconv.Itoa(n))
	return dst, nil
}

// ParseLenV2 decodes a PMI-2 length field: six bytes holding a decimal
// number padded with spaces on either side.
func ParseLenV2(field []byte) (int, error) {
	if len(field) != lenFieldV2 {
		return 0, malformed("PMI-2 length field of %d bytes; want %d", len(field), lenFieldV2)
	}
	s := strings.Trim(string(field), " ")
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, malformed("PMI-2 length field %q; want a decimal number padded with spaces", field)
	}
	n, _ := strconv.Atoi(s) // at most 6 digits: cannot overflow
	return n, nil
}

// ParseV2 decodes one PMI-2 body (without its length field). Pairs end in
// ';' (the last one may omit it); ";;" inside a value is one ';'. The first
// pair must be cmd.
func ParseV2(body []byte) (Msg, error) {
	if len(body) > MaxBodyV2 {
		return Msg{}, malformed("PMI-2 body of %d bytes; allowed: at most %d", len(body), MaxBodyV2)
	}
	var m Msg
	first := true
	var val []byte
	for i := 0; i < len(body); {
		eq := bytes.IndexByte(body[i:], '=')
		if eq < 0 {
			return Msg{}, malformed("PMI-2 body %q: pair at byte %d has no '='", clip(body), i)
		}
		key := string(body[i : i+eq])
		if !validKey(key) {
			return Msg{}, malformed("PMI-2 body %q: key %q at byte %d", clip(body), key, i)
		}
		i += eq + 1
		val = val[:0]
		for i < len(body) {
			c := body[i]
			if c == ';' {
				if i+1 < len(body) && body[i+1] == ';' {
					val = append(val, ';')
					i += 2
					continue
				}
				i++
				break
			}
			if c == 0 || c == '\n' {
				return Msg{}, malformed("PMI-2 body %q: value of %s holds byte %#x", clip(body), key, c)
			}
			val = append(val, c)
			i++
		}
		if first {
			if key != "cmd" || len(val) == 0 || !validKey(string(val)) {
				return Msg{}, malformed("PMI-2 body %q starts with %s=%q; want cmd=NAME", clip(body), key, val)
			}
			m.Cmd, first = string(val), false
			continue
		}
		m.Args = append(m.Args, Arg{key, string(val)})
	}
	if first {
		return Msg{}, malformed("empty PMI-2 body")
	}
	return m, nil
}

// clip shortens a body for an error message.
func clip(b []byte) []byte {
	if len(b) > 80 {
		return append(append([]byte(nil), b[:77]...), "..."...)
	}
	return b
}

// ReadV2 reads one PMI-2 message (length field and body) from r. io.EOF
// means a clean end before any byte of a message.
func ReadV2(r io.Reader) (Msg, error) {
	var field [lenFieldV2]byte
	if _, err := io.ReadFull(r, field[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return Msg{}, fmt.Errorf("pmi: connection closed in the middle of a PMI-2 length field: %w", err)
		}
		return Msg{}, err
	}
	n, err := ParseLenV2(field[:])
	if err != nil {
		return Msg{}, err
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Msg{}, fmt.Errorf("pmi: connection closed in the middle of a PMI-2 body of %d bytes: %w", n, err)
	}
	return ParseV2(body)
}

// WriteV2 writes m in PMI-2 framing to w in one Write.
func WriteV2(w io.Writer, m Msg) error {
	b, err := AppendV2(nil, m)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
