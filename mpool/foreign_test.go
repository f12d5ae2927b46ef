package mpool_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/internal/testuser"
	"github.com/gorun-mpi/gorun/mpool"
)

// TestOpenRefusesForeignFile: an attacher maps only the file local rank 0
// created. Each case puts something else at the segment's path, as a
// hostile local user (a second user made by the test) or an accident
// could, and Open must refuse it with ErrForeign naming the reason.
func TestOpenRefusesForeignFile(t *testing.T) {
	other := testuser.New(t)
	l := plan(t, 2, small)
	tests := []struct {
		name   string
		attack func(t *testing.T, path string, s *mpool.Segment) mpool.Identity
		want   string
	}{
		{"symbolic link to the real file", func(t *testing.T, path string, s *mpool.Segment) mpool.Identity {
			real := path + ".real"
			os.Rename(path, real)
			os.Symlink(real, path)
			return s.ID
		}, "symbolic link"},
		{"owned by another user", func(t *testing.T, path string, s *mpool.Segment) mpool.Identity {
			other.Chown(t, path)
			return s.ID
		}, "owned by uid"},
		{"readable by others", func(t *testing.T, path string, s *mpool.Segment) mpool.Identity {
			os.Chmod(path, 0o644)
			return s.ID
		}, "mode 0644"},
		{"replaced by a copy (another inode)", func(t *testing.T, path string, s *mpool.Segment) mpool.Identity {
			data, _ := os.ReadFile(path)
			tmp := path + ".copy"
			if err := os.WriteFile(tmp, data, 0o600); err != nil {
				t.Fatal(err)
			}
			os.Rename(tmp, path)
			return s.ID
		}, "was replaced"},
		{"another user's copy renamed over it", func(t *testing.T, path string, s *mpool.Segment) mpool.Identity {
			data, _ := os.ReadFile(path)
			tmp := path + ".evil"
			os.WriteFile(tmp, data, 0o600)
			other.Chown(t, tmp)
			os.Rename(tmp, path)
			return s.ID
		}, "owned by uid"},
		{"another token", func(t *testing.T, path string, s *mpool.Segment) mpool.Identity {
			id := s.ID
			id.Token[0] ^= 1
			return id
		}, "token differs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), mpool.FileName("j1", "t1"))
			s, err := mpool.Create(path, l)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			id := tt.attack(t, path, s)
			seg, err := mpool.Open(path, l, id)
			if err == nil {
				seg.Close()
			}
			if !errors.Is(err, mpool.ErrForeign) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open = %v; want ErrForeign mentioning %q", err, tt.want)
			}
		})
	}
	// The file as created opens.
	path := filepath.Join(t.TempDir(), mpool.FileName("j1", "t1"))
	s, err := mpool.Create(path, l)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("created with mode %v; want 0600", fi.Mode().Perm())
	}
	seg, err := mpool.Open(path, l, s.ID)
	if err != nil {
		t.Fatalf("Open of the genuine file: %v", err)
	}
	seg.Close()
}

// TestCreateRefusesExistingPath: a file or symbolic link planted at the
// name is never opened or followed.
func TestCreateRefusesExistingPath(t *testing.T) {
	dir := t.TempDir()
	l := plan(t, 2, small)
	target := filepath.Join(dir, "victim")
	os.WriteFile(target, []byte("keep"), 0o600)
	link := filepath.Join(dir, "link.seg")
	os.Symlink(target, link)
	if s, err := mpool.Create(link, l); err == nil {
		s.Close()
		t.Fatal("Create through a planted symbolic link succeeded")
	}
	if data, _ := os.ReadFile(target); string(data) != "keep" {
		t.Errorf("the link's target now holds %q", data)
	}
}

// TestCheckBackingDir: a backing directory another user could write into
// (without the sticky bit) or owns is refused, naming the directory and why.
func TestCheckBackingDir(t *testing.T) {
	other := testuser.New(t)
	mk := func(mode os.FileMode, owned bool) string {
		d := filepath.Join(t.TempDir(), "backing")
		os.Mkdir(d, 0o700)
		os.Chmod(d, mode)
		if owned {
			other.Chown(t, d)
		}
		return d
	}
	tests := []struct {
		name string
		dir  string
		want string // "" : accepted
	}{
		{"private", mk(0o700, false), ""},
		{"world-writable with sticky bit", mk(0o777|os.ModeSticky, false), ""},
		{"missing", filepath.Join(t.TempDir(), "missing"), ""},
		{"world-writable without sticky bit", mk(0o777, false), "writable by others without the sticky bit"},
		{"owned by another user", mk(0o755, true), "owned by uid " + itoa(other.Uid)},
		{"another user's sticky directory", mk(0o777|os.ModeSticky, true), "owned by uid"},
	}
	for _, tt := range tests {
		err := mpool.CheckBackingDir(tt.dir)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.dir)) {
			t.Errorf("%s: CheckBackingDir = %v; want %q", tt.name, err, tt.want)
		}
		if tt.want != "" {
			if _, err := mpool.BackingDir(tt.dir, "/session", nil); err == nil {
				t.Errorf("%s: BackingDir accepted it", tt.name)
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
