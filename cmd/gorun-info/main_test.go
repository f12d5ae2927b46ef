package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runInfo runs gorun-info with args in an empty working directory and home,
// plus environ.
func runInfo(t *testing.T, environ []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, environ, t.TempDir(), t.TempDir(), &out, &errb)
	return code, out.String(), errb.String()
}

func TestTableListsParameters(t *testing.T) {
	code, out, errOut := runInfo(t, nil)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(out, "\n")
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "NAME VALUE SOURCE DEFAULT HELP" {
		t.Errorf("header = %q", lines[0])
	}
	var btl string
	for _, l := range lines {
		if strings.HasPrefix(l, "btl ") {
			btl = l
		}
	}
	if f := strings.Fields(btl); len(f) < 5 || f[1] != "self,sm,tcp" || f[2] != "default" || f[3] != "self,sm,tcp" {
		t.Errorf("btl line = %q; want btl self,sm,tcp default self,sm,tcp HELP", btl)
	}
	if !strings.Contains(out, "pml_base_verbose") {
		t.Errorf("output lacks pml_base_verbose:\n%s", out)
	}
}

// TestListsEveryNamedParameter: the parameters the project's issues and
// contract name are all listed, the launcher's and the deprecated
// btl_sm_spin_count included.
func TestListsEveryNamedParameter(t *testing.T) {
	code, out, errOut := runInfo(t, nil)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, name := range []string{"btl", "btl_self_eager_limit", "btl_self_max_send_size",
		"btl_sm_backing_directory", "btl_sm_eager_limit", "btl_sm_fifo_lazy_free", "btl_sm_fifo_size",
		"btl_sm_free_list_max", "btl_sm_free_list_num", "btl_sm_inline_limit", "btl_sm_max_send_size",
		"btl_sm_segment_min_size", "btl_sm_single_copy", "btl_sm_spin_count", "pml_ob1_spin_count",
		"btl_sm_fbox_threshold", "btl_sm_fbox_max", "btl_sm_fbox_size",
		"btl_tcp_if_include", "btl_tcp_if_exclude", "btl_tcp_eager_limit", "btl_tcp_max_send_size",
		"btl_tcp_timeout", "btl_tcp_port_min", "btl_tcp_port_range", "launcher_base_gomaxprocs",
		"plm_ssh_agent", "pml_ob1_rget_adaptive", "pml_ob1_rget_explore", "pml_ob1_rget_limit", "pml_ob1_rget_max", "pml_ob1_unexpected_limit",
		"pml_ob1_yield_when_idle", "rndv_base_timeout"} {
		if !strings.Contains(out, "\n"+name+" ") {
			t.Errorf("gorun-info does not list %s", name)
		}
	}
}

func TestMCAFlagAndEnvPreview(t *testing.T) {
	code, out, _ := runInfo(t, []string{"GORUN_MCA_pml_base_verbose=debug"}, "--mca", "btl", "sm", "--param", "btl")
	if code != 0 || !strings.Contains(out, "value:    sm\n") || !strings.Contains(out, "source:   flag\n") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	code, out, _ = runInfo(t, []string{"GORUN_MCA_pml_base_verbose=debug"}, "--param=pml_base_verbose")
	if code != 0 || !strings.Contains(out, "source:   env:GORUN_MCA_pml_base_verbose\n") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

func TestFileSource(t *testing.T) {
	wd := t.TempDir()
	path := filepath.Join(wd, "gorun-mca-params.conf")
	if err := os.WriteFile(path, []byte("btl = self\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"--param", "btl"}, nil, wd, t.TempDir(), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "source:   file:"+path+"\n") {
		t.Errorf("output:\n%s", out.String())
	}
}

func TestErrorsExit2(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--param", "btl_base_verbos"}, `gorun-info: unknown parameter "btl_base_verbos"; did you mean "btl_base_verbose"?`},
		{[]string{"--mca", "btl", "openib"}, `btl="openib" (from flag): unknown component "openib"`},
		{[]string{"--mca", "btl"}, "--mca needs NAME and VALUE"},
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		code, _, errOut := runInfo(t, nil, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("gorun-info %q: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

func TestUnknownMCANameWarns(t *testing.T) {
	code, _, errOut := runInfo(t, nil, "--mca", "btl_base_verbos", "info")
	if code != 0 || !strings.Contains(errOut, `unknown parameter "btl_base_verbos" (from flag); did you mean "btl_base_verbose"?`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestJSON(t *testing.T) {
	code, out, _ := runInfo(t, nil, "--json", "--mca", "btl", "^tcp")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var params []map[string]string
	if err := json.Unmarshal([]byte(out), &params); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	found := false
	for _, p := range params {
		for _, k := range []string{"name", "type", "value", "source", "default", "help", "allowed"} {
			if _, ok := p[k]; !ok {
				t.Errorf("%s lacks key %q", p["name"], k)
			}
		}
		if p["name"] == "btl" {
			found = true
			if p["type"] != "selector" || p["value"] != "^tcp" || p["source"] != "flag" || p["default"] != "self,sm,tcp" {
				t.Errorf("btl = %v", p)
			}
		}
	}
	if !found {
		t.Error("--json lacks btl")
	}
}

func TestSplitMCA(t *testing.T) {
	flags, rest, err := splitMCA([]string{"--json", "--mca", "a", "1", "-mca", "b", "--x", "--", "--mca"})
	if err != nil || len(flags) != 2 || flags[0] != [2]string{"a", "1"} || flags[1] != [2]string{"b", "--x"} ||
		strings.Join(rest, " ") != "--json -- --mca" {
		t.Errorf("splitMCA = %q, %q, %v", flags, rest, err)
	}
}
