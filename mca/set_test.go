package mca

import (
	"slices"
	"strings"
	"testing"
)

func TestGettersPanicOnMisuse(t *testing.T) {
	s := newTestRegistry(t).Defaults()
	tests := []struct {
		what string
		f    func()
		want string
	}{
		{"Int of unknown", func() { s.getInt("nope") }, `Set.Int("nope"): no such parameter`},
		{"Int of size", func() { s.getInt("btl_sm_eager_limit") }, `Set.Int("btl_sm_eager_limit"): parameter is of type size`},
		{"Size of int", func() { s.getSize("btl_sm_fifo_size") }, "of type int"},
		{"Bool of string", func() { s.getBool("rndv_base_dir") }, "of type string"},
		{"String of bool", func() { s.getString("pml_base_warn") }, "of type bool"},
		{"List of selector", func() { s.getList("btl") }, "of type selector"},
		{"Selected of list", func() { s.Selected("launcher_base_env", "x") }, "of type list"},
		{"Selected unknown component", func() { s.Selected("btl", "tcp") }, `Set.Selected("btl", "tcp"): unknown component`},
		{"Source of unknown", func() { s.sourceOf("nope") }, `Set.Source("nope")`},
		{"Selection of enum", func() { s.selectionOf("btl_base_verbose") }, "of type enum"},
	}
	for _, tt := range tests {
		if msg := mustPanic(t, tt.what, tt.f); !strings.Contains(msg, tt.want) {
			t.Errorf("%s: panic %q; want it to contain %q", tt.what, msg, tt.want)
		}
	}
}

func TestGetters(t *testing.T) {
	s, _, err := newTestRegistry(t).Resolve(Inputs{Flags: [][2]string{
		{"btl_sm_eager_limit", "64K"}, {"btl_sm_fifo_size", "128"}, {"pml_base_warn", "No"},
		{"rndv_base_dir", "/x y"}, {"btl_base_verbose", "trace"}, {"launcher_base_env", "A, B"},
		{"btl", "sm"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if s.getSize("btl_sm_eager_limit") != 65536 || s.getInt("btl_sm_fifo_size") != 128 || s.getBool("pml_base_warn") ||
		s.getString("rndv_base_dir") != "/x y" || s.getString("btl_base_verbose") != "trace" ||
		!slices.Equal(s.getList("launcher_base_env"), []string{"A", "B"}) {
		t.Errorf("getters: %v %v %v %q %q %q", s.getSize("btl_sm_eager_limit"), s.getInt("btl_sm_fifo_size"),
			s.getBool("pml_base_warn"), s.getString("rndv_base_dir"), s.getString("btl_base_verbose"), s.getList("launcher_base_env"))
	}
	if s.Selected("btl", "self") || !s.Selected("btl", "sm") {
		t.Errorf("btl=sm: self %v sm %v", s.Selected("btl", "self"), s.Selected("btl", "sm"))
	}
	// List returns a copy.
	s.getList("launcher_base_env")[0] = "changed"
	if s.getList("launcher_base_env")[0] != "A" {
		t.Error("List returned the Set's own slice")
	}
}

func TestSelection(t *testing.T) {
	r := newRegistry()
	r.Register("c", []Param{{Name: "fw", Type: TypeSelector, Default: "a,b,c", Allowed: []string{"a", "b", "c"}, Help: "h"}})
	tests := []struct {
		in   string
		want []string
	}{
		{"c,a", []string{"c", "a"}},
		{"^b", []string{"a", "c"}},
		{"^zz", []string{"a", "b", "c"}},
		{"^a,b,c", nil},
	}
	for _, tt := range tests {
		s, _, err := r.Resolve(Inputs{Flags: [][2]string{{"fw", tt.in}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.selectionOf("fw"); !slices.Equal(got, tt.want) {
			t.Errorf("fw=%q: Selection = %q; want %q", tt.in, got, tt.want)
		}
		for _, c := range []string{"a", "b", "c"} {
			if s.Selected("fw", c) != slices.Contains(tt.want, c) {
				t.Errorf("fw=%q: Selected(%q) = %v", tt.in, c, s.Selected("fw", c))
			}
		}
	}
}

func TestAllAndLookup(t *testing.T) {
	s, _, err := newTestRegistry(t).Resolve(Inputs{Flags: [][2]string{{"btl_sm_eager_limit", "8k"}}})
	if err != nil {
		t.Fatal(err)
	}
	all := s.All()
	if len(all) != len(testTable()) {
		t.Fatalf("All() has %d values; want %d", len(all), len(testTable()))
	}
	if !slices.IsSortedFunc(all, func(a, b Value) int { return strings.Compare(a.Param.Name, b.Param.Name) }) {
		t.Error("All() is not sorted by name")
	}
	v, ok := s.Lookup("btl_sm_eager_limit")
	if !ok || v.Value != "8k" || v.Source != "flag" || v.Param.Default != "4k" || v.Param.Type != TypeSize ||
		!strings.Contains(v.Allowed(), "0..1g") {
		t.Errorf("Lookup = %+v, %v", v, ok)
	}
	v, _ = s.Lookup("btl")
	v.Param.Allowed[0] = "changed"
	if w, _ := s.Lookup("btl"); w.Param.Allowed[0] != "self" {
		t.Error("Lookup exposed the Set's Allowed slice")
	}
	if _, ok := s.Lookup("nope"); ok {
		t.Error("Lookup(nope) = true")
	}
}
