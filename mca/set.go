package mca

import (
	"fmt"
	"slices"
	"sort"
)

// Source strings for values that did not come from a file or the environment.
const (
	SourceDefault = "default" // the declared Default
	SourceFlag    = "flag"    // gorun --mca NAME VALUE (or gorun-info --mca)
)

// Set is a resolved set of parameter values, each validated and tagged with
// its source. A Set never changes after it is built: it is safe for
// concurrent reads. Getters panic on a name that is not in the Set or has
// another type (a programmer error), with a message naming both.
type Set struct {
	vals map[string]setValue
}

// setValue is one resolved parameter.
type setValue struct {
	p     Param
	v     value
	src   string
	line  int  // line in the file, for a "file:" source
	alias bool // a deprecated name's entry: a copy of its parameter's
}

// lookup returns name's value; a nil Set holds nothing.
func (s *Set) lookup(name string) (setValue, bool) {
	if s == nil {
		return setValue{}, false
	}
	sv, ok := s.vals[name]
	return sv, ok
}

func newSet(n int) *Set { return &Set{vals: make(map[string]setValue, n)} }

// Value is one parameter of a Set, as gorun-info shows it.
type Value struct {
	Param  Param  // the declaration (Allowed is a copy)
	Value  string // the value as given in its source
	Source string // "default", "file:PATH", "env:GORUN_MCA_<name>" or "flag"
}

// Allowed says in words what the parameter accepts (the text of ParamError).
func (v Value) Allowed() string { return allowedText(&v.Param) }

// get returns name's value, panicking when it is unknown or not of one of types.
func (s *Set) get(name string, getter string, types ...Type) setValue {
	sv, ok := s.vals[name]
	if !ok {
		panic(fmt.Sprintf("mca: Set.%s(%q): no such parameter (not registered before the Set was built)", getter, name))
	}
	if !slices.Contains(types, sv.p.Type) {
		panic(fmt.Sprintf("mca: Set.%s(%q): parameter is of type %v, want %v", getter, name, sv.p.Type, types))
	}
	return sv
}

// Int returns a TypeInt parameter.
func (s *Set) getInt(name string) int64 { return s.get(name, "Int", TypeInt).v.num }

// Size returns a TypeSize parameter, in bytes.
func (s *Set) getSize(name string) int64 { return s.get(name, "Size", TypeSize).v.num }

// Bool returns a TypeBool parameter.
func (s *Set) getBool(name string) bool { return s.get(name, "Bool", TypeBool).v.b }

// String returns a TypeString parameter, or the value of a TypeEnum
// parameter (always exactly one of its Allowed values).
func (s *Set) getString(name string) string {
	return s.get(name, "String", TypeString, TypeEnum).v.raw
}

// List returns the items of a TypeList parameter (trimmed, none empty; an
// empty value gives an empty list). The caller owns the returned slice.
func (s *Set) getList(name string) []string {
	return slices.Clone(s.get(name, "List", TypeList).v.list)
}

// Selected reports whether component is selected by the TypeSelector
// parameter selector: listed in an include value, or not listed in an
// exclude value. It panics when component is not one of the selector's
// Allowed components (a programmer error). Components read their own
// selection from their Config; this is for checks that tie a selection to
// a setting outside mca (the launcher's btl selection against -np).
func (s *Set) Selected(selector, component string) bool {
	sv := s.get(selector, "Selected", TypeSelector)
	if !slices.Contains(sv.p.Allowed, component) {
		panic(fmt.Sprintf("mca: Set.Selected(%q, %q): unknown component; known: %v", selector, component, sv.p.Allowed))
	}
	return slices.Contains(sv.v.list, component) != sv.v.exclude
}

// Selection returns the components a TypeSelector parameter selects: an
// include list in the order given, or, for an exclude list, the Allowed
// components in declaration order minus the excluded ones.
func (s *Set) selectionOf(selector string) []string {
	sv := s.get(selector, "Selection", TypeSelector)
	if !sv.v.exclude {
		return slices.Clone(sv.v.list)
	}
	var out []string
	for _, a := range sv.p.Allowed {
		if !slices.Contains(sv.v.list, a) {
			out = append(out, a)
		}
	}
	return out
}

// RuleParamOf is name's value, source and file line in s, for a *RuleError
// built outside mca: a rule between a parameter and a setting that is not
// one (the launcher's btl selection against -np). It panics when s does
// not hold name (a programmer error).
func (s *Set) RuleParamOf(name string) RuleParam {
	sv, ok := s.lookup(name)
	if !ok {
		panic(fmt.Sprintf("mca: Set.RuleParamOf(%q): no such parameter (not registered before the Set was built)", name))
	}
	return RuleParam{Name: name, Value: sv.v.raw, Source: sv.src, Line: sv.line}
}

// Source returns where name's value came from: "default", "file:PATH",
// "env:GORUN_MCA_<name>" or "flag".
func (s *Set) sourceOf(name string) string {
	sv, ok := s.vals[name]
	if !ok {
		panic(fmt.Sprintf("mca: Set.Source(%q): no such parameter (not registered before the Set was built)", name))
	}
	return sv.src
}

// Lookup returns one parameter, or false when the Set does not hold it.
func (s *Set) Lookup(name string) (Value, bool) {
	sv, ok := s.vals[name]
	if !ok {
		return Value{}, false
	}
	return sv.export(), true
}

// All returns every parameter of the Set, sorted by name.
func (s *Set) All() []Value {
	out := make([]Value, 0, len(s.vals))
	for _, sv := range s.vals {
		out = append(out, sv.export())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Param.Name < out[j].Param.Name })
	return out
}

func (sv setValue) export() Value {
	p := sv.p
	p.Allowed = slices.Clone(p.Allowed)
	return Value{Param: p, Value: sv.v.raw, Source: sv.src}
}
