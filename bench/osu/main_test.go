package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunUsage(t *testing.T) {
	tests := []struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{[]string{"-h"}, 0, "usage: gorun -np 2 osu MODE", ""},
		{nil, 2, "", "osu: missing MODE\n(osu -h for help)"},
		{[]string{"nope"}, 2, "", `osu: unknown mode "nope"`},
		{[]string{"plot", "--plot", filepath.Join(t.TempDir(), "p.svg"), "--overlay", "does-not-exist.csv"}, 1, "", "does-not-exist.csv"},
	}
	for _, tt := range tests {
		var out, errOut strings.Builder
		code := run(tt.args, &out, &errOut)
		if code != tt.wantCode || !strings.Contains(out.String(), tt.wantStdout) || !strings.Contains(errOut.String(), tt.wantStderr) {
			t.Errorf("run(%q) = %d, stdout %q, stderr %q; want %d, stdout with %q, stderr with %q",
				tt.args, code, out.String(), errOut.String(), tt.wantCode, tt.wantStdout, tt.wantStderr)
		}
	}
}

// Mode plot draws saved runs without a job.
func TestRunPlotMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "both.svg")
	var out, errOut strings.Builder
	code := run([]string{"plot", "--plot", path, "--overlay", "testdata/gorun_lat.csv", "--overlay", "testdata/openmpi_lat.txt"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("run(plot) = %d, stderr %q", code, errOut.String())
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("plot file: %v", err)
	}
}

// runSingleton runs osu with args in a child process (a fresh process, since
// Init can follow Finalize only once), outside gorun: a singleton world.
func runSingleton(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSingleton$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GORUN_") { // not a rank of a job: a singleton
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "OSU_TEST_ARGS="+strings.Join(args, "\x1f"))
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// TestHelperSingleton is the child of runSingleton.
func TestHelperSingleton(t *testing.T) {
	args, ok := os.LookupEnv("OSU_TEST_ARGS")
	if !ok {
		t.Skip("helper process for runSingleton")
	}
	os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

// A 2-rank mode started alone says how to run it and fails.
func TestSingletonNeedsTwoRanks(t *testing.T) {
	out, code := runSingleton(t, "lat")
	if code != 1 || !strings.Contains(out, "mode lat needs exactly 2 ranks, got 1 (run it as: gorun -np 2 osu lat)") {
		t.Errorf("osu lat alone: exit %d, output %q; want 1 and the 2-rank message", code, out)
	}
}

// ring alone passes the token to itself (Send to self, then Recv).
func TestSingletonRing(t *testing.T) {
	out, code := runSingleton(t, "ring", "-r", "50")
	if code != 0 || !strings.Contains(out, "ring np=1 rounds=50 ") || !strings.Contains(out, "us_per_round=") {
		t.Errorf("osu ring alone: exit %d, output %q; want 0 and a ring np=1 line", code, out)
	}
}
