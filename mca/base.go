package mca

// Frameworks that log through Logger; each has a <framework>_base_verbose
// parameter in the base table.
var frameworks = []string{"btl", "pml", "mpool", "rndv", "launcher"}

// baseTable is mca's own table: one verbosity level per framework, which
// Logger reads.
func baseTable() []Param {
	var t []Param
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

func init() { defaultRegistry.Register("mca", baseTable()) }
