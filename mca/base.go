package mca

// Frameworks that log through Logger; each has a <framework>_base_verbose
// parameter in the base table.
var frameworks = []string{"btl", "pml", "mpool", "rndv", "launcher"}

// baseTable is mca's own table: the btl selector and one verbosity level per
// framework.
func baseTable() []Param {
	t := []Param{{
		Name:    "btl",
		Type:    TypeSelector,
		Default: "self,sm",
		Allowed: []string{"self", "sm"},
		Help:    `BTL components to use: "a,b" uses exactly these, "^a" all but these`,
	}}
	for _, fw := range frameworks {
		t = append(t, Param{
			Name:    fw + "_base_verbose",
			Type:    TypeEnum,
			Default: "warn",
			Allowed: verboseLevels,
			Help:    "log level of the " + fw + " framework (to stderr)",
		})
	}
	return t
}

func init() { Register("mca", baseTable()) }
