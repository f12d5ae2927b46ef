package launcher

import "github.com/gorun-mpi/gorun/mca"

// plmParams are the parameters of starting ranks on other machines.
var plmParams = mca.Declare("plm_ssh", []mca.Param{
	{Name: "plm_ssh_agent", Type: mca.TypeString, Default: "ssh",
		Help: `launch agent for remote hosts: "CMD ARGS", run as CMD ARGS HOST COMMAND (as ssh is)`},
})
