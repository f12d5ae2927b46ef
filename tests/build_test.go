package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// TestBuildAndRun: "PROGRAM is ... a Go package directory / .go file,
// which gorun builds first", from the working directory's module.
func TestBuildAndRun(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"./tests/progs/hello", "tests/progs/hello", "tests/progs/hello/main.go"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			r := jobtest.Job{Args: []string{"-np", "2", target}, Dir: jobtest.ModuleRoot()}.Run(t)
			if r.Code != 0 || !strings.Contains(r.Stdout, "hello from rank 0 of 2\n") || !strings.Contains(r.Stdout, "hello from rank 1 of 2\n") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0 and both hellos", r.Code, r.Stdout, r.Stderr)
			}
		})
	}
}

// TestBuildFailure: a failed build shows the compiler's output, exits 2,
// and leaves nothing behind.
func TestBuildFailure(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "broken.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { undefinedThing() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := jobtest.Job{Args: []string{"-np", "2", src}, Dir: jobtest.ModuleRoot()}.Run(t)
	if r.Code != 2 || !strings.Contains(r.Stderr, "undefined: undefinedThing") || !strings.Contains(r.Stderr, "gorun: building "+src+" failed") {
		t.Errorf("exit %d, stderr %q; want 2, the compiler's message and gorun's line", r.Code, r.Stderr)
	}
}
