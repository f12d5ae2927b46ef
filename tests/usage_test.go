package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// TestUsageErrors: usage errors, a missing program and a bad parameter
// exit 2 with one clear line, and no rank starts (the rank program would
// leave a marker file).
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string // the marker directory is appended to PROGRAM's args
		err  string
	}{
		{"-np 0", []string{"-np", "0", actor(), "marker"}, "gorun: -np 0: the number of ranks must be 1..4096"},
		{"-np 100000", []string{"-np", "100000", actor(), "marker"}, "gorun: -np 100000: the number of ranks must be 1..4096"},
		{"-np missing", []string{actor(), "marker"}, "gorun: -np N is required"},
		{"missing program", []string{"-np", "2", "./no-such-program"}, "gorun: program ./no-such-program not found"},
		{"non-executable program", []string{"-np", "2", "/proc/self/status"}, "is not executable (mode -r--r--r--)"},
		{"bad --mca value", []string{"-np", "2", "--mca", "btl", "carrier-pigeon", actor(), "marker"},
			`btl="carrier-pigeon" (from flag)`},
		{"bad timeout", []string{"-np", "2", "--timeout", "soon", actor(), "marker"}, `--timeout "soon"`},
		{"unknown option", []string{"-np", "2", "--frobnicate", actor(), "marker"}, "unknown flag: --frobnicate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			markers := t.TempDir()
			r := jobtest.Run(t, append(tt.args, markers)...)
			if r.Code != 2 || !strings.Contains(r.Stderr, tt.err) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.Code, r.Stderr, tt.err)
			}
			if m, _ := os.ReadDir(markers); len(m) != 0 {
				t.Errorf("ranks ran: %v", m)
			}
		})
	}
}

// TestBadMCAFromEnv: a bad value from the environment is as fatal as one
// from --mca.
func TestBadMCAFromEnv(t *testing.T) {
	t.Parallel()
	markers := t.TempDir()
	r := jobtest.Job{Args: []string{"-np", "2", actor(), "marker", markers}, Env: []string{"GORUN_MCA_btl=carrier-pigeon"}}.Run(t)
	if r.Code != 2 || !strings.Contains(r.Stderr, "env:GORUN_MCA_btl") {
		t.Errorf("exit %d, stderr %q; want 2 and the source env:GORUN_MCA_btl", r.Code, r.Stderr)
	}
	if m, _ := os.ReadDir(markers); len(m) != 0 {
		t.Errorf("ranks ran: %v", m)
	}
}

// TestUnknownMCAName: "An unknown name ... is a warning naming the closest
// known parameter; the run goes on."
func TestUnknownMCAName(t *testing.T) {
	t.Parallel()
	markers := t.TempDir()
	r := jobtest.Run(t, "-np", "2", "--mca", "launcher_base_verbos", "info", actor(), "marker", markers)
	if r.Code != 0 || !strings.Contains(r.Stderr, `"launcher_base_verbos"`) || !strings.Contains(r.Stderr, `"launcher_base_verbose"`) {
		t.Errorf("exit %d, stderr %q; want 0 and a warning naming launcher_base_verbose", r.Code, r.Stderr)
	}
	if m, _ := os.ReadDir(markers); len(m) != 2 {
		t.Errorf("markers %v; want one per rank", m)
	}
}

// TestSymlinkedSessionDir: a symbolic link planted where the per-user
// session directory goes is refused (exit 2, the path named) and its
// target is left alone.
func TestSymlinkedSessionDir(t *testing.T) {
	t.Parallel()
	tmp, target := t.TempDir(), t.TempDir()
	link := filepath.Join(tmp, "gorun-"+strconv.Itoa(os.Getuid()))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	p := jobtest.Job{Args: []string{"-np", "1", jobtest.Prog("hello")}, TMPDIR: tmp}.Start(t)
	r := p.Wait()
	os.Remove(link) // for the cleanup check
	if r.Code != 2 || !strings.Contains(r.Stderr, link+" is a symbolic link") {
		t.Errorf("exit %d, stderr %q; want 2 and an error naming %s", r.Code, r.Stderr, link)
	}
	if m, _ := os.ReadDir(target); len(m) != 0 {
		t.Errorf("gorun wrote into the link's target: %v", m)
	}
}
