package tests

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// TestTagOutput: "--tag-output prefixes [R] to every line of stdout and
// stderr, including a last line without a newline".
func TestTagOutput(t *testing.T) {
	t.Parallel()
	r := jobtest.Run(t, "-np", "2", "--tag-output", actor(), "tag")
	if r.Code != 0 {
		t.Fatalf("exit %d; stderr %q", r.Code, r.Stderr)
	}
	for rank := range 2 {
		p := fmt.Sprintf("[%d] ", rank)
		want := p + "out one\n" + p + "out two\n" + p + "last without newline\n"
		if got := linesWithPrefix(r.Stdout, p); got != want {
			t.Errorf("rank %d's stdout lines %q; want %q", rank, got, want)
		}
		if got := linesWithPrefix(r.Stderr, p); got != p+"err one\n" {
			t.Errorf("rank %d's stderr lines %q; want %q", rank, got, p+"err one\n")
		}
	}
	if n := strings.Count(r.Stdout, "\n"); n != 6 {
		t.Errorf("stdout has %d lines; want 6 (no line merged or lost):\n%s", n, r.Stdout)
	}
}

// linesWithPrefix returns the lines of s that start with p, in order.
func linesWithPrefix(s, p string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, p) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestStdinRank0Only: "stdin goes to rank 0; other ranks read /dev/null",
// and rank 0 sees the end of gorun's stdin.
func TestStdinRank0Only(t *testing.T) {
	t.Parallel()
	r := jobtest.Job{Args: []string{"-np", "3", actor(), "stdin"}, Stdin: "line one\nline two\n"}.Run(t)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	sort.Strings(lines)
	want := []string{`rank 0 read "line one\nline two\n"`, `rank 1 read ""`, `rank 2 read ""`}
	if r.Code != 0 || strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("exit %d, stdout lines %q; want 0 and %q; stderr %q", r.Code, lines, want, r.Stderr)
	}
}

// TestRankEnv: ranks see GORUN_RANK, GORUN_SIZE, GORUN_LOCAL_RANK,
// GORUN_JOBID and GORUN_SESSION_DIR on top of gorun's own environment.
func TestRankEnv(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	r := jobtest.Job{Args: []string{"-np", "3", actor(), "env"}, Env: []string{"FOO=bar baz", "GORUN_RANK=99"}, TMPDIR: tmp}.Run(t)
	if r.Code != 0 {
		t.Fatalf("exit %d; stderr %q", r.Code, r.Stderr)
	}
	vars := map[string]string{} // "rank KEY" → value
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		rank, kv, _ := strings.Cut(strings.TrimPrefix(l, "rank="), " ")
		k, v, _ := strings.Cut(kv, "=")
		vars[rank+" "+k] = v
	}
	jobID := vars["0 GORUN_JOBID"]
	if !regexp.MustCompile(`^[1-9][0-9]*-[0-9a-f]{8}$`).MatchString(jobID) {
		t.Fatalf("GORUN_JOBID %q; want <pid>-<hex>; stdout:\n%s", jobID, r.Stdout)
	}
	sessionDir := filepath.Join(tmp, "gorun-"+strconv.Itoa(os.Getuid()), jobID)
	for rank := range 3 {
		R := strconv.Itoa(rank)
		for k, want := range map[string]string{
			"GORUN_RANK": R, "GORUN_LOCAL_RANK": R, "GORUN_SIZE": "3", "GORUN_LOCAL_SIZE": "3", "GORUN_NODE": "0", "GORUN_JOBID": jobID,
			"GORUN_SESSION_DIR": sessionDir, "FOO": "bar baz",
		} {
			if got, ok := vars[R+" "+k]; !ok || got != want {
				t.Errorf("rank %d sees %s=%q (set: %v); want %q", rank, k, got, ok, want)
			}
		}
		if !strings.Contains(r.Stdout, "rank="+R+" has GORUN_MCA_RESOLVED") {
			t.Errorf("rank %d lacks GORUN_MCA_RESOLVED", rank)
		}
	}
}

// TestRankGOMAXPROCS: without GOMAXPROCS in gorun's environment each rank
// gets the cores divided among the ranks (at least 1), or
// launcher_base_gomaxprocs when set; a GOMAXPROCS of the user's wins.
func TestRankGOMAXPROCS(t *testing.T) {
	t.Parallel()
	auto := strconv.Itoa(max(1, runtime.NumCPU()/3))
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"auto", nil, nil, auto},
		{"parameter", []string{"--mca", "launcher_base_gomaxprocs", "5"}, nil, "5"},
		{"user's variable wins", []string{"--mca", "launcher_base_gomaxprocs", "5"}, []string{"GOMAXPROCS=3"}, "3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env == nil && os.Getenv("GOMAXPROCS") != "" {
				t.Skip("the test's own environment sets GOMAXPROCS")
			}
			args := append(append([]string{"-np", "3"}, tc.args...), actor(), "env")
			r := jobtest.Job{Args: args, Env: tc.env, TMPDIR: t.TempDir()}.Run(t)
			if r.Code != 0 {
				t.Fatalf("exit %d; stderr %q", r.Code, r.Stderr)
			}
			for rank := range 3 {
				for _, line := range []string{"GOMAXPROCS=", "runtime.GOMAXPROCS="} {
					want := fmt.Sprintf("rank=%d %s%s\n", rank, line, tc.want)
					if !strings.Contains(r.Stdout, want) {
						t.Errorf("no line %q in stdout:\n%s", want, r.Stdout)
					}
				}
			}
		})
	}
}

// TestStdoutClosedEarly (issue 16 item 9): `gorun ... | head -1`. The
// reader of gorun's stdout goes away after one line while the ranks still
// print thousands; gorun must not die of SIGPIPE (leaving its session
// directory): like Open MPI it discards the rest of the output, the job
// runs to its end with status 0, and nothing is left behind.
func TestStdoutClosedEarly(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	cmd := exec.Command(jobtest.Gorun(), "-np", "3", actor(), "lines", "20000")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	out.Close() // as head does after its line
	if err != nil || !strings.HasPrefix(line, "line ") {
		t.Errorf("first line %q, %v", line, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		err = <-done
		t.Errorf("gorun still ran 60 s after its stdout closed")
	}
	if err != nil || stderr.String() != "" {
		t.Errorf("gorun ended with %v (%v), stderr %q; want status 0 and nothing on stderr", err, cmd.ProcessState, stderr.String())
	}
	jobtest.CheckClean(t, tmp, cmd.Process.Pid, 0)
}

// TestEagerCreditWarning (issue 16 item 6): once a sender has sent a
// receiver its share of pml_ob1_unexpected_limit in eager messages the
// receiver has not matched, further sends wait for the receiver even below
// the eager limit. That must not happen silently: one warning, naming the
// parameter, however many sends are affected; the job still completes.
func TestEagerCreditWarning(t *testing.T) {
	t.Parallel()
	r := jobtest.Run(t, "-np", "2", "--mca", "pml_ob1_unexpected_limit", "64k", actor(), "credit", "300", "1024")
	if r.Code != 0 || !strings.Contains(r.Stdout, "received 300") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and every message received", r.Code, r.Stdout, r.Stderr)
	}
	if n := strings.Count(r.Stderr, "pml_ob1_unexpected_limit=65536"); n != 1 || strings.Count(r.Stderr, "\n") != 1 ||
		!strings.Contains(r.Stderr, "[WARN]") || !strings.Contains(r.Stderr, "eager credit towards rank 1 used up") {
		t.Errorf("stderr %q; want exactly one warning line naming pml_ob1_unexpected_limit=65536", r.Stderr)
	}
}
