package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// TestUsageErrors: usage errors, a missing program and a bad parameter
// exit 2 with one clear line, and no rank starts (the rank program would
// leave a marker file).
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string // the marker directory is appended to PROGRAM's args
		err  string
	}{
		{"-np 0", []string{"-np", "0", actor(), "marker"}, "gorun: -np 0: the number of ranks must be 1..4096"},
		{"-np 100000", []string{"-np", "100000", actor(), "marker"}, "gorun: -np 100000: the number of ranks must be 1..4096"},
		{"-np missing", []string{actor(), "marker"}, "gorun: -np N is required"},
		{"missing program", []string{"-np", "2", "./no-such-program"}, "gorun: program ./no-such-program not found"},
		{"non-executable program", []string{"-np", "2", "/proc/self/status"}, "is not executable (mode -r--r--r--)"},
		{"bad --mca value", []string{"-np", "2", "--mca", "btl", "carrier-pigeon", actor(), "marker"},
			`btl="carrier-pigeon" (from flag)`},
		{"bad timeout", []string{"-np", "2", "--timeout", "soon", actor(), "marker"}, `--timeout "soon"`},
		{"unknown option", []string{"-np", "2", "--frobnicate", actor(), "marker"}, "unknown flag: --frobnicate"},
		{"host named twice", []string{"-np", "2", "--host", "localhost,LocalHost", actor(), "marker"}, "host LocalHost named twice"},
		{"slots not positive", []string{"-np", "2", "--host", "localhost:0", actor(), "marker"}, `slots "0": want a positive integer`},
		{"missing hostfile", []string{"-np", "2", "--hostfile", "/no/such/hostfile", actor(), "marker"}, "--hostfile: open /no/such/hostfile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			markers := t.TempDir()
			r := jobtest.Run(t, append(tt.args, markers)...)
			if r.Code != 2 || !strings.Contains(r.Stderr, tt.err) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", r.Code, r.Stderr, tt.err)
			}
			if m, _ := os.ReadDir(markers); len(m) != 0 {
				t.Errorf("ranks ran: %v", m)
			}
		})
	}
}

// TestBadMCAFromEnv: a bad value from the environment is as fatal as one
// from --mca.
func TestBadMCAFromEnv(t *testing.T) {
	t.Parallel()
	markers := t.TempDir()
	r := jobtest.Job{Args: []string{"-np", "2", actor(), "marker", markers}, Env: []string{"GORUN_MCA_btl=carrier-pigeon"}}.Run(t)
	if r.Code != 2 || !strings.Contains(r.Stderr, "env:GORUN_MCA_btl") {
		t.Errorf("exit %d, stderr %q; want 2 and the source env:GORUN_MCA_btl", r.Code, r.Stderr)
	}
	if m, _ := os.ReadDir(markers); len(m) != 0 {
		t.Errorf("ranks ran: %v", m)
	}
}

// TestImpossibleMCACombination: parameters that are each valid but cannot
// work together are refused by gorun before any rank starts (exit 2), in
// one error naming every parameter involved, its value and its source.
func TestImpossibleMCACombination(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mca  []string // NAME VALUE pairs for --mca
		env  []string
		want []string // in the error line
	}{
		{"sm eager above max send", []string{"btl_sm_eager_limit", "64k"}, nil,
			[]string{`btl_sm_eager_limit="64k" (from flag)`, `btl_sm_max_send_size="32k" (from default)`, "cannot work together"}},
		{"self eager above max send", []string{"btl_self_eager_limit", "1m", "btl_self_max_send_size", "64k"}, nil,
			[]string{`btl_self_eager_limit="1m" (from flag)`, `btl_self_max_send_size="64k" (from flag)`}},
		{"fifo not a power of two", nil, []string{"GORUN_MCA_btl_sm_fifo_size=100"},
			[]string{`btl_sm_fifo_size="100" (from env:GORUN_MCA_btl_sm_fifo_size)`, "power of two"}},
		{"free list start above max", []string{"btl_sm_free_list_num", "16"}, []string{"GORUN_MCA_btl_sm_free_list_max=8"},
			[]string{`btl_sm_free_list_num="16" (from flag)`, `btl_sm_free_list_max="8" (from env:GORUN_MCA_btl_sm_free_list_max)`}},
		{"inline limit above what a quarter of the FIFO carries", []string{"btl_sm_inline_limit", "8k"}, nil,
			[]string{`btl_sm_inline_limit="8k" (from flag)`, `btl_sm_fifo_size="256" (from default)`, "allowed: btl_sm_inline_limit 0..7592"}},
		{"inline limit with a small FIFO", []string{"btl_sm_fifo_size", "16"}, []string{"GORUN_MCA_btl_sm_fifo_lazy_free=8"},
			[]string{`btl_sm_inline_limit="512" (from default)`, `btl_sm_fifo_size="16" (from flag)`, "allowed: btl_sm_inline_limit 0..392"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			markers := t.TempDir()
			args := []string{"-np", "2"}
			for i := 0; i+1 < len(tt.mca); i += 2 {
				args = append(args, "--mca", tt.mca[i], tt.mca[i+1])
			}
			args = append(args, actor(), "marker", markers)
			r := jobtest.Job{Args: args, Env: tt.env}.Run(t)
			if r.Code != 2 {
				t.Errorf("exit %d, stderr %q; want 2", r.Code, r.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr %q lacks %q", r.Stderr, w)
				}
			}
			if m, _ := os.ReadDir(markers); len(m) != 0 {
				t.Errorf("ranks ran: %v", m)
			}
		})
	}
}

// TestBTLSelectionRefused: a btl selection that cannot carry the job is
// refused by gorun before any rank starts (exit 2), naming btl with its
// value and source, -np where it matters, and what is allowed; before,
// every rank failed in Init ("no BTL reaches rank R", exit 1). The same
// selections with one rank, or with sm or tcp, run.
func TestBTLSelectionRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		np   string
		btl  []string // --mca btl VALUE, or nil
		env  []string
		want []string // in the error line; nil: the job runs
	}{
		{"self, 2 ranks", "2", []string{"self"}, nil,
			[]string{`btl="self" (from flag)`, `-np="2"`, "cannot work together", "needs sm or tcp", "allowed: "}},
		{"all but sm and tcp from env, 3 ranks", "3", nil, []string{"GORUN_MCA_btl=^sm,tcp"},
			[]string{`btl="^sm,tcp" (from env:GORUN_MCA_btl)`, `-np="3"`, "needs sm or tcp"}},
		{"no self", "2", []string{"sm,tcp"}, nil,
			[]string{`btl="sm,tcp" (from flag)`, "reaches itself only through self", "allowed: "}},
		{"self, 1 rank", "1", []string{"self"}, nil, nil},
		{"self and tcp, 2 ranks", "2", []string{"self,tcp"}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			markers := t.TempDir()
			args := []string{"-np", tt.np}
			if tt.btl != nil {
				args = append(args, "--mca", "btl", tt.btl[0])
			}
			r := jobtest.Job{Args: append(args, actor(), "marker", markers), Env: tt.env}.Run(t)
			m, _ := os.ReadDir(markers)
			if tt.want == nil {
				if n, _ := strconv.Atoi(tt.np); r.Code != 0 || len(m) != n {
					t.Errorf("exit %d, %d markers, stderr %q; want 0 and %s", r.Code, len(m), r.Stderr, tt.np)
				}
				return
			}
			if r.Code != 2 || len(m) != 0 {
				t.Errorf("exit %d, ranks ran: %v; want 2 and none", r.Code, m)
			}
			if strings.Count(r.Stderr, "\n") != 1 {
				t.Errorf("stderr %q; want one line", r.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr %q lacks %q", r.Stderr, w)
				}
			}
		})
	}
}

// TestErrorsQuoteLittle: huge input (a 10 MB line in the parameter file, a
// 100 KB value in the environment or on the command line) is cut in gorun's
// error message, never echoed whole; the job still stops with exit 2.
func TestErrorsQuoteLittle(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("7", 100<<10)
	tests := []struct {
		name string
		file string // the working directory's gorun-mca-params.conf
		env  []string
		args []string // before PROGRAM
	}{
		{"file line without =", strings.Repeat("x", 10<<20) + "\n", nil, nil},
		{"file value", "btl_sm_fifo_size = " + strings.Repeat("x", 10<<20) + "\n", nil, nil},
		{"env value", "", []string{"GORUN_MCA_btl_sm_fifo_size=" + huge}, nil},
		{"flag value", "", nil, []string{"--mca", "btl_sm_eager_limit", huge}},
		{"timeout", "", nil, []string{"--timeout", huge}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wd, markers := t.TempDir(), t.TempDir()
			if tt.file != "" {
				if err := os.WriteFile(filepath.Join(wd, "gorun-mca-params.conf"), []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := append(append([]string{"-np", "1"}, tt.args...), actor(), "marker", markers)
			r := jobtest.Job{Args: args, Env: tt.env, Dir: wd}.Run(t)
			if r.Code != 2 || len(r.Stderr) > 2000 {
				t.Errorf("exit %d, %d bytes on stderr: %.300q; want 2 and a short message", r.Code, len(r.Stderr), r.Stderr)
			}
		})
	}
}

// TestDeprecatedSpinCount: btl_sm_spin_count, now pml_ob1_spin_count, still
// works from the environment and from --mca, with one warning from gorun.
func TestDeprecatedSpinCount(t *testing.T) {
	t.Parallel()
	for _, j := range []jobtest.Job{
		{Args: []string{"-np", "2", actor(), "marker"}, Env: []string{"GORUN_MCA_btl_sm_spin_count=5"}},
		{Args: []string{"-np", "2", "--mca", "btl_sm_spin_count", "5", actor(), "marker"}},
	} {
		markers := t.TempDir()
		j.Args = append(j.Args, markers)
		r := j.Run(t)
		if r.Code != 0 || strings.Count(r.Stderr, "deprecated") != 1 || !strings.Contains(r.Stderr, "deprecated; use pml_ob1_spin_count") {
			t.Errorf("%v %v: exit %d, stderr %q; want 0 and one deprecation warning", j.Env, j.Args, r.Code, r.Stderr)
		}
		if m, _ := os.ReadDir(markers); len(m) != 2 {
			t.Errorf("markers %v; want one per rank", m)
		}
	}
}

// TestUnknownMCAName: "An unknown name ... is a warning naming the closest
// known parameter; the run goes on."
func TestUnknownMCAName(t *testing.T) {
	t.Parallel()
	markers := t.TempDir()
	r := jobtest.Run(t, "-np", "2", "--mca", "launcher_base_verbos", "info", actor(), "marker", markers)
	if r.Code != 0 || !strings.Contains(r.Stderr, `"launcher_base_verbos"`) || !strings.Contains(r.Stderr, `"launcher_base_verbose"`) {
		t.Errorf("exit %d, stderr %q; want 0 and a warning naming launcher_base_verbose", r.Code, r.Stderr)
	}
	if m, _ := os.ReadDir(markers); len(m) != 2 {
		t.Errorf("markers %v; want one per rank", m)
	}
}

// TestSymlinkedSessionDir: a symbolic link planted where the per-user
// session directory goes is refused (exit 2, the path named) and its
// target is left alone.
func TestSymlinkedSessionDir(t *testing.T) {
	t.Parallel()
	tmp, target := t.TempDir(), t.TempDir()
	link := filepath.Join(tmp, "gorun-"+strconv.Itoa(os.Getuid()))
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	p := jobtest.Job{Args: []string{"-np", "1", jobtest.Prog("hello")}, TMPDIR: tmp}.Start(t)
	r := p.Wait()
	os.Remove(link) // for the cleanup check
	if r.Code != 2 || !strings.Contains(r.Stderr, link+" is a symbolic link") {
		t.Errorf("exit %d, stderr %q; want 2 and an error naming %s", r.Code, r.Stderr, link)
	}
	if m, _ := os.ReadDir(target); len(m) != 0 {
		t.Errorf("gorun wrote into the link's target: %v", m)
	}
}
