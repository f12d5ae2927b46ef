package launcher

import "github.com/gorun-mpi/gorun/mca"

// PLMConfig is how gorun reaches other machines.
type PLMConfig struct {
	Agent string // plm_ssh_agent
}

// PLMParams declares the parameters of starting ranks on other machines.
var PLMParams = mca.Declare("plm_ssh", []mca.Field[PLMConfig]{
	mca.String("plm_ssh_agent", "ssh", func(c *PLMConfig) *string { return &c.Agent },
		`launch agent for remote hosts, "CMD ARGS": gorun runs CMD ARGS HOST COMMAND, as with ssh`),
})
