package tests

import (
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

var actor = func() string { return jobtest.Prog("actor") }

// failLine matches the contract's failure line for rank r.
func failLine(r, how string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^gorun: rank ` + r + ` \(pid [1-9][0-9]*\) ` + regexp.QuoteMeta(how) + `$`)
}

// TestExitStatus: "Exit status: a rank that exited with status S → S; a
// rank killed by signal N → 128+N", with the contract's line on stderr.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		code   int
		line   *regexp.Regexp
		stderr string // also expected on stderr
	}{
		{"rank 2 exits 7", []string{"-np", "4", actor(), "fail", "2", "exit:7"}, 7, failLine("2", "exited with status 7"), ""},
		{"os.Exit(3)", []string{"-np", "2", actor(), "fail", "0", "exit:3"}, 3, failLine("0", "exited with status 3"), ""},
		{"panic", []string{"-np", "3", actor(), "fail", "1", "panic"}, 2, failLine("1", "exited with status 2"), "panic: actor: deliberate panic"},
		{"nil dereference", []string{"-np", "3", actor(), "fail", "2", "nilderef"}, 2, failLine("2", "exited with status 2"), "nil pointer dereference"},
		{"SIGSEGV in a non-Go rank", []string{"-np", "2", "/bin/sh", "-c", `if [ "$GORUN_RANK" = 1 ]; then kill -SEGV $$; fi; sleep 60`},
			139, failLine("1", "killed by signal SIGSEGV"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := jobtest.Run(t, tt.args...)
			if r.Code != tt.code {
				t.Errorf("gorun %q exited %d; want %d; stderr:\n%s", tt.args, r.Code, tt.code, r.Stderr)
			}
			if n := len(tt.line.FindAllString(r.Stderr, -1)); n != 1 {
				t.Errorf("stderr has %d lines matching %v; want exactly 1; stderr:\n%s", n, tt.line, r.Stderr)
			}
			if strings.Count(r.Stderr, "gorun: rank") != 1 {
				t.Errorf("stderr reports more than the first failure:\n%s", r.Stderr)
			}
			if !strings.Contains(r.Stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, r.Stderr)
			}
		})
	}
}

// TestAbort: "Abort(code): gorun exits with code when 1 ≤ code ≤ 255, with
// 1 otherwise", and says which rank called Abort.
func TestAbort(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		code   string
		status int
	}{{"3", 3}, {"0", 1}, {"300", 1}} {
		t.Run("Abort("+tt.code+")", func(t *testing.T) {
			t.Parallel()
			r := jobtest.Run(t, "-np", "3", actor(), "fail", "1", "abort:"+tt.code)
			want := regexp.MustCompile(`^gorun: rank 1 called Abort\(` + tt.code + `\)\ngorun: rank 1 \(pid \d+\) exited with status ` +
				regexp.QuoteMeta(itoa(tt.status)) + "\n$")
			if r.Code != tt.status || !want.MatchString(r.Stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %v", r.Code, r.Stderr, tt.status, want)
			}
		})
	}
}

// TestKillRank: kill -9 of one rank → 137, the SIGKILL line, the others stopped.
func TestKillRank(t *testing.T) {
	t.Parallel()
	p := jobtest.Job{Args: []string{"-np", "3", actor(), "hang"}}.Start(t)
	var pid1 int
	for _, l := range p.Lines(3, "ready ") {
		var r, pid int
		if _, err := sscan(l, "ready %d %d", &r, &pid); err != nil {
			t.Fatal(err)
		}
		if r == 1 {
			pid1 = pid
		}
	}
	if err := syscall.Kill(pid1, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := p.Wait()
	if r.Code != 137 || !failLine("1", "killed by signal SIGKILL").MatchString(r.Stderr) {
		t.Errorf("exit %d, stderr %q; want 137 and rank 1's SIGKILL line", r.Code, r.Stderr)
	}
}

// TestGoodRunsExitZero: ranks that exit 0 early while others run are fine.
func TestGoodRunsExitZero(t *testing.T) {
	t.Parallel()
	r := jobtest.Run(t, "-np", "3", "/bin/sh", "-c", `sleep 0.$GORUN_RANK; echo done $GORUN_RANK`)
	if r.Code != 0 || r.Stderr != "" || strings.Count(r.Stdout, "done ") != 3 {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0, three lines, nothing on stderr", r.Code, r.Stdout, r.Stderr)
	}
}
