package mca_test

import (
	"fmt"

	"github.com/gorun-mpi/gorun/mca"
)

func ExampleRegistry_Resolve() {
	r := mca.NewRegistry()
	r.Register("sm", []mca.Param{
		{Name: "btl", Type: mca.TypeSelector, Default: "self,sm", Allowed: []string{"self", "sm"}, Help: "BTLs to use"},
		{Name: "btl_sm_eager_limit", Type: mca.TypeSize, Default: "4k", Max: 1 << 30, Help: "largest eager payload"},
	})
	s, warns, err := r.Resolve(mca.Inputs{
		Flags:   [][2]string{{"btl", "^tcp"}},
		Environ: []string{"GORUN_MCA_btl_sm_eager_limit=64K", "GORUN_MCA_btl_sm_eagr_limit=1m"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range warns {
		fmt.Println(w)
	}
	fmt.Println(s.Size("btl_sm_eager_limit"), s.Source("btl_sm_eager_limit"))
	fmt.Println(s.Selection("btl"), s.Source("btl"))

	_, _, err = r.Resolve(mca.Inputs{Flags: [][2]string{{"btl_sm_eager_limit", "64q"}}})
	fmt.Println(err)
	// Output:
	// mca: btl="^tcp" (from flag): excludes unknown component "tcp" (known: self, sm); ignored
	// mca: unknown parameter "btl_sm_eagr_limit" (from env:GORUN_MCA_btl_sm_eagr_limit); did you mean "btl_sm_eager_limit"?
	// 65536 env:GORUN_MCA_btl_sm_eager_limit
	// [self sm] flag
	// mca: btl_sm_eager_limit="64q" (from flag): invalid size; allowed: bytes or a k/m/g suffix (e.g. 4096, 64k, 1m), 0..1g
}
