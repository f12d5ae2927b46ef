package jobtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// built holds the binaries Setup made.
var built struct {
	dir     string // holds gorun and one binary per tests/progs program
	modRoot string
}

// Setup builds ./cmd/gorun and ./tests/progs/... of the module containing
// the working directory, once, into a temporary directory. Call it from
// TestMain and call the returned cleanup after m.Run.
func Setup() (cleanup func(), err error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("jobtest: go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return nil, fmt.Errorf("jobtest: the working directory is not in a Go module")
	}
	built.modRoot = filepath.Dir(gomod)
	if built.dir, err = os.MkdirTemp("", "jobtest-bin-"); err != nil {
		return nil, err
	}
	cleanup = func() { os.RemoveAll(built.dir) }
	for _, b := range []struct{ target, dir string }{
		{"./cmd/gorun", ""}, {"./tests/progs/...", ""}, {"./examples/...", "examples"}, {"./bench/osu", ""},
	} {
		target := b.target
		cmd := exec.Command("go", "build", "-o", filepath.Join(built.dir, b.dir)+"/", target)
		cmd.Dir = built.modRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			cleanup()
			return nil, fmt.Errorf("jobtest: go build %s: %v\n%s", target, err, out)
		}
	}
	return cleanup, nil
}

// Gorun is the path of the built gorun command.
func Gorun() string { return filepath.Join(built.dir, "gorun") }

// Prog is the path of the built tests/progs/<name> program.
func Prog(name string) string { return filepath.Join(built.dir, name) }

// Example is the path of the built examples/<name> program.
func Example(name string) string { return filepath.Join(built.dir, "examples", name) }

// ModuleRoot is the directory holding go.mod.
func ModuleRoot() string { return built.modRoot }
