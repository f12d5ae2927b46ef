package launcher

// gorun inside a Slurm allocation (SLURM_JOB_ID set, no --host): the hosts
// are the allocation's nodes, each with the CPUs Slurm gave it as slots,
// and each node's helper is started as a one-task job step of its own
// (srun), never through ssh, so that Slurm sees, signals and accounts for
// the ranks, which run inside the step.

import (
	"fmt"
	"strconv"

	"github.com/gorun-mpi/gorun/internal/hostlist"
)

// Slurm's variables gorun reads.
const (
	envSlurmJobID    = "SLURM_JOB_ID"
	envSlurmNodeList = "SLURM_JOB_NODELIST"
	envSlurmCPUs     = "SLURM_JOB_CPUS_PER_NODE"
)

// slurmHosts returns the allocation's nodes with their CPUs as slots, or
// nil when environ is not inside an allocation.
func slurmHosts(environ []string) ([]Host, error) {
	get := func(k string) string {
		for i := len(environ) - 1; i >= 0; i-- {
			if len(environ[i]) > len(k) && environ[i][:len(k)+1] == k+"=" {
				return environ[i][len(k)+1:]
			}
		}
		return ""
	}
	if get(envSlurmJobID) == "" {
		return nil, nil
	}
	nodes, err := hostlist.Expand(get(envSlurmNodeList))
	if err != nil {
		return nil, fmt.Errorf("inside Slurm job %s: %s: %v", get(envSlurmJobID), envSlurmNodeList, err)
	}
	cpus, err := hostlist.ExpandCounts(get(envSlurmCPUs))
	if err != nil || len(cpus) != len(nodes) {
		return nil, fmt.Errorf("inside Slurm job %s: %s=%q does not give the CPUs of the %d nodes of %s=%q",
			get(envSlurmJobID), envSlurmCPUs, get(envSlurmCPUs), len(nodes), envSlurmNodeList, get(envSlurmNodeList))
	}
	hosts := make([]Host, len(nodes))
	for i, n := range nodes {
		hosts[i] = Host{Name: n, Slots: max(1, min(cpus[i], maxSlots))}
	}
	return hosts, nil
}

// srunArgs is the command that starts the helper on node as a job step of
// one task with every CPU the allocation has there: the output unbuffered
// (frames are not lines), no PMI of Slurm's (gorun serves its own).
func srunArgs(node string, cpus int, command ...string) []string {
	return append([]string{"srun", "--mpi=none", "--unbuffered", "--nodes=1", "--ntasks=1",
		"--cpus-per-task=" + strconv.Itoa(cpus), "--nodelist=" + node, "--job-name=gorun-helper"}, command...)
}
