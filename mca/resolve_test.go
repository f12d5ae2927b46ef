package mca

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPrecedence checks each source against every weaker one, with source
// tracking: flag > env > working-directory file > home file > default.
func TestPrecedence(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	homeFile := writeFile(t, home, HomeFile, "btl_sm_fifo_size = 1\nbtl_sm_eager_limit = 1k\nrndv_base_dir = home\npml_base_warn = off\n")
	wdFile := writeFile(t, wd, WorkDirFile, "btl_sm_fifo_size = 2\nbtl_sm_eager_limit = 2k\nrndv_base_dir = wd\n")
	in := Inputs{
		Flags: [][2]string{{"btl_sm_fifo_size", "4"}, {"btl_sm_fifo_size", "5"}}, // later flag wins
		Environ: []string{
			"GORUN_MCA_btl_sm_fifo_size=3", "GORUN_MCA_btl_sm_eager_limit=3k", "PATH=/bin",
			"gorun_mca_rndv_base_dir=lowercase-prefix-is-not-ours",
		},
		WorkDir: wd,
		Home:    home,
	}
	s, warns, err := newTestRegistry(t).Resolve(in)
	if err != nil || len(warns) != 0 {
		t.Fatalf("Resolve: %v, warnings %q", err, warns)
	}
	checks := []struct {
		name, src string
		got, want any
	}{
		{"btl_sm_fifo_size", "flag", s.getInt("btl_sm_fifo_size"), int64(5)},
		{"btl_sm_eager_limit", "env:GORUN_MCA_btl_sm_eager_limit", s.getSize("btl_sm_eager_limit"), int64(3 << 10)},
		{"rndv_base_dir", "file:" + wdFile, s.getString("rndv_base_dir"), "wd"},
		{"pml_base_warn", "file:" + homeFile, s.getBool("pml_base_warn"), false},
		{"btl_base_verbose", "default", s.getString("btl_base_verbose"), "warn"},
	}
	for _, c := range checks {
		if c.got != c.want || s.sourceOf(c.name) != c.src {
			t.Errorf("%s = %v from %q; want %v from %q", c.name, c.got, s.sourceOf(c.name), c.want, c.src)
		}
	}
}

func TestResolveNoInputsGivesDefaults(t *testing.T) {
	r := newTestRegistry(t)
	s, warns, err := r.Resolve(Inputs{WorkDir: t.TempDir(), Home: t.TempDir()}) // files missing: fine
	if err != nil || len(warns) != 0 {
		t.Fatalf("Resolve: %v, %q", err, warns)
	}
	if s.Encode() != r.Defaults().Encode() {
		t.Errorf("Resolve with no inputs = %s\nwant defaults %s", s.Encode(), r.Defaults().Encode())
	}
}

func TestEnvNamesAreCaseSensitiveAndResolvedIsSkipped(t *testing.T) {
	s, warns, err := newTestRegistry(t).Resolve(Inputs{Environ: []string{
		"GORUN_MCA_BTL_SM_FIFO_SIZE=9", // not the declared case: unknown
		EnvResolved + "=garbage",       // never a parameter
		"GORUN_MCA_btl_sm_fifo_size=8",
		"GORUN_MCA_btl_sm_fifo_size=9", // later duplicate wins
		"GORUN_MCA_noequals",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if s.getInt("btl_sm_fifo_size") != 9 {
		t.Errorf("btl_sm_fifo_size = %d; want 9", s.getInt("btl_sm_fifo_size"))
	}
	want := []string{`mca: unknown parameter "BTL_SM_FIFO_SIZE" (from env:GORUN_MCA_BTL_SM_FIFO_SIZE); did you mean "btl_sm_fifo_size"?`}
	if !slices.Equal(warns, want) {
		t.Errorf("warnings = %q\nwant %q", warns, want)
	}
}

func TestUnknownNameWarnsWithClosest(t *testing.T) {
	home := t.TempDir()
	path := writeFile(t, home, HomeFile, "btl_sm_eagr_limit = 4k\n")
	s, warns, err := newTestRegistry(t).Resolve(Inputs{
		Flags:   [][2]string{{"btl_sm_fifo_sise", "3"}},
		Environ: []string{"GORUN_MCA_btl_sm_eagr_limit=64k"},
		Home:    home,
	})
	if err != nil || s == nil {
		t.Fatalf("Resolve: %v; an unknown name must not be an error", err)
	}
	want := []string{
		`mca: unknown parameter "btl_sm_fifo_sise" (from flag); did you mean "btl_sm_fifo_size"?`,
		`mca: unknown parameter "btl_sm_eagr_limit" (from env:GORUN_MCA_btl_sm_eagr_limit); did you mean "btl_sm_eager_limit"?`,
		`mca: unknown parameter "btl_sm_eagr_limit" (from file:` + path + `); did you mean "btl_sm_eager_limit"?`,
	}
	if !slices.Equal(warns, want) {
		t.Errorf("warnings =\n%s\nwant\n%s", strings.Join(warns, "\n"), strings.Join(want, "\n"))
	}
}

func TestExcludeUnknownComponentIsAWarning(t *testing.T) {
	s, warns, err := newTestRegistry(t).Resolve(Inputs{Flags: [][2]string{{"btl", "^tcp"}}})
	if err != nil {
		t.Fatalf("btl=^tcp: %v; want it to work", err)
	}
	if !s.Selected("btl", "self") || !s.Selected("btl", "sm") {
		t.Errorf("btl=^tcp must select self and sm")
	}
	if len(warns) != 1 || !strings.Contains(warns[0], `btl="^tcp" (from flag): excludes unknown component "tcp"`) {
		t.Errorf("warnings = %q", warns)
	}
}

// TestEveryValueIsValidated: a bad value in a weaker source is an error even
// when a stronger source overrides it, and the first one reported is from
// the strongest source.
func TestEveryValueIsValidated(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	homeFile := writeFile(t, home, HomeFile, "# comment\nbtl_sm_eager_limit = 64q\n")
	r := newTestRegistry(t)
	_, _, err := r.Resolve(Inputs{Flags: [][2]string{{"btl_sm_eager_limit", "4k"}}, Home: home})
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Source != "file:"+homeFile || pe.Line != 2 || pe.Value != "64q" {
		t.Fatalf("error = %v; want the overridden bad value from %s line 2", err, homeFile)
	}
	if !strings.Contains(err.Error(), "(from file:"+homeFile+":2)") {
		t.Errorf("error %q does not name file:line", err)
	}

	writeFile(t, wd, WorkDirFile, "btl_sm_fifo_size = 0\n")
	_, _, err = r.Resolve(Inputs{
		Flags:   [][2]string{{"btl_base_verbose", "loud"}},
		Environ: []string{"GORUN_MCA_pml_base_warn=maybe"},
		WorkDir: wd, Home: home,
	})
	if !errors.As(err, &pe) || pe.Name != "btl_base_verbose" || pe.Source != "flag" {
		t.Fatalf("error = %v; want the flag's bad value first", err)
	}
	_, _, err = r.Resolve(Inputs{Environ: []string{"GORUN_MCA_pml_base_warn=maybe"}, WorkDir: wd, Home: home})
	if !errors.As(err, &pe) || pe.Name != "pml_base_warn" {
		t.Fatalf("error = %v; want the env's bad value before the files'", err)
	}
	_, _, err = r.Resolve(Inputs{WorkDir: wd, Home: home})
	if !errors.As(err, &pe) || pe.Name != "btl_sm_fifo_size" || pe.Line != 1 {
		t.Fatalf("error = %v; want the working-directory file before the home file", err)
	}
}

func TestParamFileErrors(t *testing.T) {
	tests := []struct {
		content string
		line    int
		want    string
	}{
		{"btl = sm\nthis line has no equals\n", 2, `missing "="`},
		{"\n\n  = 4k\n", 3, "invalid parameter name"},
		{"btl sm = self\n", 1, "invalid parameter name"},
		{"a=1\n#x\nb\n", 3, `missing "="`},
	}
	for _, tt := range tests {
		wd := t.TempDir()
		path := writeFile(t, wd, WorkDirFile, tt.content)
		_, _, err := newTestRegistry(t).Resolve(Inputs{WorkDir: wd})
		var fe *FileError
		if !errors.As(err, &fe) || fe.Path != path || fe.Line != tt.line || !errors.Is(err, ErrSyntax) ||
			!strings.Contains(err.Error(), path+":"+strconv.Itoa(tt.line)+": ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("file %q: error = %v; want %s:%d ... %s", tt.content, err, path, tt.line, tt.want)
		}
	}
}

func TestUnreadableParamFileIsAnError(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, HomeFile) // a directory where the file should be
	writeFile(t, dir, "x", "")
	_, _, err := newTestRegistry(t).Resolve(Inputs{Home: home})
	var fe *FileError
	if !errors.As(err, &fe) || fe.Path != dir || !strings.Contains(err.Error(), dir) {
		t.Fatalf("error = %v; want a *FileError naming %s", err, dir)
	}
}

func TestParseParamFileSyntax(t *testing.T) {
	data := "# full-line comment\n\n  a_b = 1 2 # trailing comment\nc=\n d = x=y\r\n e = #only a comment\nf=\"q\"\ng = 1\ng = 2\n"
	got, err := parseParamFile("p", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := []fileEntry{{"a_b", "1 2", 3}, {"c", "", 4}, {"d", "x=y", 5}, {"e", "", 6}, {"f", `"q"`, 7}, {"g", "1", 8}, {"g", "2", 9}}
	if !slices.Equal(got, want) {
		t.Errorf("parseParamFile = %+v\nwant %+v", got, want)
	}
}

func TestLaterFileLineWins(t *testing.T) {
	wd := t.TempDir()
	writeFile(t, wd, WorkDirFile, "btl_sm_fifo_size = 7\nbtl_sm_fifo_size = 8\n")
	s, _, err := newTestRegistry(t).Resolve(Inputs{WorkDir: wd})
	if err != nil || s.getInt("btl_sm_fifo_size") != 8 {
		t.Fatalf("Resolve = %v; want btl_sm_fifo_size 8 from the later line", err)
	}
}
