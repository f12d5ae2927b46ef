package mca

// This file fixes the API that the other packages code against. The
// implementation lives in the other files of the package.

// Type is the kind of value a parameter takes.
type Type int

const (
	TypeInt      Type = iota // decimal integer, range Min..Max
	TypeSize                 // bytes, or k/m/g suffix (either case, powers of 1024), range Min..Max
	TypeBool                 // true/false/1/0/yes/no/on/off
	TypeString               // any string
	TypeEnum                 // one of Allowed
	TypeList                 // comma-separated list of strings
	TypeSelector             // framework selector: "a,b" includes, "^a,b" excludes; names from Allowed
)

// Param declares one parameter. Components build them with the Field
// constructors (Int, Size, ...) and Declare; Register takes a bare table.
type Param struct {
	Name     string   // <framework>_<component>_<param>, or a framework name for a selector
	Type     Type     //
	Default  string   // parsed like any other value; must be valid
	Help     string   // one line; never repeats the default
	Allowed  []string // TypeEnum: the values; TypeSelector: the known component names
	Min, Max int64    // TypeInt, TypeSize: inclusive range; Max == 0 means no upper bound

	// Deprecated are old names that still set the parameter, with a
	// warning; a Set lists each as a synonym holding the same value.
	Deprecated []string
}
