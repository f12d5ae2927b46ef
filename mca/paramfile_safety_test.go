package mca

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadParamFileBounds: readParamFile reads only a regular file of this
// user (or root) that others cannot write, of at most MaxFileSize bytes,
// and never blocks: a FIFO without a writer, /dev/zero behind a symbolic
// link, a directory, a huge file and a world-writable file are each
// refused at once with a *FileError naming the file and the rule.
func TestReadParamFileBounds(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	if err := syscall.Mkfifo(path("fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", path("zero"))
	os.Mkdir(path("dir"), 0o700)
	big, _ := os.Create(path("big"))
	big.Truncate(MaxFileSize + 1)
	big.Close()
	os.WriteFile(path("open"), []byte("btl = self\n"), 0o600)
	os.Chmod(path("open"), 0o666)
	os.WriteFile(path("good"), []byte("btl = self\n"), 0o600)
	os.Symlink(path("good"), path("link-to-good"))
	tests := []struct {
		name, want string // want "": accepted
	}{
		{"fifo", "not a regular file"},
		{"zero", "not a regular file"},
		{"dir", "not a regular file"},
		{"big", "at most 1048576"},
		{"open", "writable by others"},
		{"good", ""},
		{"link-to-good", ""},
		{"missing", ""},
	}
	for _, tt := range tests {
		done := make(chan error, 1)
		go func() {
			_, err := readParamFile(path(tt.name))
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: readParamFile still blocked after 30 s", tt.name)
		}
		var fe *FileError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v; want it read", tt.name, err)
		case tt.want != "" && (!errors.As(err, &fe) || fe.Path != path(tt.name) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v; want a *FileError for %s saying %q", tt.name, err, path(tt.name), tt.want)
		}
	}
}

// TestCheckParamFileOwner: a file owned by another user is refused, one of
// root or of the user is read.
func TestCheckParamFileOwner(t *testing.T) {
	f := filepath.Join(t.TempDir(), "conf")
	os.WriteFile(f, nil, 0o644)
	fi, err := os.Stat(f)
	if err != nil {
		t.Fatal(err)
	}
	owner := int(fi.Sys().(*syscall.Stat_t).Uid)
	if err := checkParamFile(fi, owner); err != nil {
		t.Errorf("own file: %v", err)
	}
	if err := checkParamFile(fi, owner+4242); owner != 0 && err == nil {
		t.Errorf("a file of uid %d accepted for uid %d", owner, owner+4242)
	} else if owner == 0 && err != nil {
		t.Errorf("a file of root refused: %v", err)
	}
}
