package mca

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// registry holds declared parameters. The package-level functions (Register,
// Defaults, Resolve, Decode, Closest, Lookup) use the default registry,
// which every component registers into; tests build their own with
// newRegistry. A registry is safe for concurrent use.
type registry struct {
	mu struct {
		sync.RWMutex
		params   map[string]entry   // by name
		synonyms map[string]string  // deprecated name -> parameter name
		checks   []func(*Set) error // the Components' rules, in declaration order
	}
}

// entry is one registered parameter: the declaration, the component that
// declared it, and its parsed default.
type entry struct {
	Param
	component string
	def       value
}

// newRegistry returns an empty registry.
func newRegistry() *registry {
	r := &registry{}
	r.mu.params = make(map[string]entry)
	r.mu.synonyms = make(map[string]string)
	return r
}

var defaultRegistry = newRegistry()

// Closest returns the registered name nearest to name; see (*registry).Closest.
func Closest(name string) string { return defaultRegistry.Closest(name) }

// Register adds component's table (Declare calls it). It is meant for
// package initialization, so it panics on a programmer error: an empty or
// malformed name (names are letters, digits and '_'), a name registered
// before (by any component), an unknown Type, an enum or selector without
// Allowed values, Min > Max (with Max != 0), a negative Min for a size, an
// empty or multi-line Help, or a Default that does not parse, is out of
// range, or (for a selector) names an unknown component. Either the whole
// table is registered or, on a panic, none of it.
func (r *registry) Register(component string, table []Param) {
	r.mu.Lock()
	defer r.mu.Unlock()
	add := make(map[string]entry, len(table))
	syn := make(map[string]string)
	for i := range table {
		p := table[i]
		p.Allowed = slices.Clone(p.Allowed)
		p.Deprecated = slices.Clone(p.Deprecated)
		where := fmt.Sprintf("mca: component %q, parameter %q", component, p.Name)
		if err := checkDecl(&p); err != nil {
			panic(fmt.Sprintf("%s: %v", where, err))
		}
		if prev, ok := r.mu.params[p.Name]; ok {
			panic(fmt.Sprintf("%s: already registered by component %q", where, prev.component))
		}
		if _, ok := add[p.Name]; ok {
			panic(fmt.Sprintf("%s: appears twice in the table", where))
		}
		def, warns, err := parseValue(&p, p.Default)
		if err != nil {
			panic(fmt.Sprintf("%s: invalid Default %q: %v; allowed: %s", where, p.Default, err, allowedText(&p)))
		}
		if len(warns) > 0 {
			panic(fmt.Sprintf("%s: Default %q: %s", where, p.Default, warns[0]))
		}
		for _, old := range p.Deprecated {
			_, taken := r.mu.params[old]
			_, takenSyn := r.mu.synonyms[old]
			_, inTable := syn[old]
			if !validName(old) || taken || takenSyn || inTable || old == p.Name {
				panic(fmt.Sprintf("%s: deprecated name %q is invalid or already taken", where, old))
			}
			syn[old] = p.Name
		}
		add[p.Name] = entry{Param: p, component: component, def: def}
	}
	for old := range syn {
		if _, ok := add[old]; ok {
			panic(fmt.Sprintf("mca: component %q: deprecated name %q is also a parameter", component, old))
		}
	}
	for name, e := range add {
		if _, ok := r.mu.synonyms[name]; ok {
			panic(fmt.Sprintf("mca: component %q, parameter %q: already a deprecated name", component, name))
		}
		r.mu.params[name] = e
	}
	for old, name := range syn {
		r.mu.synonyms[old] = name
	}
}

// addCheck adds a Component's rule check, run by Resolve on every Set.
func (r *registry) addCheck(check func(*Set) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.checks = append(r.mu.checks, check)
}

// checkDecl checks the declaration itself, before its Default.
func checkDecl(p *Param) error {
	if !validName(p.Name) {
		return fmt.Errorf("invalid name; want letters, digits and '_'")
	}
	if p.Name == "RESOLVED" {
		return fmt.Errorf("name clashes with %s", EnvResolved)
	}
	if !p.Type.valid() {
		return fmt.Errorf("unknown Type %d", int(p.Type))
	}
	if p.Help == "" || strings.ContainsAny(p.Help, "\r\n") {
		return fmt.Errorf("Help must be one non-empty line")
	}
	if (p.Type == TypeEnum || p.Type == TypeSelector) && len(p.Allowed) == 0 {
		return fmt.Errorf("%v needs Allowed values", p.Type)
	}
	for i, a := range p.Allowed {
		if a == "" || slices.Contains(p.Allowed[:i], a) {
			return fmt.Errorf("Allowed value %q is empty or repeated", a)
		}
		if p.Type == TypeSelector && (strings.ContainsAny(a, ",^") || strings.TrimSpace(a) != a) {
			return fmt.Errorf("selector component %q contains ',', '^' or blanks", a)
		}
	}
	if p.Max != 0 && p.Min > p.Max {
		return fmt.Errorf("Min %d > Max %d", p.Min, p.Max)
	}
	if p.Type == TypeSize && p.Min < 0 {
		return fmt.Errorf("size Min %d is negative", p.Min)
	}
	return nil
}

// validName reports whether name is non-empty and made of [A-Za-z0-9_], so
// that GORUN_MCA_<name> is a portable environment variable name.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Lookup returns the declaration of name.
func (r *registry) Lookup(name string) (Param, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.mu.params[name]
	return e.Param, ok
}

// Names returns every registered name, sorted.
func (r *registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.mu.params))
	for n := range r.mu.params {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Closest returns the registered name nearest to name by edit distance,
// ignoring case (so "BTL" finds "btl"). A name that contains name (of three
// bytes or more) counts as distance 1, so "verbose" finds a *_verbose
// parameter. Ties go to the alphabetically first. It returns "" only when
// nothing is registered.
func (r *registry) Closest(name string) string {
	best, bestD := "", -1
	lower := strings.ToLower(name)
	for _, n := range r.Names() {
		ln := strings.ToLower(n)
		d := editDistance(lower, ln)
		if len(lower) >= 3 && strings.Contains(ln, lower) {
			d = min(d, 1)
		}
		if bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// snapshot copies the registered entries, so Resolve and Decode work on a
// consistent view without holding the lock.
func (r *registry) snapshot() map[string]entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	m := make(map[string]entry, len(r.mu.params))
	for n, e := range r.mu.params {
		m[n] = e
	}
	return m
}

// synonymOf returns the parameter a deprecated name stands for.
func (r *registry) synonymOf(old string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	name, ok := r.mu.synonyms[old]
	return name, ok
}

// finish completes a Set built from params: every deprecated name gets an
// entry holding its parameter's value (Encode skips those entries).
func finish(s *Set, params map[string]entry) {
	for name, e := range params {
		for _, old := range e.Deprecated {
			sv := s.vals[name]
			sv.p.Name, sv.p.Deprecated, sv.alias = old, nil, true
			sv.p.Help = "deprecated synonym of " + name
			s.vals[old] = sv
		}
	}
}

// check runs every Component's rules on s.
func (r *registry) check(s *Set) error {
	r.mu.RLock()
	checks := slices.Clone(r.mu.checks)
	r.mu.RUnlock()
	for _, c := range checks {
		if err := c(s); err != nil {
			return err
		}
	}
	return nil
}

// Defaults returns every registered parameter at its default. Like every
// Set, it is a snapshot: parameters registered later are not in it.
func (r *registry) Defaults() *Set {
	params := r.snapshot()
	s := newSet(len(params))
	for name, e := range params {
		s.vals[name] = setValue{p: e.Param, v: e.def, src: SourceDefault}
	}
	finish(s, params)
	return s
}

// unknownWarning is the warning for an assignment to an unregistered name.
func (r *registry) unknownWarning(name, source string) string {
	msg := fmt.Sprintf("mca: unknown parameter %q (from %s)", clip(name), clipSource(source))
	if c := r.Closest(name[:min(len(name), 256)]); c != "" { // a longer name is nothing like ours
		msg += fmt.Sprintf("; did you mean %q?", c)
	}
	return msg
}
