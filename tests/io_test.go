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

// TestRankBinding: each of n ranks that do not outnumber the CPUs is
// bound to its own n-th of them (the share its GOMAXPROCS counts), and
// told how many the machine has (GORUN_LOCAL_CPUS, for the rule that
// makes waiting ranks yield when they outnumber the CPUs);
// oversubscribed, with launcher_base_bind false, or with a GOMAXPROCS of
// the user's, every rank may run on every CPU gorun may use.
func TestRankBinding(t *testing.T) {
	t.Parallel()
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("the test's own environment sets GOMAXPROCS, so gorun does not bind")
	}
	all := cpuList(t, procStatusCPUs(t))
	if len(all) < 2 {
		t.Skipf("one CPU allowed (%v): nothing to bind to", all)
	}
	full := fmt.Sprint(all)
	cases := []struct {
		name  string
		np    int
		args  []string
		env   []string
		bound bool
	}{
		{"one rank per CPU", 2, nil, nil, true},
		{"oversubscribed", len(all) + 1, nil, nil, false},
		{"parameter off", 2, []string{"--mca", "launcher_base_bind", "false"}, nil, false},
		{"user's GOMAXPROCS", 2, nil, []string{"GOMAXPROCS=1"}, false},
		{"launcher_base_gomaxprocs", 2, []string{"--mca", "launcher_base_gomaxprocs", "1"}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"-np", strconv.Itoa(tc.np)}, tc.args...), actor(), "env")
			r := jobtest.Job{Args: args, Env: tc.env, TMPDIR: t.TempDir()}.Run(t)
			if r.Code != 0 {
				t.Fatalf("exit %d; stderr %q", r.Code, r.Stderr)
			}
			seen := map[int]int{} // CPU → rank bound to it
			for rank := range tc.np {
				m := regexp.MustCompile(fmt.Sprintf(`(?m)^rank=%d cpus=(\S+)$`, rank)).FindStringSubmatch(r.Stdout)
				if m == nil {
					t.Fatalf("no cpus line of rank %d in stdout:\n%s", rank, r.Stdout)
				}
				got := cpuList(t, m[1])
				// The oversubscription rule counts the machine's CPUs,
				// not the rank's share (bound or not).
				if want := fmt.Sprintf("rank=%d GORUN_LOCAL_CPUS=%d\n", rank, runtime.NumCPU()); !strings.Contains(r.Stdout, want) {
					t.Errorf("no line %q in stdout:\n%s", want, r.Stdout)
				}
				if !tc.bound {
					if fmt.Sprint(got) != full {
						t.Errorf("rank %d may run on CPUs %v; want every allowed one, %v", rank, got, all)
					}
					continue
				}
				k := len(all) / tc.np
				if want := fmt.Sprint(all[rank*k : (rank+1)*k]); fmt.Sprint(got) != want {
					t.Errorf("rank %d bound to CPUs %v; want %s", rank, got, want)
				}
				for _, c := range got {
					if o, dup := seen[c]; dup {
						t.Errorf("CPU %d bound to ranks %d and %d", c, o, rank)
					}
					seen[c] = rank
				}
			}
		})
	}
}

// procStatusCPUs is this process's Cpus_allowed_list.
func procStatusCPUs(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^Cpus_allowed_list:\s*(\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no Cpus_allowed_list in /proc/self/status")
	}
	return string(m[1])
}

// cpuList expands a kernel CPU list ("0-2,5") into its CPUs, in order.
func cpuList(t *testing.T, s string) []int {
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || b < a {
			t.Fatalf("CPU list %q: bad part %q", s, part)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus
}
