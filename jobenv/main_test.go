package jobenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// envHelper makes the test binary act as a rank program instead of
// running tests: its value is the mode (see helperMain).
const envHelper = "JOBENV_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(envHelper); ok {
		helperMain(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperMain is a rank program. Modes:
//
//	lifeline        Watch, print "ready", block
//	abort:N         Abort(N)
func helperMain(mode string) {
	switch {
	case mode == "lifeline":
		if err := Watch(); err != nil {
			fmt.Println("Watch:", err)
			os.Exit(100)
		}
		fmt.Println("ready")
		for {
			time.Sleep(time.Hour)
		}
	case len(mode) > 6 && mode[:6] == "abort:":
		n, _ := strconv.Atoi(mode[6:])
		Abort(n)
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		os.Exit(100)
	}
}

func TestRead(t *testing.T) {
	tests := []struct {
		env   map[string]string
		want  Job
		inJob bool
		err   string
	}{
		{map[string]string{}, Job{Size: 1}, false, ""},
		{map[string]string{EnvRank: "1", EnvSize: "2", EnvLocalRank: "1", EnvJobID: "j", EnvSessionDir: "/s"},
			Job{Rank: 1, Size: 2, LocalRank: 1, JobID: "j", SessionDir: "/s"}, true, ""},
		{map[string]string{EnvRank: "x", EnvSize: "2", EnvLocalRank: "0", EnvJobID: "j", EnvSessionDir: "/s"},
			Job{}, true, `GORUN_RANK="x" is not an integer`},
		{map[string]string{EnvRank: "2", EnvSize: "2", EnvLocalRank: "0", EnvJobID: "j", EnvSessionDir: "/s"},
			Job{}, true, "GORUN_RANK=2 is not below GORUN_SIZE=2"},
		{map[string]string{EnvRank: "0", EnvSize: "2", EnvLocalRank: "0"}, Job{}, true, "GORUN_JOBID and GORUN_SESSION_DIR must be set"},
	}
	for _, tt := range tests {
		for _, k := range []string{EnvRank, EnvSize, EnvLocalRank, EnvJobID, EnvSessionDir} {
			t.Setenv(k, "")
			os.Unsetenv(k)
			if v, ok := tt.env[k]; ok {
				os.Setenv(k, v)
			}
		}
		got, inJob, err := Read()
		if inJob != tt.inJob || (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) ||
			tt.err == "" && got != tt.want {
			t.Errorf("Read with %v = %+v, %v, %v; want %+v, %v, %q", tt.env, got, inJob, err, tt.want, tt.inJob, tt.err)
		}
	}
}

func TestLocalSize(t *testing.T) {
	tests := []struct {
		v    string
		set  bool
		want int
		ok   bool
	}{
		{"", false, 0, false},
		{"", true, 0, false},
		{"4", true, 4, true},
		{"1", true, 1, true},
		{"0", true, 0, false},
		{"-2", true, 0, false},
		{"four", true, 0, false},
		{"4 ", true, 0, false},
	}
	for _, tt := range tests {
		t.Setenv(EnvLocalSize, tt.v)
		if !tt.set {
			os.Unsetenv(EnvLocalSize)
		}
		if n, ok := LocalSize(); n != tt.want || ok != tt.ok {
			t.Errorf("LocalSize with %s=%q (set %v) = %d, %v; want %d, %v", EnvLocalSize, tt.v, tt.set, n, ok, tt.want, tt.ok)
		}
	}
}
