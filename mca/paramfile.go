package mca

import (
	"errors"
	"io/fs"
	"os"
	"strings"
)

// Parameter files, weaker than flags and the environment. A missing file is
// fine; an unreadable or malformed one is an error naming the file (and line).
const (
	WorkDirFile = "gorun-mca-params.conf"  // in Inputs.WorkDir; stronger than HomeFile
	HomeFile    = ".gorun/mca-params.conf" // under Inputs.Home
)

// fileEntry is one "name = value" line of a parameter file.
type fileEntry struct {
	name, value string
	line        int // 1-based
}

// readParamFile reads and parses path; a file that does not exist gives no
// entries and no error.
func readParamFile(path string) ([]fileEntry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return parseParamFile(path, data)
}

// parseParamFile parses a parameter file's contents; path is used only in
// errors. Syntax, line by line ('\n'-separated):
//   - '#' starts a comment, anywhere on the line (so values cannot hold '#');
//   - a line that is blank after removing the comment is ignored;
//   - otherwise it is "name = value": name is everything before the first
//     '=', value everything after it, both trimmed of white space. There is
//     no quoting: quotes are part of the value. The name must be letters,
//     digits and '_'; the value may be empty (its type decides if that is
//     valid). A later line for the same name overrides an earlier one.
//
// A line without '=' or with a malformed name is a *FileError naming path
// and line that unwraps to ErrSyntax.
func parseParamFile(path string, data []byte) ([]fileEntry, error) {
	var out []fileEntry
	for i, line := range strings.Split(string(data), "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		eq := strings.IndexByte(line, '=')
		if eq < 0 {
			return nil, &FileError{Path: path, Line: i + 1,
				Err: syntaxErr(`missing "=" in %q; want "name = value"`, clip(line))}
		}
		name, val := strings.TrimSpace(line[:eq]), strings.TrimSpace(line[eq+1:])
		if !validName(name) {
			return nil, &FileError{Path: path, Line: i + 1,
				Err: syntaxErr(`invalid parameter name %q; want letters, digits and "_"`, clip(name))}
		}
		out = append(out, fileEntry{name: name, value: val, line: i + 1})
	}
	return out, nil
}

// formatParamFile writes entries back in the syntax parseParamFile reads.
func formatParamFile(entries []fileEntry) []byte {
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.name + " = " + e.value + "\n")
	}
	return []byte(b.String())
}
