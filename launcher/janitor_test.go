package launcher

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestJanitorCleanAfter: once gorun is gone, the janitor removes the
// session directory and then the per-user directory if that is empty, also
// when a rank removed the session directory first (and was killed before
// it removed the per-user directory); another job's session keeps the
// per-user directory.
func TestJanitorCleanAfter(t *testing.T) {
	const jobID = "4242-0badf00d"
	for _, tc := range []struct {
		name     string
		session  bool // the session directory still exists
		otherJob bool // another job's session directory is in the per-user directory
		wantUser bool // the per-user directory is left
	}{
		{"session left", true, false, false},
		{"session already removed", false, false, false},
		{"session left, another job", true, true, true},
		{"session already removed, another job", false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			userDir := filepath.Join(t.TempDir(), "gorun-"+strconv.Itoa(os.Getuid()))
			dir := filepath.Join(userDir, jobID)
			if err := os.MkdirAll(userDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.session {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{"launcher", "segment"} {
					if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			other := filepath.Join(userDir, "4243-0badf00e")
			if tc.otherJob {
				if err := os.Mkdir(other, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			cleanAfter(dir, jobID, "")
			if _, err := os.Lstat(dir); !os.IsNotExist(err) {
				t.Errorf("session directory %s left (Lstat: %v)", dir, err)
			}
			_, err := os.Lstat(userDir)
			if gotUser := err == nil; gotUser != tc.wantUser {
				t.Errorf("per-user directory left = %v (Lstat: %v); want %v", gotUser, err, tc.wantUser)
			}
			if _, err := os.Lstat(other); tc.otherJob && err != nil {
				t.Errorf("another job's session directory: %v; want it kept", err)
			}
		})
	}
}
