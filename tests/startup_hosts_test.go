package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/internal/lab"
	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// TestStartupAcrossHosts measures, when GORUN_STARTUP_RUNS=N is set, the
// start-to-exit time of an 8-rank hello on two namespace hosts (4 + 4):
// `gorun --host h1:4,h2:4` next to Open MPI's `mpirun --host h1:4,h2:4`
// with the same launch agent and a C hello, both started on h1, runs
// alternating. It reports medians (t.Log); it asserts nothing about time.
//
//	GORUN_STARTUP_RUNS=10 go test -run TestStartupAcrossHosts -v ./tests
func TestStartupAcrossHosts(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("GORUN_STARTUP_RUNS"))
	if runs < 1 {
		t.Skip("a measurement: set GORUN_STARTUP_RUNS=N to run it")
	}
	l := lab.New(t, 2, filepath.Dir(jobtest.Gorun()))
	helloC := filepath.Join(l.Dir, "hello-c")
	haveMPI := false
	if _, err := exec.LookPath("mpirun"); err == nil {
		src := filepath.Join(jobtest.ModuleRoot(), "tests", "startup", "hello.c")
		if out, err := exec.Command("mpicc", "-O2", "-o", helloC, src).CombinedOutput(); err == nil {
			haveMPI = true
		} else {
			t.Logf("mpicc: %v\n%s; measuring gorun only", err, out)
		}
	}
	cache := filepath.Join(l.Dir, "cache")
	gorunCmd := []string{"env", "XDG_CACHE_HOME=" + cache, jobtest.Gorun(), "--mca", "plm_ssh_agent", l.Agent(),
		"--mca", "btl_tcp_if_include", lab.Subnet, "-np", "8", "--host", "h1:4,h2:4", jobtest.Prog("hello")}
	mpiCmd := []string{"env", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", "mpirun",
		"--mca", "plm_rsh_agent", l.Agent(), "--mca", "btl", "self,vader,tcp", "--mca", "btl_tcp_if_include", lab.Subnet,
		"--mca", "oob_tcp_if_include", lab.Subnet, "-np", "8", "--host", "h1:4,h2:4", helloC}
	once := func(cmd []string) time.Duration {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		start := time.Now()
		out, err := l.Command(ctx, 1, cmd[0], cmd[1:]...).CombinedOutput()
		d := time.Since(start)
		if err != nil || strings.Count(string(out), "hello from rank") != 8 {
			t.Fatalf("%q: %v\n%s", cmd, err, out)
		}
		return d
	}
	once(gorunCmd) // warm-up: the helper reaches h2's cache
	if haveMPI {
		once(mpiCmd)
	}
	var g, m []time.Duration
	for range runs {
		g = append(g, once(gorunCmd))
		if haveMPI {
			m = append(m, once(mpiCmd))
		}
	}
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	t.Logf("gorun -np 8 --host h1:4,h2:4 hello (Go): median %v of %d runs %v", median(g).Round(time.Millisecond), runs, g)
	if haveMPI {
		t.Logf("mpirun -np 8 --host h1:4,h2:4 hello (C): median %v of %d runs %v", median(m).Round(time.Millisecond), runs, m)
		t.Logf("ratio gorun/mpirun: %.2f", float64(median(g))/float64(median(m)))
	}
}
