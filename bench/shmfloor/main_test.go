package main

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"
)

// TestMain runs the child's side when measure starts the test binary
// again (os.Executable) with childEnv set.
func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		if err := child(v); err != nil {
			os.Stderr.WriteString("child: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestMeasure(t *testing.T) {
	ns, err := measure(3, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 3 {
		t.Fatalf("%d rounds; want 3", len(ns))
	}
	for _, v := range ns {
		// A line crossing takes tens to hundreds of ns; a round that
		// did not wait for the child would take about one.
		if v < 5 || v > float64(10*time.Millisecond) {
			t.Errorf("one-way time %v ns is not a line crossing", v)
		}
	}
	line := report(ns, 2000, cpuModel())
	if !regexp.MustCompile(`^shmfloor one_way_ns min=[0-9.]+ median=[0-9.]+ max=[0-9.]+ rounds=3 iters=2000 cpu=".+"$`).MatchString(line) {
		t.Errorf("report line %q", line)
	}
}

func TestReport(t *testing.T) {
	got := report([]float64{80, 75, 90, 74, 76}, 10, "X CPU")
	want := `shmfloor one_way_ns min=74.0 median=76.0 max=90.0 rounds=5 iters=10 cpu="X CPU"`
	if got != want {
		t.Errorf("report = %q; want %q", got, want)
	}
}

// TestChildGivesUp: a child whose parent never writes exits with an error
// once its patience is over, instead of spinning forever; a bad patience
// is refused by name.
func TestChildGivesUp(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "shm")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(mapSize); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env, out string
		least    time.Duration
	}{
		{"300", "no new value from the parent for 300ms", 300 * time.Millisecond},
		{"soon", `SHMFLOOR_CHILD="soon": want a positive number of milliseconds`, 0},
	} {
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+tc.env)
		cmd.ExtraFiles = []*os.File{f}
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s=%s: child exited 0; want an error", childEnv, tc.env)
		}
		if !regexp.MustCompile(regexp.QuoteMeta(tc.out)).Match(out) {
			t.Errorf("%s=%s: child said %q; want %q", childEnv, tc.env, out, tc.out)
		}
		if d := time.Since(start); d < tc.least {
			t.Errorf("%s=%s: child gave up after %v; want at least %v", childEnv, tc.env, d, tc.least)
		}
	}
}
