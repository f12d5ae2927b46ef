package mca

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// demo is a component configuration as components write them.
type demo struct {
	Eager, Max int
	Slots      int64
	Spin       int
	Warn       bool
	Dir        string
	Mode       string
	Env        []string
	BTL        Selection
	NotAParam  string
}

func demoFields() []Field[demo] {
	return []Field[demo]{
		Size("demo_eager_limit", "4k", 0, 1<<20, func(c *demo) *int { return &c.Eager }, "eager limit"),
		Size("demo_max_send_size", "32k", 1<<10, 16<<20, func(c *demo) *int { return &c.Max }, "max send size"),
		Int("demo_slots", "256", 2, 1<<20, func(c *demo) *int64 { return &c.Slots }, "slots; a power of two"),
		Int("demo_spin_count", "1000", 0, 0, func(c *demo) *int { return &c.Spin }, "polls").Deprecated("old_spin_count"),
		Bool("demo_warn", "yes", func(c *demo) *bool { return &c.Warn }, "warn"),
		String("demo_dir", "/dev/shm", func(c *demo) *string { return &c.Dir }, "dir"),
		Enum("demo_mode", "auto", []string{"auto", "none"}, func(c *demo) *string { return &c.Mode }, "mode"),
		List("demo_env", "A,B", func(c *demo) *[]string { return &c.Env }, "env"),
		Selector("demo_btl", "self,sm", []string{"self", "sm", "tcp"}, func(c *demo) *Selection { return &c.BTL }, "btls"),
	}
}

func demoRules() []Rule[demo] {
	return []Rule[demo]{
		{Names: []string{"demo_eager_limit", "demo_max_send_size"}, Check: func(c *demo) string {
			if c.Eager > c.Max {
				return "the eager limit must not exceed the max send size"
			}
			return ""
		}},
		{Names: []string{"demo_slots"}, Check: func(c *demo) string {
			if c.Slots&(c.Slots-1) != 0 {
				return "a power of two"
			}
			return ""
		}},
	}
}

func newDemo(t *testing.T) (*registry, *Component[demo]) {
	r := newRegistry()
	return r, declareIn(r, "demo", demoFields(), demoRules()...)
}

func TestComponentDefaultsAndConfig(t *testing.T) {
	r, k := newDemo(t)
	want := demo{Eager: 4 << 10, Max: 32 << 10, Slots: 256, Spin: 1000, Warn: true, Dir: "/dev/shm", Mode: "auto",
		Env: []string{"A", "B"}, BTL: Selection{[]string{"self", "sm"}}}
	got := k.Defaults()
	if !equalDemo(got, want) {
		t.Fatalf("Defaults = %+v\nwant %+v", got, want)
	}
	s, warns, err := r.Resolve(Inputs{Flags: [][2]string{{"demo_eager_limit", "8k"}, {"demo_btl", "^sm"},
		{"old_spin_count", "7"}, {"demo_env", ""}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], `old_spin_count (from flag) is deprecated; use demo_spin_count`) {
		t.Errorf("warnings %q; want one about the deprecated name", warns)
	}
	c, err := k.Config(s)
	if err != nil {
		t.Fatal(err)
	}
	want.Eager, want.BTL, want.Spin, want.Env = 8<<10, Selection{[]string{"self", "tcp"}}, 7, []string{}
	if !equalDemo(c, want) {
		t.Fatalf("Config = %+v\nwant %+v", c, want)
	}
	if !c.BTL.Has("tcp") || c.BTL.Has("sm") {
		t.Errorf("Selection %v", c.BTL.names)
	}
	// The deprecated name is listed, with its parameter's value and source.
	v, ok := s.Lookup("old_spin_count")
	if !ok || v.Value != "7" || v.Source != SourceFlag || !strings.Contains(v.Param.Help, "demo_spin_count") {
		t.Errorf("Lookup(old_spin_count) = %+v, %v", v, ok)
	}
	// It does not travel in the encoding, and comes back after Decode.
	if strings.Contains(s.Encode(), "old_spin_count") {
		t.Error("Encode holds the deprecated name")
	}
	d, _, err := r.Decode(s.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := d.Lookup("old_spin_count"); !ok || v.Value != "7" {
		t.Errorf("decoded synonym %+v %v", v, ok)
	}
}

// TestDeprecatedNameFromEnvTravels: a value set through a deprecated
// name's environment variable survives Encode and Decode (the launcher's
// Set reaches the ranks), with that variable as its source; a made-up
// source naming another parameter's variable is still refused.
func TestDeprecatedNameFromEnvTravels(t *testing.T) {
	r, k := newDemo(t)
	s, _, err := r.Resolve(Inputs{Environ: []string{"GORUN_MCA_old_spin_count=9"}})
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := r.Decode(s.Encode())
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	c, err := k.Config(d)
	if err != nil || c.Spin != 9 || d.sourceOf("demo_spin_count") != "env:GORUN_MCA_old_spin_count" {
		t.Errorf("decoded spin %d from %q, %v; want 9 from env:GORUN_MCA_old_spin_count", c.Spin, d.sourceOf("demo_spin_count"), err)
	}
	bad := strings.Replace(s.Encode(), "env%3AGORUN_MCA_old_spin_count", "env%3AGORUN_MCA_demo_slots", 1)
	if _, _, err := r.Decode(bad); err == nil || !strings.Contains(err.Error(), "invalid source") {
		t.Errorf("Decode of a source naming another parameter: %v; want invalid source", err)
	}
}

func equalDemo(a, b demo) bool {
	return a.Eager == b.Eager && a.Max == b.Max && a.Slots == b.Slots && a.Spin == b.Spin && a.Warn == b.Warn &&
		a.Dir == b.Dir && a.Mode == b.Mode && slices.Equal(a.Env, b.Env) && slices.Equal(a.BTL.names, b.BTL.names)
}

// TestRulesRefuseInResolve: a combination that breaks a rule is a
// *RuleError from Resolve, naming every parameter with value and source.
func TestRulesRefuseInResolve(t *testing.T) {
	r, _ := newDemo(t)
	tests := []struct {
		flags [][2]string
		env   []string
		want  string // "" = no error
	}{
		{nil, nil, ""},
		{[][2]string{{"demo_eager_limit", "64k"}}, nil,
			`mca: demo_eager_limit="64k" (from flag) and demo_max_send_size="32k" (from default) cannot work together: the eager limit must not exceed the max send size`},
		{[][2]string{{"demo_eager_limit", "64k"}}, []string{"GORUN_MCA_demo_max_send_size=64k"}, ""},
		{nil, []string{"GORUN_MCA_demo_slots=100"},
			`mca: demo_slots="100" (from env:GORUN_MCA_demo_slots) cannot work: a power of two`},
	}
	for _, tt := range tests {
		_, _, err := r.Resolve(Inputs{Flags: tt.flags, Environ: tt.env})
		if tt.want == "" {
			if err != nil {
				t.Errorf("%v %v: %v", tt.flags, tt.env, err)
			}
			continue
		}
		var re *RuleError
		if !errors.As(err, &re) || !errors.Is(err, ErrConflict) || err.Error() != tt.want {
			t.Errorf("%v %v: error %v\nwant %s", tt.flags, tt.env, err, tt.want)
		}
	}
}

// TestValidateHandBuilt: Validate checks a configuration built without mca
// against the same declarations: ranges, allowed values, rules.
func TestValidateHandBuilt(t *testing.T) {
	_, k := newDemo(t)
	mod := func(f func(c *demo)) demo { c := k.Defaults(); f(&c); return c }
	tests := []struct {
		c    demo
		want string
	}{
		{k.Defaults(), ""},
		{mod(func(c *demo) { c.NotAParam = "x" }), ""},
		{mod(func(c *demo) { c.Max = 100 }), `mca: demo_max_send_size="100": out of range; allowed: bytes or a k/m/g suffix (e.g. 4096, 64k, 1m), 1k..16m`},
		{mod(func(c *demo) { c.Eager = 64 << 10 }), `mca: demo_eager_limit="64k" and demo_max_send_size="32k" cannot work together`},
		{mod(func(c *demo) { c.Mode = "always" }), `mca: demo_mode="always": not allowed`},
		{mod(func(c *demo) { c.BTL = Selection{[]string{"ib"}} }), `mca: demo_btl="ib": unknown component "ib"`},
		{mod(func(c *demo) { c.Slots = 3 }), `demo_slots="3" cannot work: a power of two`},
	}
	for _, tt := range tests {
		err := k.Validate(&tt.c)
		if (tt.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), tt.want) && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v\nwant %q", tt.c, err, tt.want)
		}
	}
}

func TestDeclarePanics(t *testing.T) {
	badRule := Rule[demo]{Names: []string{"demo_nope"}, Check: func(*demo) string { return "" }}
	if msg := mustPanic(t, "rule on an undeclared name", func() { declareIn(newRegistry(), "demo", demoFields(), badRule) }); !strings.Contains(msg, `rule names "demo_nope"`) {
		t.Errorf("panic %q", msg)
	}
	breaks := Rule[demo]{Names: []string{"demo_slots"}, Check: func(*demo) string { return "never" }}
	if msg := mustPanic(t, "defaults break a rule", func() { declareIn(newRegistry(), "demo", demoFields(), breaks) }); !strings.Contains(msg, "defaults break a rule") {
		t.Errorf("panic %q", msg)
	}
	r, _ := newDemo(t)
	taken := []Field[demo]{Bool("other", "no", func(c *demo) *bool { return &c.Warn }, "h").Deprecated("old_spin_count")}
	if msg := mustPanic(t, "deprecated name taken", func() { declareIn(r, "other", taken) }); !strings.Contains(msg, "already taken") {
		t.Errorf("panic %q", msg)
	}
}

// declared is registered into the default registry at package init, the
// way components use Declare.
var declared = Declare("mcatest", []Field[demo]{
	Bool("mcatest_declared_flag", "on", func(c *demo) *bool { return &c.Warn }, "h"),
	Selector("btl", "self,sm", []string{"self", "sm"}, func(c *demo) *Selection { return &c.BTL }, "BTLs"),
})

func TestDeclareUsesDefaultRegistry(t *testing.T) {
	if c := declared.Defaults(); !c.Warn {
		t.Errorf("Defaults %+v", c)
	}
	if _, ok := defaultRegistry.Lookup("mcatest_declared_flag"); !ok {
		t.Error("Lookup of a declared parameter failed")
	}
	if defaultRegistry.Closest("mcatest_declared_flg") != "mcatest_declared_flag" {
		t.Error("Closest on the default registry")
	}
}
