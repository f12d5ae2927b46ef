package tests

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/internal/lab"
	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// newSlurmLab is a 2-host namespace lab with Slurm up (skips where it
// cannot run: not root, no namespaces, Slurm not installable).
func newSlurmLab(t *testing.T) (*lab.Lab, *lab.Slurm) {
	t.Helper()
	l := lab.New(t, 2, filepath.Dir(jobtest.Gorun()))
	return l, l.StartSlurm(t)
}

// srun runs `srun ARGS` from h1 and returns its output and exit code.
func srun(t *testing.T, s *lab.Slurm, timeout time.Duration, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := s.Cmd(ctx, 1, "srun", args...)
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		code = -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
	}
	return string(out), code
}

// The done-when: srun --mpi=pmi2 -N2 -n4 of the ring example on two
// namespace hosts (PMI-2 wire-up, TCP between the hosts), then the p2p rules.
func TestSlurmPMI2(t *testing.T) {
	_, s := newSlurmLab(t)
	out, code := srun(t, s, 90*time.Second, "--mpi=pmi2", "-N2", "-n4", jobtest.Example("ring"))
	if code != 0 || !strings.Contains(out, "OK") {
		t.Fatalf("srun ring: exit %d\n%s\n%s", code, out, s.Logs())
	}
	for _, mode := range []string{"order", "wildcard", "probe", "ssend", "dup", "flood", "finalize"} {
		out, code := srun(t, s, 120*time.Second, "--mpi=pmi2", "-N2", "-n4", jobtest.Prog("p2p"), mode)
		if code != 0 || !strings.Contains(out, mode+" ok") {
			t.Errorf("srun p2p %s: exit %d\n%s", mode, code, out)
		}
	}
	// Without PMI, a multi-task step cannot wire up: a clear error.
	out, code = srun(t, s, 60*time.Second, "--mpi=none", "-N2", "-n2", jobtest.Example("ring"))
	if code == 0 || !strings.Contains(out, "use srun --mpi=pmi2") {
		t.Errorf("srun --mpi=none: exit %d; want a failure naming --mpi=pmi2:\n%s", code, out)
	}
}
