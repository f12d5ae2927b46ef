package mca

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Field binds one parameter to the field of a component's configuration
// struct C that it fills. Build one with Int, Size, Bool, String, Enum, List
// or Selector; the constructor's arguments are the whole declaration.
type Field[C any] struct {
	p     Param
	store func(c *C, v value) // writes a parsed value into the field
	load  func(c *C) value    // reads the field back (raw text and number), for Validate
}

// integer is the field types Int and Size fill.
type integer interface {
	~int | ~int32 | ~int64 | ~uint32
}

func numField[C any, T integer](p Param, field func(*C) *T, format func(int64) string) Field[C] {
	return Field[C]{p: p,
		store: func(c *C, v value) { *field(c) = T(v.num) },
		load: func(c *C) value {
			n := int64(*field(c))
			return value{raw: format(n), num: n}
		},
	}
}

// Int declares a TypeInt parameter, range min..max (max 0: no upper bound),
// filling *field(c).
func Int[C any, T integer](name, def string, min, max int64, field func(*C) *T, help string) Field[C] {
	p := Param{Name: name, Type: TypeInt, Default: def, Min: min, Max: max, Help: help}
	return numField(p, field, func(n int64) string { return strconv.FormatInt(n, 10) })
}

// Size declares a TypeSize parameter (bytes, k/m/g suffixes), range
// min..max (max 0: no upper bound), filling *field(c) with bytes.
func Size[C any, T integer](name, def string, min, max int64, field func(*C) *T, help string) Field[C] {
	p := Param{Name: name, Type: TypeSize, Default: def, Min: min, Max: max, Help: help}
	return numField(p, field, formatSize)
}

// Bool declares a TypeBool parameter filling *field(c).
func Bool[C any](name, def string, field func(*C) *bool, help string) Field[C] {
	return Field[C]{p: Param{Name: name, Type: TypeBool, Default: def, Help: help},
		store: func(c *C, v value) { *field(c) = v.b },
		load:  func(c *C) value { return value{raw: strconv.FormatBool(*field(c)), b: *field(c)} },
	}
}

// String declares a TypeString parameter filling *field(c).
func String[C any](name, def string, field func(*C) *string, help string) Field[C] {
	return Field[C]{p: Param{Name: name, Type: TypeString, Default: def, Help: help},
		store: func(c *C, v value) { *field(c) = v.raw },
		load:  func(c *C) value { return value{raw: *field(c)} },
	}
}

// Enum declares a TypeEnum parameter, one of allowed, filling *field(c).
func Enum[C any](name, def string, allowed []string, field func(*C) *string, help string) Field[C] {
	return Field[C]{p: Param{Name: name, Type: TypeEnum, Default: def, Allowed: allowed, Help: help},
		store: func(c *C, v value) { *field(c) = v.raw },
		load:  func(c *C) value { return value{raw: *field(c)} },
	}
}

// List declares a TypeList parameter (comma-separated) filling *field(c)
// with its items.
func List[C any](name, def string, field func(*C) *[]string, help string) Field[C] {
	return Field[C]{p: Param{Name: name, Type: TypeList, Default: def, Help: help},
		store: func(c *C, v value) { *field(c) = slices.Clone(v.list) },
		load:  func(c *C) value { return value{raw: strings.Join(*field(c), ","), list: *field(c)} },
	}
}

// Selector declares a framework selector (TypeSelector) over the known
// components allowed, filling *field(c) with the selected ones.
func Selector[C any](name, def string, allowed []string, field func(*C) *Selection, help string) Field[C] {
	return Field[C]{p: Param{Name: name, Type: TypeSelector, Default: def, Allowed: allowed, Help: help},
		store: func(c *C, v value) { *field(c) = Selection{names: selected(allowed, v)} },
		load: func(c *C) value {
			names := field(c).names
			return value{raw: strings.Join(names, ","), list: names}
		},
	}
}

// Selection is the components a selector selects, in order: an include
// list as given, or the known components minus an exclude list.
type Selection struct{ names []string }

// Has reports whether component is selected.
func (s Selection) Has(component string) bool { return slices.Contains(s.names, component) }

// selected lists the components v selects among allowed.
func selected(allowed []string, v value) []string {
	if !v.exclude {
		return slices.Clone(v.list)
	}
	var out []string
	for _, a := range allowed {
		if !slices.Contains(v.list, a) {
			out = append(out, a)
		}
	}
	return out
}

// Deprecated adds old names that still set the parameter: a value given
// under one of them counts as given under the new name, with a warning, and
// gorun-info lists them as synonyms.
func (f Field[C]) Deprecated(old ...string) Field[C] {
	f.p.Deprecated = append(slices.Clone(f.p.Deprecated), old...)
	return f
}

// Rule is a condition between parameters of one component that their own
// ranges cannot express, such as "the eager limit is at most the max send
// size". A combination that breaks a rule cannot work: Resolve refuses it
// (so gorun exits 2 before any rank starts), and so does Validate.
type Rule[C any] struct {
	Names []string          // the parameters involved, as declared; the error names each with its value and source
	Check func(c *C) string // "" when c satisfies the rule; otherwise what is required, in words
}

// Component is one component's parameters, each bound to the field of C it
// fills, with the rules between them. Declare one per component, as a
// package-level var; it is immutable and safe for concurrent use.
type Component[C any] struct {
	name   string
	fields []Field[C]
	defs   []value // parsed defaults, by field
	rules  []Rule[C]
}

// Declare registers component's parameters in the default registry (see
// registry.Register for what panics) together with their rules, which
// Resolve checks from then on, and returns the binding. It panics too when
// a rule names a parameter that is not among fields, or when the defaults
// break a rule.
func Declare[C any](component string, fields []Field[C], rules ...Rule[C]) *Component[C] {
	return declareIn(defaultRegistry, component, fields, rules...)
}

func declareIn[C any](r *registry, component string, fields []Field[C], rules ...Rule[C]) *Component[C] {
	k := &Component[C]{name: component, fields: fields, rules: rules}
	table := make([]Param, len(fields))
	for i, f := range fields {
		table[i] = f.p
	}
	for _, rule := range rules {
		for _, n := range rule.Names {
			if !slices.ContainsFunc(fields, func(f Field[C]) bool { return f.p.Name == n }) {
				panic(fmt.Sprintf("mca: component %q: rule names %q, which it does not declare", component, n))
			}
		}
	}
	r.Register(component, table)
	for _, f := range fields {
		def, _, _ := parseValue(&f.p, f.p.Default) // valid: Register checked it
		k.defs = append(k.defs, def)
	}
	def := k.Defaults()
	if err := k.checkRules(&def, nil); err != nil {
		panic(fmt.Sprintf("mca: component %q: the defaults break a rule: %v", component, err))
	}
	r.addCheck(func(s *Set) error {
		var c C
		k.fill(s, &c)
		return k.checkRules(&c, s)
	})
	return k
}

// Defaults returns the configuration the declared defaults give; fields
// that are not parameters are zero.
func (k *Component[C]) Defaults() C {
	var c C
	for i, f := range k.fields {
		f.store(&c, k.defs[i])
	}
	return c
}

// Config returns the configuration s gives (fields that are not parameters
// are zero), checked against the rules. s must hold every parameter of the
// component (any Set built after Declare does).
func (k *Component[C]) Config(s *Set) (C, error) {
	var c C
	k.fill(s, &c)
	return c, k.checkRules(&c, s)
}

// fill stores s's value of every field's parameter into c.
func (k *Component[C]) fill(s *Set, c *C) {
	for _, f := range k.fields {
		f.store(c, s.get(f.p.Name, "Config", f.p.Type).v)
	}
}

// Validate checks a configuration that need not come from mca: every field
// against its parameter's range or allowed values (a *ParamError), then the
// rules (a *RuleError).
func (k *Component[C]) Validate(c *C) error {
	for _, f := range k.fields {
		v := f.load(c)
		if err := checkValue(&f.p, v); err != nil {
			return &ParamError{Name: f.p.Name, Value: v.raw, Allowed: allowedText(&f.p), Err: err}
		}
	}
	return k.checkRules(c, nil)
}

// checkRules runs the rules on c; s, when not nil, gives the values' text
// and sources for the error.
func (k *Component[C]) checkRules(c *C, s *Set) error {
	for _, rule := range k.rules {
		need := rule.Check(c)
		if need == "" {
			continue
		}
		e := &RuleError{Need: need}
		for _, n := range rule.Names {
			rp := RuleParam{Name: n}
			if sv, ok := s.lookup(n); ok {
				rp.Value, rp.Source, rp.Line = sv.v.raw, sv.src, sv.line
			} else {
				i := slices.IndexFunc(k.fields, func(f Field[C]) bool { return f.p.Name == n })
				rp.Value = k.fields[i].load(c).raw
			}
			e.Params = append(e.Params, rp)
		}
		return e
	}
	return nil
}

// checkValue checks a value that was not parsed from text (a field of a
// hand-built configuration) against p's range or allowed values.
func checkValue(p *Param, v value) error {
	switch p.Type {
	case TypeInt, TypeSize:
		if !p.inRange(v.num) {
			return rangeErr("out of range")
		}
	case TypeEnum:
		if !slices.Contains(p.Allowed, v.raw) {
			return notAllowedErr("not allowed")
		}
	case TypeSelector:
		for _, n := range v.list {
			if !slices.Contains(p.Allowed, n) {
				return notAllowedErr("unknown component %q", clip(n))
			}
		}
	}
	return nil
}

// ErrConflict is wrapped by every *RuleError.
var ErrConflict = errors.New("mca: parameters conflict")

// RuleError reports parameters whose values are each valid but cannot work
// together:
//
//	mca: btl_sm_eager_limit="64k" (from flag) and btl_sm_max_send_size="32k" (from default) cannot work together: the eager limit must not exceed the max send size
type RuleError struct {
	Params []RuleParam // the parameters the rule ties together
	Need   string      // what the rule requires, in words
}

// RuleParam is one parameter of a RuleError.
type RuleParam struct {
	Name, Value string
	Source      string // "" for a configuration built without mca
	Line        int
}

func (e *RuleError) Error() string {
	parts := make([]string, len(e.Params))
	for i, p := range e.Params {
		parts[i] = fmt.Sprintf("%s=%q", p.Name, clip(p.Value))
		if p.Source != "" {
			parts[i] += " (from " + sourceText(p.Source, p.Line) + ")"
		}
	}
	verb := "cannot work together"
	if len(parts) == 1 {
		verb = "cannot work"
	}
	return fmt.Sprintf("mca: %s %s: %s", joinAnd(parts), verb, e.Need)
}

// Unwrap returns ErrConflict.
func (e *RuleError) Unwrap() error { return ErrConflict }

// joinAnd joins "a", "a and b", "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// sourceText is a source with its file line, if any.
func sourceText(src string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s:%d", src, line)
	}
	return clipSource(src)
}
