package pml

import "github.com/gorun-mpi/gorun/mca"

// Params is the pml/ob1 parameter table.
var Params = []mca.Param{
	{Name: "pml_ob1_unexpected_limit", Type: mca.TypeSize, Default: "64m", Min: 0, Max: 1 << 40,
		Help: "bytes of eager payload a rank may be sent before it has matched them, shared among its peers as credit; a sender out of credit uses rendezvous (0: no limit)"},
	{Name: "pml_ob1_yield_when_idle", Type: mca.TypeEnum, Default: "auto", Allowed: []string{"auto", "yes", "no"},
		Help: "yield the core between progress polls: yes, no, or auto (yes when the ranks outnumber the cores)"},
	{Name: "pml_ob1_rget_limit", Type: mca.TypeSize, Default: "0", Min: 0, Max: 1 << 40,
		Help: "messages of at least this many bytes use a single-copy read when the BTL can (0: never)"},
	{Name: "pml_ob1_rget_max", Type: mca.TypeSize, Default: "512k", Min: 0, Max: 1 << 40,
		Help: "largest message that uses the single-copy read (0: no upper bound); larger ones use the two-copy pipeline, which keeps both ranks' cores copying"},
}

func init() { mca.Register("pml_ob1", Params) }
