package mca

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	r := newTestRegistry(t)
	home := t.TempDir()
	path := writeFile(t, home, HomeFile, "btl_sm_fifo_size = 33\n")
	s, _, err := r.Resolve(Inputs{
		Flags: [][2]string{
			{"rndv_base_dir", "odd ;,%+=&\x00\n\tvalue é"}, // every separator and escape of the format
			{"btl", "^tcp"},
		},
		Environ: []string{"GORUN_MCA_btl_sm_eager_limit=64K"},
		Home:    home,
	})
	if err != nil {
		t.Fatal(err)
	}
	enc := s.Encode()
	if strings.ContainsAny(enc, "\x00\n=") {
		t.Errorf("Encode() = %q; not a safe environment value", enc)
	}
	d, warns, err := r.Decode(enc)
	if err != nil || len(warns) != 0 {
		t.Fatalf("Decode(Encode()) = %v, warnings %q", err, warns)
	}
	if !equalValues(d.All(), s.All()) {
		t.Errorf("Decode(Encode()).All() =\n%+v\nwant\n%+v", d.All(), s.All())
	}
	if d.getString("rndv_base_dir") != "odd ;,%+=&\x00\n\tvalue é" || d.sourceOf("rndv_base_dir") != "flag" ||
		d.getSize("btl_sm_eager_limit") != 65536 || d.sourceOf("btl_sm_eager_limit") != "env:GORUN_MCA_btl_sm_eager_limit" ||
		d.getInt("btl_sm_fifo_size") != 33 || d.sourceOf("btl_sm_fifo_size") != "file:"+path ||
		d.Selected("btl", "sm") != true || d.sourceOf("pml_base_warn") != "default" {
		t.Errorf("decoded set differs: %s", d.Encode())
	}
	if d.Encode() != enc {
		t.Errorf("Encode is not stable:\n%s\n%s", d.Encode(), enc)
	}
}

func equalValues(a, b []Value) bool {
	return slices.EqualFunc(a, b, func(x, y Value) bool {
		return x.Param.Name == y.Param.Name && x.Value == y.Value && x.Source == y.Source
	})
}

func TestDecodeRejectsGarbage(t *testing.T) {
	r := newTestRegistry(t)
	good := r.Defaults().Encode()
	tests := []struct {
		name, enc, want string
	}{
		{"empty", "", "does not start with"},
		{"other version", "gorun-mca/2;btl,default,sm", "does not start with"},
		{"json", `{"btl":"sm"}`, "does not start with"},
		{"two fields", "gorun-mca/1;btl,default", "has 2 fields"},
		{"four fields", "gorun-mca/1;btl,default,sm,x", "has 4 fields"},
		{"empty entry", good + ";", "has 1 fields"},
		{"bad escape", "gorun-mca/1;btl,default,%zz", "bad escaping"},
		{"bad name", "gorun-mca/1;a-b,default,1", "invalid parameter name"},
		{"empty name", "gorun-mca/1;,default,1", "invalid parameter name"},
		{"bad source", "gorun-mca/1;btl,cmdline,sm", "invalid source"},
		{"env source of another name", "gorun-mca/1;btl,env%3AGORUN_MCA_pml,sm", "invalid source"},
		{"file source without path", "gorun-mca/1;btl,file%3A,sm", "invalid source"},
		{"duplicate", "gorun-mca/1;btl,flag,sm;btl,flag,self", "appears twice"},
		{"invalid value", "gorun-mca/1;btl_sm_eager_limit,flag,64q", `btl_sm_eager_limit="64q" (from flag): invalid size`},
		{"invalid selector", "gorun-mca/1;btl,flag,tcp", `unknown component "tcp"`},
	}
	for _, tt := range tests {
		s, _, err := r.Decode(tt.enc)
		if err == nil || s != nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "mca: ") {
			t.Errorf("%s: Decode(%q) = %v; want an error containing %q", tt.name, tt.enc, err, tt.want)
		}
	}
	_, _, err := r.Decode("gorun-mca/1;btl_sm_eager_limit,flag,64q")
	var pe *ParamError
	if !errors.As(err, &pe) || !errors.Is(err, ErrSyntax) || pe.Name != "btl_sm_eager_limit" {
		t.Errorf("invalid value: error %v does not wrap a *ParamError and ErrSyntax", err)
	}
}

// TestDecodeVersionSkew: names the rank does not know are skipped, names it
// knows but the launcher did not send take their default; both warn.
func TestDecodeVersionSkew(t *testing.T) {
	r := newTestRegistry(t)
	s, warns, err := r.Decode("gorun-mca/1;btl,flag,sm;btl_tcp_port,flag,5")
	if err != nil {
		t.Fatal(err)
	}
	if s.sourceOf("btl") != "flag" || s.Selected("btl", "self") || s.sourceOf("btl_sm_fifo_size") != "default" ||
		s.getInt("btl_sm_fifo_size") != 64 {
		t.Errorf("decoded: %s", s.Encode())
	}
	if len(warns) != len(testTable()) || !strings.Contains(strings.Join(warns, "\n"), `"btl_tcp_port", unknown to this program`) ||
		!strings.Contains(strings.Join(warns, "\n"), `lacks parameter "btl_sm_fifo_size"; using its default`) {
		t.Errorf("warnings = %q", warns)
	}
}
