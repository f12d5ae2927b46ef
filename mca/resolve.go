package mca

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// EnvPrefix starts every environment variable that sets a parameter:
// GORUN_MCA_<name>=<value>, name case-sensitive as declared.
const EnvPrefix = "GORUN_MCA_"

// Inputs are everything Resolve reads besides the registry.
type Inputs struct {
	Flags   [][2]string // --mca NAME VALUE pairs in the order given; a later one overrides an earlier
	Environ []string    // "KEY=VALUE" entries, as os.Environ returns them
	WorkDir string      // directory holding WorkDirFile; "" skips that file
	Home    string      // home directory holding HomeFile; "" skips that file
}

// assignment is one value for one name from one source.
type assignment struct {
	name, raw, src string
	line           int
}

// Resolve computes the Set of the default registry; see (*registry).Resolve.
func Resolve(in Inputs) (*Set, []string, error) { return defaultRegistry.Resolve(in) }

// Resolve computes every registered parameter's value from in: flags, then
// GORUN_MCA_<name> environment variables, then the working-directory file,
// then the home file, then the default (strongest first).
//
// Every value from every source is validated, even one a stronger source
// overrides; the first invalid one, checking sources strongest first (flags
// in the order given, env by name, file lines in order), is returned as a
// *ParamError and no Set. A file that cannot be read or is malformed is a
// *FileError. Values that are each valid but break a Component's Rule are
// a *RuleError. A deprecated name sets its parameter, with a warning.
// Unknown names and selectors excluding unknown components are
// warnings (each line reads "mca: ..."); they are returned with the Set, or
// with the error as far as they were collected.
func (r *registry) Resolve(in Inputs) (*Set, []string, error) {
	params := r.snapshot()

	var flags, env []assignment
	for _, f := range in.Flags {
		flags = append(flags, assignment{name: f[0], raw: f[1], src: SourceFlag})
	}
	env = envAssignments(in.Environ)

	var files [2][]assignment // [0] working directory, [1] home
	for i, path := range []string{dirFile(in.WorkDir, WorkDirFile), dirFile(in.Home, HomeFile)} {
		if path == "" {
			continue
		}
		entries, err := readParamFile(path)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range entries {
			files[i] = append(files[i], assignment{name: e.name, raw: e.value, src: "file:" + path, line: e.line})
		}
	}

	layers := [][]assignment{flags, env, files[0], files[1]} // strongest first
	var warns []string
	parsed := make([][]setValue, len(layers))
	for li, layer := range layers {
		for _, a := range layer {
			if name, ok := r.synonymOf(a.name); ok {
				warns = append(warns, fmt.Sprintf("mca: %s (from %s) is deprecated; use %s", clip(a.name), clipSource(a.src), name))
				a.name = name
			}
			e, ok := params[a.name]
			if !ok {
				warns = append(warns, r.unknownWarning(a.name, a.src))
				continue
			}
			v, w, err := parseValue(&e.Param, a.raw)
			for _, msg := range w {
				warns = append(warns, fmt.Sprintf("mca: %s=%q (from %s): %s", clip(a.name), clip(a.raw), clipSource(a.src), msg))
			}
			if err != nil {
				return nil, warns, &ParamError{Name: a.name, Value: a.raw, Source: a.src, Line: a.line,
					Allowed: allowedText(&e.Param), Err: err}
			}
			parsed[li] = append(parsed[li], setValue{p: e.Param, v: v, src: a.src, line: a.line})
		}
	}

	s := newSet(len(params))
	for name, e := range params {
		s.vals[name] = setValue{p: e.Param, v: e.def, src: SourceDefault}
	}
	for li := len(parsed) - 1; li >= 0; li-- { // weakest first; within a layer, later wins
		for _, sv := range parsed[li] {
			s.vals[sv.p.Name] = sv
		}
	}
	finish(s, params)
	if err := r.check(s); err != nil {
		return nil, warns, err
	}
	return s, warns, nil
}

// dirFile joins dir and name, or returns "" when dir is "".
func dirFile(dir, name string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, name)
}

// envAssignments picks the GORUN_MCA_<name> entries of environ, sorted by
// name; for a name given twice the later entry wins. EnvResolved is not a
// parameter and is skipped.
func envAssignments(environ []string) []assignment {
	byName := make(map[string]string)
	for _, kv := range environ {
		key, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(key, EnvPrefix) || key == EnvResolved {
			continue
		}
		byName[strings.TrimPrefix(key, EnvPrefix)] = val
	}
	out := make([]assignment, 0, len(byName))
	for name, val := range byName {
		out = append(out, assignment{name: name, raw: val, src: "env:" + EnvPrefix + name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
