package launcher

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/gorun-mpi/gorun/mca"
)

// Config is the launcher's own parameters.
type Config struct {
	GOMAXPROCS int  // launcher_base_gomaxprocs
	Bind       bool // launcher_base_bind
}

// Params declares the launcher's parameters, bound to Config's fields.
var Params = mca.Declare("launcher_base", []mca.Field[Config]{
	mca.Int("launcher_base_gomaxprocs", "0", 0, 1<<16, func(c *Config) *int { return &c.GOMAXPROCS },
		"GOMAXPROCS of each rank when gorun's environment has none: 0 = the cores divided among the ranks (at least 1), N = N"),
	mca.Bool("launcher_base_bind", "true", func(c *Config) *bool { return &c.Bind },
		"bind rank i of the n ranks on a machine to the i-th n-th of the CPUs gorun may use (as Open MPI binds to cores), when the ranks do not outnumber those CPUs and their GOMAXPROCS is gorun's share (neither GOMAXPROCS nor launcher_base_gomaxprocs set); false: the kernel places the ranks"),
})

// envGOMAXPROCS is the Go runtime's variable for the number of threads
// running Go code at once.
const envGOMAXPROCS = "GOMAXPROCS"

// rankGOMAXPROCS is the GOMAXPROCS gorun gives each of np ranks on a
// machine with cores CPUs, for launcher_base_gomaxprocs = param.
//
// Why a share and not Go's default (every core): a rank waiting for a
// message polls, so it keeps one core busy; a second thread of the same
// rank (a garbage-collection worker) then takes its core from another rank
// for a scheduler slice, and that rank's partner polls in vain meanwhile.
// Measured on 2 cores, 2 ranks, windows of 64 nonblocking 8-byte sends:
// 1.0 M messages/s with GOMAXPROCS=2, 2.5 M with 1. Open MPI binds each
// rank to its own cores by default for the same reason.
func rankGOMAXPROCS(param, np, cores int) int {
	if param > 0 {
		return param
	}
	return max(1, cores/max(1, np))
}

// gomaxprocsEnv returns the GOMAXPROCS entry for the ranks' environment,
// or "" when environ already sets it (the user's choice wins).
func gomaxprocsEnv(environ []string, cfg Config, np int) string {
	for _, kv := range environ {
		if strings.HasPrefix(kv, envGOMAXPROCS+"=") {
			return ""
		}
	}
	return envGOMAXPROCS + "=" + strconv.Itoa(rankGOMAXPROCS(cfg.GOMAXPROCS, np, runtime.NumCPU()))
}

// checkBTLs refuses a btl selection that cannot carry a job of np ranks,
// before any rank runs (a *mca.RuleError: gorun exits 2), instead of
// letting every rank fail in Init with "no BTL reaches rank R": a rank
// reaches itself only through self, and the other ranks only through sm
// (this machine) or tcp. A job across machines needs tcp as well; the
// ranks' Init still reports that, since the placement is only known later.
// The btl selector is the runtime's (the root package, which cmd/gorun
// links); a launcher linked without it (its own tests) has none to check.
func checkBTLs(set *mca.Set, np int) error {
	if _, ok := set.Lookup("btl"); !ok {
		return nil
	}
	const allowed = "; allowed: a selection with self and, for more than one rank, sm or tcp (e.g. self,sm,tcp, self,sm or self,tcp)"
	switch {
	case !set.Selected("btl", "self"):
		return &mca.RuleError{Params: []mca.RuleParam{set.RuleParamOf("btl")},
			Need: "a rank reaches itself only through self" + allowed}
	case np > 1 && !set.Selected("btl", "sm") && !set.Selected("btl", "tcp"):
		return &mca.RuleError{Params: []mca.RuleParam{set.RuleParamOf("btl"), {Name: "-np", Value: strconv.Itoa(np)}},
			Need: fmt.Sprintf("a job of %d ranks needs sm or tcp to reach the other ranks", np) + allowed}
	}
	return nil
}
