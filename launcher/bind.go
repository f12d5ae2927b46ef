package launcher

import (
	"strings"

	"golang.org/x/sys/unix"
)

// Binding ranks to CPUs. The kernel places a job's ranks where it likes:
// it often starts two ranks on one CPU, or pulls a rank onto its partner's
// CPU when it wakes it, and leaves them there for tens of milliseconds
// with the other CPU idle (a rank that never stops running counts as
// cache-hot, and the load balancer moves such a task only after several
// failed attempts). Two polling ranks on one CPU make every message wait
// for a scheduler slice: 5-10 us per message instead of 0.2. Open MPI
// binds each rank to a core by default for the same reason. gorun binds
// rank i of the n on a machine to the i-th share of the CPUs it may use,
// the same share its GOMAXPROCS is (rankGOMAXPROCS), so a rank's Go
// threads run on the CPUs it was counted for.

// bindable reports whether ranks are bound: launcher_base_bind is on, and
// their GOMAXPROCS is gorun's share (neither the user's GOMAXPROCS nor
// launcher_base_gomaxprocs chose another, which the share could starve).
func bindable(cfg Config, environ []string) bool {
	if !cfg.Bind || cfg.GOMAXPROCS != 0 {
		return false
	}
	for _, kv := range environ {
		if strings.HasPrefix(kv, envGOMAXPROCS+"=") {
			return false
		}
	}
	return true
}

// bindCPUs is the set of CPUs of local rank i of n, from the CPUs gorun
// may use (allowed, in order): the i-th of n equal shares, the rest of the
// division left unused, as rankGOMAXPROCS counts. It is nil when the ranks
// are not bound: more ranks than CPUs (oversubscribed: a rank bound to a
// CPU could not move to one another rank leaves idle), one rank (it has
// them all), or i out of range.
func bindCPUs(allowed []int, n, i int) []int {
	if n <= 1 || n > len(allowed) || i < 0 || i >= n {
		return nil
	}
	k := len(allowed) / n
	return allowed[i*k : (i+1)*k]
}

// allowedCPUs lists the CPUs the calling thread may run on, in order.
func allowedCPUs() []int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	var cpus []int
	for c := 0; c < len(set)*64 && len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}
