package mca

import (
	"strings"
	"sync"
	"testing"
)

func TestRegisterPanics(t *testing.T) {
	ok := Param{Name: "x_y_z", Type: TypeInt, Default: "1", Help: "h"}
	with := func(f func(p *Param)) []Param { p := ok; f(&p); return []Param{p} }
	tests := []struct {
		name  string
		table []Param
		want  string
	}{
		{"duplicate in registry", []Param{{Name: "btl", Type: TypeString, Help: "h"}}, `already registered by component "test"`},
		{"duplicate in table", []Param{ok, ok}, "appears twice"},
		{"empty name", with(func(p *Param) { p.Name = "" }), "invalid name"},
		{"bad name", with(func(p *Param) { p.Name = "a-b" }), "invalid name"},
		{"RESOLVED", with(func(p *Param) { p.Name = "RESOLVED" }), "clashes"},
		{"bad type", with(func(p *Param) { p.Type = 42 }), "unknown Type"},
		{"no help", with(func(p *Param) { p.Help = "" }), "Help"},
		{"two-line help", with(func(p *Param) { p.Help = "a\nb" }), "Help"},
		{"bad default", with(func(p *Param) { p.Default = "x" }), `invalid Default "x"`},
		{"default out of range", with(func(p *Param) { p.Min, p.Max = 5, 9 }), "out of range"},
		{"min > max", with(func(p *Param) { p.Min, p.Max = 9, 5; p.Default = "9" }), "Min 9 > Max 5"},
		{"negative size min", []Param{{Name: "s", Type: TypeSize, Default: "1", Min: -1, Help: "h"}}, "negative"},
		{"enum without allowed", []Param{{Name: "e", Type: TypeEnum, Default: "a", Help: "h"}}, "needs Allowed"},
		{"repeated allowed", []Param{{Name: "e", Type: TypeEnum, Default: "a", Allowed: []string{"a", "a"}, Help: "h"}}, "repeated"},
		{"selector component with comma", []Param{{Name: "sel", Type: TypeSelector, Default: "a", Allowed: []string{"a", "b,c"}, Help: "h"}}, "contains"},
		{"selector default excludes unknown", []Param{{Name: "sel", Type: TypeSelector, Default: "^zz", Allowed: []string{"a"}, Help: "h"}}, "unknown component"},
	}
	for _, tt := range tests {
		r := newTestRegistry(t)
		before := r.Names()
		msg := mustPanic(t, tt.name, func() { r.Register("other", tt.table) })
		if !strings.Contains(msg, tt.want) || !strings.HasPrefix(msg, "mca: ") {
			t.Errorf("%s: panic %q; want it to contain %q", tt.name, msg, tt.want)
		}
		if got := r.Names(); len(got) != len(before) {
			t.Errorf("%s: a panicking Register added %d parameters", tt.name, len(got)-len(before))
		}
	}
}

func TestRegisterCopiesAllowed(t *testing.T) {
	allowed := []string{"a", "b"}
	r := newRegistry()
	r.Register("c", []Param{{Name: "e", Type: TypeEnum, Default: "a", Allowed: allowed, Help: "h"}})
	allowed[0] = "zzz"
	if p, _ := r.Lookup("e"); p.Allowed[0] != "a" {
		t.Errorf("Register kept the caller's slice: Allowed = %q", p.Allowed)
	}
}

func TestConcurrentRegisterAndResolve(t *testing.T) {
	r := newRegistry()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r.Register("c", []Param{{Name: "p" + string(rune('a'+i)), Type: TypeBool, Default: "no", Help: "h"}})
		}()
		go func() {
			defer wg.Done()
			if _, _, err := r.Resolve(Inputs{}); err != nil {
				t.Error(err)
			}
			r.Closest("pa")
		}()
	}
	wg.Wait()
	if n := len(r.Names()); n != 8 {
		t.Errorf("registered %d; want 8", n)
	}
}

func TestClosest(t *testing.T) {
	r := newTestRegistry(t)
	tests := []struct{ in, want string }{
		{"btl_sm_eagr_limit", "btl_sm_eager_limit"},
		{"BTL_SM_EAGER_LIMIT", "btl_sm_eager_limit"},
		{"btl_sm_fifo", "btl_sm_fifo_size"},
		{"btls", "btl"},
		{"verbose", "btl_base_verbose"},
		{"btl", "btl"},
	}
	for _, tt := range tests {
		if got := r.Closest(tt.in); got != tt.want {
			t.Errorf("Closest(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	if got := newRegistry().Closest("x"); got != "" {
		t.Errorf("Closest on an empty registry = %q; want \"\"", got)
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"eagr", "eager", 1}, {"abc", "abc", 0},
		{"flaw", "lawn", 2},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d; want %d", tt.a, tt.b, got, tt.want)
		}
		if got := editDistance(tt.b, tt.a); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d; want %d", tt.b, tt.a, got, tt.want)
		}
	}
}

// TestBaseTable checks the parameters mca registers itself.
func TestBaseTable(t *testing.T) {
	s := defaultRegistry.Defaults()
	for _, fw := range []string{"btl", "pml", "mpool", "rndv", "launcher"} {
		if got := s.getString(fw + "_base_verbose"); got != "warn" {
			t.Errorf("%s_base_verbose = %q; want warn", fw, got)
		}
	}
}
