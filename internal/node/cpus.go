package node

import (
	"os"
	"runtime"
	"strconv"
	"sync"
)

// EnvCPUs is the variable gorun (or its helper on a remote host) sets in
// every rank's environment: how many CPUs the job's ranks on this machine
// may run on together. A rank's own affinity mask says less when the
// launcher bound it to its share of them.
const EnvCPUs = "GORUN_LOCAL_CPUS"

var cpus = sync.OnceValue(func() int { return parseCPUs(os.Getenv(EnvCPUs), runtime.NumCPU()) })

// CPUs is how many CPUs the job's ranks on this machine share: EnvCPUs
// when the launcher set it, else the CPUs this process may run on
// (runtime.NumCPU). The rule "more ranks on the machine than CPUs"
// (oversubscribed: yield when idle) is decided against it.
func CPUs() int { return cpus() }

// parseCPUs is v as a CPU count (1 to 1<<20), or def when it is not one.
func parseCPUs(v string, def int) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1<<20 {
		return def
	}
	return n
}
