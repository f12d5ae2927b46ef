package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// TestLocalHosts: hosts that name this machine (localhost, a loopback
// address) run the job here, without any launch agent, as without --host.
func TestLocalHosts(t *testing.T) {
	t.Parallel()
	hf := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(hf, []byte("# this machine only\nlocalhost slots=1\n127.0.0.1 slots=2\n"), 0o600)
	agent := []string{"--mca", "plm_ssh_agent", "/bin/false"} // any use of the agent fails the job
	for _, args := range [][]string{
		{"-np", "3", "--host", "localhost:2,127.0.0.1"},
		{"-np", "3", "--hostfile", hf},
	} {
		r := jobtest.Run(t, append(append(args, agent...), jobtest.Prog("hello"))...)
		if r.Code != 0 || strings.Count(r.Stdout, "hello from rank") != 3 {
			t.Errorf("gorun %q: exit %d, stdout %q, stderr %q; want 0 and three hellos", args, r.Code, r.Stdout, r.Stderr)
		}
	}
}
