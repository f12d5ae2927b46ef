package tests

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// TestRankProgramsDoNotLinkTheLauncher: a rank program links the user API
// and what it needs inside a rank (jobenv), never the launcher.
func TestRankProgramsDoNotLinkTheLauncher(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-deps", "./examples/ring")
	cmd.Dir = jobtest.ModuleRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, d := range deps {
		if d == "github.com/gorun-mpi/gorun/launcher" {
			t.Errorf("examples/ring links %s", d)
		}
	}
	if !strings.Contains(string(out), "github.com/gorun-mpi/gorun/jobenv\n") {
		t.Errorf("examples/ring does not link jobenv; deps:\n%s", out)
	}
}
