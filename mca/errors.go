package mca

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels wrapped by every *ParamError and *FileError; match with errors.Is.
var (
	ErrSyntax     = errors.New("mca: invalid syntax")     // the value cannot be read as its type
	ErrRange      = errors.New("mca: value out of range") // it reads, but lies outside Min..Max
	ErrNotAllowed = errors.New("mca: value not allowed")  // not one of Allowed (enum, selector)
)

// ParamError reports an invalid value for a known parameter. Its text names
// the parameter, the value, where the value came from and what is allowed:
//
//	mca: btl_sm_eager_limit="64q" (from flag): invalid size; allowed: bytes or a k/m/g suffix (e.g. 4096, 64k, 1m), 0..1g
type ParamError struct {
	Name    string // parameter name
	Value   string // the value as given
	Source  string // "flag", "env:GORUN_MCA_<name>", "file:PATH" or "default"; "" for a Config built without mca
	Line    int    // line in the file for a "file:" source; 0 otherwise
	Allowed string // what the parameter accepts, in words
	Err     error  // the reason; unwraps to ErrSyntax, ErrRange or ErrNotAllowed
}

func (e *ParamError) Error() string {
	msg := fmt.Sprintf("mca: %s=%q", e.Name, clip(e.Value))
	if e.Source != "" {
		msg += " (from " + sourceText(e.Source, e.Line) + ")"
	}
	msg += fmt.Sprintf(": %v", e.Err)
	if e.Allowed != "" {
		msg += "; allowed: " + e.Allowed
	}
	return msg
}

// Unwrap returns the reason, which itself unwraps to a sentinel.
func (e *ParamError) Unwrap() error { return e.Err }

// FileError reports a parameter file that cannot be read or is malformed.
type FileError struct {
	Path string // the file
	Line int    // 1-based line of a syntax error; 0 when the file could not be read
	Err  error  // the reason; a syntax error unwraps to ErrSyntax
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("mca: %s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("mca: parameter file %s: %v", e.Path, e.Err)
}

// Unwrap returns the reason.
func (e *FileError) Unwrap() error { return e.Err }

// reason is a human reason ("invalid size") that unwraps to a sentinel, so
// ParamError.Error reads well while errors.Is still works.
type reason struct {
	msg      string
	sentinel error
}

func (r *reason) Error() string { return r.msg }
func (r *reason) Unwrap() error { return r.sentinel }

func syntaxErr(format string, args ...any) error {
	return &reason{fmt.Sprintf(format, args...), ErrSyntax}
}

func rangeErr(format string, args ...any) error {
	return &reason{fmt.Sprintf(format, args...), ErrRange}
}

func notAllowedErr(format string, args ...any) error {
	return &reason{fmt.Sprintf(format, args...), ErrNotAllowed}
}

// clipSource shortens the name inside an "env:GORUN_MCA_<name>" source for
// an error message; other sources are ours and kept whole.
func clipSource(src string) string {
	if name, ok := strings.CutPrefix(src, "env:"+EnvPrefix); ok {
		return "env:" + EnvPrefix + clip(name)
	}
	return src
}
