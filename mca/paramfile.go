package mca

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
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

// MaxFileSize bounds a parameter file: a larger one is refused unread.
const MaxFileSize = 1 << 20

// readParamFile reads and parses path; a file that does not exist gives no
// entries and no error. Like ssh with its configuration, it trusts only a
// file that nobody else could have written, and reads it with bounds:
//   - it must be a regular file (after symbolic links): a FIFO, a device
//     (/dev/zero) or a directory is refused, and opening never blocks
//     (O_NONBLOCK: a FIFO without a writer would wait forever);
//   - it must be owned by this user or root, and not writable by others:
//     anyone else could point the job's shared memory at their files;
//   - it may hold at most MaxFileSize bytes.
func readParamFile(path string) ([]fileEntry, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	if err := checkParamFile(fi, os.Geteuid()); err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	if len(data) > MaxFileSize {
		return nil, &FileError{Path: path, Err: fmt.Errorf("larger than %d bytes; a parameter file may hold at most that", MaxFileSize)}
	}
	return parseParamFile(path, data)
}

// checkParamFile applies readParamFile's rules to an opened file of user uid.
func checkParamFile(fi fs.FileInfo, uid int) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%s); refusing to read it: a parameter file must be a regular file", fileKind(fi.Mode()))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid && st.Uid != 0 {
		return fmt.Errorf("owned by uid %d, neither this user (uid %d) nor root; refusing to read it: another user could set this job's parameters (remove it, or chown it)",
			st.Uid, uid)
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return fmt.Errorf("mode %04o, writable by others; refusing to read it: anyone could set this job's parameters (chmod o-w it)", fi.Mode().Perm())
	}
	if fi.Size() > MaxFileSize {
		return fmt.Errorf("%d bytes; a parameter file may hold at most %d", fi.Size(), MaxFileSize)
	}
	return nil
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

// fileKind names the type of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "type " + m.Type().String()
}
