package mca

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  error
	}{
		{"0", 0, nil},
		{"4096", 4096, nil},
		{"64k", 65536, nil},
		{"64K", 65536, nil},
		{"1m", 1 << 20, nil},
		{"1M", 1 << 20, nil},
		{"2g", 2 << 30, nil},
		{"2G", 2 << 30, nil},
		{"007", 7, nil},
		{"0k", 0, nil},
		{"9223372036854775807", math.MaxInt64, nil},
		{"8589934591g", 8589934591 << 30, nil}, // largest g that fits
		{"8589934592g", 0, ErrRange},           // 2^33 g = 2^63: overflow
		{"9223372036854775808", 0, ErrRange},
		{"99999999999999999999k", 0, ErrRange},
		{"", 0, ErrSyntax},
		{"k", 0, ErrSyntax},
		{"64q", 0, ErrSyntax},
		{"1.5k", 0, ErrSyntax},
		{" 4k", 0, ErrSyntax},
		{"4k ", 0, ErrSyntax},
		{"4kk", 0, ErrSyntax},
		{"4kb", 0, ErrSyntax}, // no "b" after the suffix: strict by design
		{"4KB", 0, ErrSyntax},
		{"4b", 0, ErrSyntax},
		{"-1", 0, ErrSyntax},
		{"+1", 0, ErrSyntax},
		{"0x10", 0, ErrSyntax},
		{"1_000", 0, ErrSyntax},
		{"4t", 0, ErrSyntax},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if tt.err == nil && (err != nil || got != tt.want) {
			t.Errorf("parseSize(%q) = %d, %v; want %d, nil", tt.in, got, err, tt.want)
		}
		if tt.err != nil && !errors.Is(err, tt.err) {
			t.Errorf("parseSize(%q) = %d, %v; want error %v", tt.in, got, err, tt.err)
		}
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0"}, {1, "1"}, {1000, "1000"}, {1024, "1k"}, {1536, "1536"}, {65536, "64k"},
		{1 << 20, "1m"}, {3 << 30, "3g"}, {1<<30 + 1024, "1048577k"}, {math.MaxInt64, "9223372036854775807"},
		{-5, "-5"},
	}
	for _, tt := range tests {
		if got := formatSize(tt.in); got != tt.want {
			t.Errorf("formatSize(%d) = %q; want %q", tt.in, got, tt.want)
		}
		if tt.in >= 0 {
			if back, err := parseSize(tt.want); err != nil || back != tt.in {
				t.Errorf("parseSize(formatSize(%d)) = %d, %v", tt.in, back, err)
			}
		}
	}
}

func TestParseBool(t *testing.T) {
	for _, in := range []string{"true", "TRUE", "True", "1", "yes", "YES", "on", "On"} {
		if b, err := parseBool(in); err != nil || !b {
			t.Errorf("parseBool(%q) = %v, %v; want true, nil", in, b, err)
		}
	}
	for _, in := range []string{"false", "FALSE", "0", "no", "No", "off", "OFF"} {
		if b, err := parseBool(in); err != nil || b {
			t.Errorf("parseBool(%q) = %v, %v; want false, nil", in, b, err)
		}
	}
	for _, in := range []string{"", "2", "y", "n", "t", " true", "true ", "enable", "-1"} {
		if _, err := parseBool(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("parseBool(%q) error = %v; want ErrSyntax", in, err)
		}
	}
}

func TestParseValue(t *testing.T) {
	byName := map[string]*Param{}
	for _, p := range testTable() {
		byName[p.Name] = &p
	}
	neg := &Param{Name: "x_neg", Type: TypeInt, Min: -10, Max: 10}
	anyInt := &Param{Name: "x_any", Type: TypeInt, Min: math.MinInt64}
	tests := []struct {
		p        *Param
		in       string
		err      error
		num      int64
		list     []string
		excluded bool
	}{
		// int: decimal, optional sign, Min..Max inclusive.
		{p: byName["btl_sm_fifo_size"], in: "1", num: 1},
		{p: byName["btl_sm_fifo_size"], in: "4096", num: 4096},
		{p: byName["btl_sm_fifo_size"], in: "+7", num: 7},
		{p: byName["btl_sm_fifo_size"], in: "0", err: ErrRange},
		{p: byName["btl_sm_fifo_size"], in: "4097", err: ErrRange},
		{p: byName["btl_sm_fifo_size"], in: "4k", err: ErrSyntax},
		{p: byName["btl_sm_fifo_size"], in: "", err: ErrSyntax},
		{p: byName["btl_sm_fifo_size"], in: " 5", err: ErrSyntax},
		{p: byName["btl_sm_fifo_size"], in: "99999999999999999999", err: ErrRange},
		{p: neg, in: "-10", num: -10},
		{p: neg, in: "-11", err: ErrRange},
		{p: anyInt, in: "-9223372036854775808", num: math.MinInt64},
		{p: anyInt, in: "9223372036854775807", num: math.MaxInt64},
		// size: Min..Max in bytes.
		{p: byName["btl_sm_eager_limit"], in: "1g", num: 1 << 30},
		{p: byName["btl_sm_eager_limit"], in: "1073741825", err: ErrRange},
		{p: byName["btl_sm_eager_limit"], in: "64q", err: ErrSyntax},
		// enum: case-sensitive.
		{p: byName["btl_base_verbose"], in: "debug"},
		{p: byName["btl_base_verbose"], in: "DEBUG", err: ErrNotAllowed},
		{p: byName["btl_base_verbose"], in: "loud", err: ErrNotAllowed},
		{p: byName["btl_base_verbose"], in: "", err: ErrNotAllowed},
		// string: anything.
		{p: byName["rndv_base_dir"], in: " any thing, at all #"},
		// list: trimmed items, none empty; empty value = empty list.
		{p: byName["launcher_base_env"], in: "", list: []string{}},
		{p: byName["launcher_base_env"], in: "  ", list: []string{}},
		{p: byName["launcher_base_env"], in: "a", list: []string{"a"}},
		{p: byName["launcher_base_env"], in: " a , b,c ", list: []string{"a", "b", "c"}},
		{p: byName["launcher_base_env"], in: "a,,b", err: ErrSyntax},
		{p: byName["launcher_base_env"], in: "a,", err: ErrSyntax},
		{p: byName["launcher_base_env"], in: ",a", err: ErrSyntax},
		// selector.
		{p: byName["btl"], in: "self,sm", list: []string{"self", "sm"}},
		{p: byName["btl"], in: "sm", list: []string{"sm"}},
		{p: byName["btl"], in: "sm, self", list: []string{"sm", "self"}},
		{p: byName["btl"], in: "sm,sm", list: []string{"sm"}},
		{p: byName["btl"], in: "^sm", list: []string{"sm"}, excluded: true},
		{p: byName["btl"], in: "^tcp", list: []string{"tcp"}, excluded: true},
		{p: byName["btl"], in: "^tcp,sm", list: []string{"tcp", "sm"}, excluded: true},
		{p: byName["btl"], in: " ^ sm", list: []string{"sm"}, excluded: true},
		{p: byName["btl"], in: "self,tcp", err: ErrNotAllowed},
		{p: byName["btl"], in: "self,^sm", err: ErrSyntax},
		{p: byName["btl"], in: "^self,^sm", err: ErrSyntax},
		{p: byName["btl"], in: "", err: ErrSyntax},
		{p: byName["btl"], in: "^", err: ErrSyntax},
		{p: byName["btl"], in: "self,", err: ErrSyntax},
		{p: byName["btl"], in: "SM", err: ErrNotAllowed},
	}
	for _, tt := range tests {
		v, _, err := parseValue(tt.p, tt.in)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("parseValue(%s, %q) error = %v; want %v", tt.p.Name, tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseValue(%s, %q) error = %v; want nil", tt.p.Name, tt.in, err)
			continue
		}
		if v.num != tt.num || v.exclude != tt.excluded || v.raw != tt.in ||
			(tt.list != nil && !slices.Equal(v.list, tt.list)) {
			t.Errorf("parseValue(%s, %q) = %+v; want num %d, list %q, exclude %v",
				tt.p.Name, tt.in, v, tt.num, tt.list, tt.excluded)
		}
	}
}

func TestSelectorWarnsOnUnknownExclude(t *testing.T) {
	p := &Param{Name: "btl", Type: TypeSelector, Allowed: []string{"self", "sm"}}
	_, warns, err := parseValue(p, "^tcp,sm")
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0], `"tcp"`) || !strings.Contains(warns[0], "self, sm") {
		t.Fatalf(`parseValue(btl, "^tcp,sm") = warnings %q, %v; want one warning naming tcp and the known ones`, warns, err)
	}
	if _, warns, _ := parseValue(p, "^sm"); len(warns) != 0 {
		t.Errorf(`parseValue(btl, "^sm") warnings = %q; want none`, warns)
	}
}

func TestParamErrorText(t *testing.T) {
	r := newTestRegistry(t)
	_, _, err := r.Resolve(Inputs{Flags: [][2]string{{"btl_sm_eager_limit", "64q"}}})
	want := `mca: btl_sm_eager_limit="64q" (from flag): invalid size; allowed: bytes or a k/m/g suffix (e.g. 4096, 64k, 1m), 0..1g`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Name != "btl_sm_eager_limit" || pe.Value != "64q" || pe.Source != "flag" ||
		!errors.Is(err, ErrSyntax) {
		t.Fatalf("error = %#v; want a *ParamError wrapping ErrSyntax", err)
	}

	_, _, err = r.Resolve(Inputs{Flags: [][2]string{{"btl", "self,tcp"}}})
	want = `mca: btl="self,tcp" (from flag): unknown component "tcp"; allowed: comma-separated components from self, sm, or "^" then the components to exclude`
	if err == nil || err.Error() != want || !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}

	_, _, err = r.Resolve(Inputs{Environ: []string{"GORUN_MCA_btl_sm_fifo_size=0"}})
	want = `mca: btl_sm_fifo_size="0" (from env:GORUN_MCA_btl_sm_fifo_size): out of range; allowed: an integer, 1..4096`
	if err == nil || err.Error() != want || !errors.Is(err, ErrRange) {
		t.Fatalf("error = %v\nwant    %s", err, want)
	}
}

func TestTypeString(t *testing.T) {
	want := []string{"int", "size", "bool", "string", "enum", "list", "selector"}
	for i, w := range want {
		if got := Type(i).String(); got != w {
			t.Errorf("Type(%d).String() = %q; want %q", i, got, w)
		}
	}
	if got := Type(99).String(); got != "Type(99)" {
		t.Errorf("Type(99).String() = %q", got)
	}
}
