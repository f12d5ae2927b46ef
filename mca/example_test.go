package mca_test

import (
	"fmt"

	"github.com/gorun-mpi/gorun/mca"
)

// exampleConfig is a component's configuration: each parameter fills one field.
type exampleConfig struct {
	EagerLimit  int
	MaxSendSize int
	Mode        string
}

// exampleParams declares the component's parameters once, with the rule
// between two of them; Resolve (so gorun) refuses a combination that breaks it.
var exampleParams = mca.Declare("example", []mca.Field[exampleConfig]{
	mca.Size("example_eager_limit", "4k", 0, 1<<20, func(c *exampleConfig) *int { return &c.EagerLimit },
		"largest payload sent eagerly"),
	mca.Size("example_max_send_size", "32k", 1<<10, 16<<20, func(c *exampleConfig) *int { return &c.MaxSendSize },
		"largest payload of one fragment"),
	mca.Enum("example_mode", "auto", []string{"auto", "none"}, func(c *exampleConfig) *string { return &c.Mode },
		"auto or none"),
}, mca.Rule[exampleConfig]{
	Names: []string{"example_eager_limit", "example_max_send_size"},
	Check: func(c *exampleConfig) string {
		if c.EagerLimit > c.MaxSendSize {
			return "the eager limit must not exceed the max send size"
		}
		return ""
	},
})

func ExampleDeclare() {
	fmt.Printf("%+v\n", exampleParams.Defaults())

	s, _, err := mca.Resolve(mca.Inputs{Environ: []string{"GORUN_MCA_example_eager_limit=8K"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := exampleParams.Config(s)
	fmt.Printf("%+v %v\n", c, err)

	_, _, err = mca.Resolve(mca.Inputs{Flags: [][2]string{{"example_eager_limit", "64k"}}})
	fmt.Println(err)
	_, _, err = mca.Resolve(mca.Inputs{Flags: [][2]string{{"example_eager_limit", "64q"}}})
	fmt.Println(err)
	// Output:
	// {EagerLimit:4096 MaxSendSize:32768 Mode:auto}
	// {EagerLimit:8192 MaxSendSize:32768 Mode:auto} <nil>
	// mca: example_eager_limit="64k" (from flag) and example_max_send_size="32k" (from default) cannot work together: the eager limit must not exceed the max send size
	// mca: example_eager_limit="64q" (from flag): invalid size; allowed: bytes or a k/m/g suffix (e.g. 4096, 64k, 1m), 0..1m
}
