package launcher

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

type runResult struct {
	status         int
	stdout, stderr string
}

// runHelper runs a job of the test binary in helper mode, in-process, with
// its own TMPDIR, and checks that the session directory is gone after.
func runHelper(t *testing.T, o Options, mode string) runResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	o.Stdout, o.Stderr = &stdout, &stderr
	if o.Program == "" {
		o.Program = os.Args[0]
	}
	o.Environ = append(os.Environ(), envHelper+"="+mode)
	o.TempDir = t.TempDir()
	status := Run(o)
	if entries, _ := os.ReadDir(o.TempDir); len(entries) != 0 {
		t.Errorf("after Run, TMPDIR holds %v; want it empty", entries)
	}
	return runResult{status, stdout.String(), stderr.String()}
}

func TestRunSuccess(t *testing.T) {
	r := runHelper(t, Options{NP: 3, Stdin: strings.NewReader("from stdin\n")}, "echo")
	if r.status != 0 {
		t.Fatalf("status %d, stderr %q; want 0", r.status, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	sort.Strings(lines)
	if want := []string{"from stdin", "out 0", "out 1", "out 2"}; strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("stdout lines %q; want %q (stdin to rank 0 only)", lines, want)
	}
	if r.stderr != "tailtailtail" {
		t.Errorf("stderr %q; want the three untagged partial lines as they are", r.stderr)
	}
}

func TestRunTagOutput(t *testing.T) {
	r := runHelper(t, Options{NP: 2, TagOutput: true}, "echo")
	if r.status != 0 {
		t.Fatalf("status %d, stderr %q; want 0", r.status, r.stderr)
	}
	for _, want := range []string{"[0] out 0\n", "[1] out 1\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout %q lacks %q", r.stdout, want)
		}
	}
	for _, want := range []string{"[0] tail\n", "[1] tail\n"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks %q (a last line without newline, tagged)", r.stderr, want)
		}
	}
}

func TestRunFirstFailureDecides(t *testing.T) {
	start := time.Now()
	r := runHelper(t, Options{NP: 4}, "fail:2:7")
	if r.status != 7 {
		t.Errorf("status %d; want 7", r.status)
	}
	if !regexp.MustCompile(`^gorun: rank 2 \(pid [1-9][0-9]*\) exited with status 7\n$`).MatchString(r.stderr) {
		t.Errorf("stderr %q; want exactly the failure line of rank 2", r.stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the blocked ranks took %v to stop; the contract allows 10 s", d)
	}
}

func TestRunAbortIsReported(t *testing.T) {
	r := runHelper(t, Options{NP: 1}, "abort:300")
	want := regexp.MustCompile(`^gorun: rank 0 called Abort\(300\)\ngorun: rank 0 \(pid \d+\) exited with status 1\n$`)
	if r.status != 1 || !want.MatchString(r.stderr) {
		t.Errorf("status %d, stderr %q; want 1 and %v", r.status, r.stderr, want)
	}
}

func TestRunTimeout(t *testing.T) {
	r := runHelper(t, Options{NP: 2, Timeout: 500 * time.Millisecond}, "hang")
	if r.status != ExitTimeout {
		t.Errorf("status %d; want %d", r.status, ExitTimeout)
	}
	if !strings.Contains(r.stderr, "goroutine ") || !strings.HasSuffix(r.stderr, "gorun: job timed out after 500ms\n") {
		t.Errorf("stderr %.300q...; want the ranks' stack dumps, then the timeout line", r.stderr)
	}
}

// TestRunRefusesBeforeStarting: usage errors and bad parameters exit with
// ExitUsage, and no rank runs.
func TestRunRefusesBeforeStarting(t *testing.T) {
	markers := t.TempDir()
	tests := []struct {
		name string
		o    Options
		err  string
	}{
		{"np 0", Options{NP: 0}, "gorun: -np 0: the number of ranks must be 1..4096\n"},
		{"np too large", Options{NP: 100000}, "gorun: -np 100000: the number of ranks must be 1..4096\n"},
		{"negative timeout", Options{NP: 1, Timeout: -time.Second}, "must not be negative"},
		{"bad parameter value", Options{NP: 2, MCA: [][2]string{{"launcher_base_verbose", "loud"}}}, `launcher_base_verbose="loud" (from flag)`},
		{"missing program", Options{NP: 2, Program: filepath.Join(markers, "nope")}, "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHelper(t, tt.o, "marker:"+markers)
			if r.status != ExitUsage || !strings.Contains(r.stderr, tt.err) {
				t.Errorf("status %d, stderr %q; want %d and %q", r.status, r.stderr, ExitUsage, tt.err)
			}
		})
	}
	if entries, _ := os.ReadDir(markers); len(entries) != 0 {
		t.Errorf("ranks ran: %v", entries)
	}
}

func TestRunUnknownParameterWarns(t *testing.T) {
	dir := t.TempDir()
	r := runHelper(t, Options{NP: 2, MCA: [][2]string{{"launcher_base_verbos", "info"}}}, "marker:"+dir)
	if r.status != 0 || !strings.Contains(r.stderr, `gorun: warning: mca: unknown parameter "launcher_base_verbos"`) {
		t.Errorf("status %d, stderr %q; want 0 and a warning", r.status, r.stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("markers %v; want one per rank", entries)
	}
}

func TestExitStatusWords(t *testing.T) {
	// Pinned by the contract: "exited with status S", "killed by signal SIGNAME".
	r := runHelper(t, Options{NP: 1, Program: "/bin/sh", Args: []string{"-c", "kill -SEGV $$"}}, "")
	if r.status != 139 || !regexp.MustCompile(`^gorun: rank 0 \(pid \d+\) killed by signal SIGSEGV\n$`).MatchString(r.stderr) {
		t.Errorf("status %d, stderr %q; want 139 and the SIGSEGV line", r.status, r.stderr)
	}
}
