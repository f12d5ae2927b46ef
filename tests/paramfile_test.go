package tests

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// TestParamFileBounds (issue 16 item 13): gorun reads a parameter file
// with bounds. A FIFO (which would block gorun, deaf to Ctrl-C, until
// someone writes), a symbolic link to /dev/zero (which would eat memory
// without end), and a regular file above the size cap are each refused at
// once: exit 2, one line naming the file and the rule, no rank run.
func TestParamFileBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		plant func(path string) error
		want  string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }, "not a regular file (a named pipe)"},
		{"link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "not a regular file (a character device)"},
		{"2 MiB file", func(p string) error {
			return os.WriteFile(p, []byte(strings.Repeat("# a comment line, harmless but long\n", 2<<20/36)), 0o600)
		}, "at most 1048576"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			conf := filepath.Join(dir, "gorun-mca-params.conf")
			if err := tt.plant(conf); err != nil {
				t.Fatal(err)
			}
			markers := t.TempDir()
			r := jobtest.Job{Args: []string{"-np", "2", actor(), "marker", markers}, Dir: dir}.Run(t)
			want := "gorun: mca: parameter file " + conf + ": "
			if r.Code != 2 || strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(r.Stderr, want) || !strings.Contains(r.Stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and one line starting %q saying %q", r.Code, r.Stderr, want, tt.want)
			}
			if m, _ := os.ReadDir(markers); len(m) != 0 {
				t.Errorf("ranks ran: %v", m)
			}
		})
	}
}
