package mca

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// EnvResolved is the environment variable in which the launcher hands the
// Set it resolved (Set.Encode) to every rank; Load decodes it. It is not a
// parameter: Resolve ignores it.
const EnvResolved = "GORUN_MCA_RESOLVED"

// encodingHeader starts every encoding; the number is the format version.
const encodingHeader = "gorun-mca/1"

// Encode writes every parameter's name, source and value (as given) in a
// one-line text form that Decode reads back:
//
//	gorun-mca/1;NAME,SOURCE,VALUE;NAME,SOURCE,VALUE...
//
// sorted by name, each field query-escaped (net/url.QueryEscape), so any
// byte of a value survives and the result is a valid environment value.
// File line numbers are not kept.
func (s *Set) Encode() string {
	names := make([]string, 0, len(s.vals))
	for n, sv := range s.vals {
		if !sv.alias {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(encodingHeader)
	for _, n := range names {
		sv := s.vals[n]
		b.WriteString(";" + url.QueryEscape(n) + "," + url.QueryEscape(sv.src) + "," + url.QueryEscape(sv.v.raw))
	}
	return b.String()
}

// Decode reads an Encode result. The text comes from outside the process,
// so everything is checked and any fault is an error, never a panic: the
// header, the escaping, each name, each source (which must be "default",
// "flag", "file:PATH" or "env:GORUN_MCA_<that name>"), duplicates, and
// every value against its parameter (a *ParamError, wrapped).
//
// A name this registry does not know is skipped, and a registered parameter
// the text does not hold gets its default; both are reported as warnings
// (the launcher and the rank program were built with different components).
// Warnings the launcher already printed (unknown excluded components) are
// not repeated.
func (r *registry) Decode(enc string) (*Set, []string, error) {
	params := r.snapshot()
	parts := strings.Split(enc, ";")
	if parts[0] != encodingHeader {
		return nil, nil, fmt.Errorf("mca: %s does not start with %q (got %q); set by another gorun version?",
			EnvResolved, encodingHeader, clip(parts[0]))
	}
	s := newSet(len(params))
	var warns []string
	for i, part := range parts[1:] {
		name, src, val, err := decodeEntry(part, r.synonymOf)
		if err == nil {
			if _, dup := s.vals[name]; dup {
				err = fmt.Errorf("parameter %q appears twice", name)
			}
		}
		if err != nil {
			return nil, nil, &decodeError{entry: i + 1, err: err}
		}
		e, ok := params[name]
		if !ok {
			warns = append(warns, fmt.Sprintf("mca: %s holds parameter %q, unknown to this program; ignored", EnvResolved, name))
			continue
		}
		v, _, err := parseValue(&e.Param, val)
		if err != nil {
			return nil, nil, &decodeError{entry: i + 1, err: &ParamError{Name: name, Value: val, Source: src,
				Allowed: allowedText(&e.Param), Err: err}}
		}
		s.vals[name] = setValue{p: e.Param, v: v, src: src}
	}
	for name, e := range params {
		if _, ok := s.vals[name]; !ok {
			warns = append(warns, fmt.Sprintf("mca: %s lacks parameter %q; using its default", EnvResolved, name))
			s.vals[name] = setValue{p: e.Param, v: e.def, src: SourceDefault}
		}
	}
	finish(s, params)
	sort.Strings(warns)
	return s, warns, nil
}

// decodeEntry splits and unescapes one NAME,SOURCE,VALUE entry and checks
// the name and the source; an environment source may name the parameter or
// one of its deprecated names (synonymOf maps a deprecated name to its
// parameter).
func decodeEntry(part string, synonymOf func(string) (string, bool)) (name, src, val string, err error) {
	fields := strings.Split(part, ",")
	if len(fields) != 3 {
		return "", "", "", fmt.Errorf("%q has %d fields; want NAME,SOURCE,VALUE", clip(part), len(fields))
	}
	var out [3]string
	for j, f := range fields {
		if out[j], err = url.QueryUnescape(f); err != nil {
			return "", "", "", fmt.Errorf("%q: bad escaping: %v", clip(part), err)
		}
	}
	name, src, val = out[0], out[1], out[2]
	if !validName(name) {
		return "", "", "", fmt.Errorf("invalid parameter name %q", clip(name))
	}
	envName, isEnv := strings.CutPrefix(src, "env:"+EnvPrefix)
	switch {
	case src == SourceDefault, src == SourceFlag, isEnv && envName == name:
	case isEnv && validName(envName) && isSynonym(synonymOf, envName, name):
	case strings.HasPrefix(src, "file:") && len(src) > len("file:"):
	default:
		return "", "", "", fmt.Errorf("parameter %q: invalid source %q; want default, flag, file:PATH or env:%s%s",
			name, clip(src), EnvPrefix, name)
	}
	return name, src, val, nil
}

// isSynonym reports whether old is a deprecated name of name.
func isSynonym(synonymOf func(string) (string, bool), old, name string) bool {
	n, ok := synonymOf(old)
	return ok && n == name
}

// decodeError places an error at an entry of the encoding.
type decodeError struct {
	entry int // 1-based, after the header
	err   error
}

func (e *decodeError) Error() string {
	return fmt.Sprintf("mca: bad %s entry %d: %s", EnvResolved, e.entry, strings.TrimPrefix(e.err.Error(), "mca: "))
}

func (e *decodeError) Unwrap() error { return e.err }

// clip shortens s for an error message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
