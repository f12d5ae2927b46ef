package gorun

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/self"
	"github.com/gorun-mpi/gorun/btl/sm"
	"github.com/gorun-mpi/gorun/launcher"
	"github.com/gorun-mpi/gorun/mca"
	"github.com/gorun-mpi/gorun/pml"
	"github.com/gorun-mpi/gorun/rndv"
)

// runtimeConfig is the parameters of the runtime itself: which BTLs a rank
// uses and how long it waits for the others at Init.
type runtimeConfig struct {
	BTL         mca.Selection // btl
	WireTimeout int           // rndv_base_timeout, seconds
}

// runtimeParams declares runtimeConfig's parameters. A new BTL adds its
// name to the btl selector's known components.
var runtimeParams = mca.Declare("gorun", []mca.Field[runtimeConfig]{
	mca.Selector("btl", "self,sm", []string{"self", "sm"}, func(c *runtimeConfig) *mca.Selection { return &c.BTL },
		`BTL components to use: "a,b" uses exactly these, "^a" all but these`),
	mca.Int("rndv_base_timeout", "60", 1, 86400, func(c *runtimeConfig) *int { return &c.WireTimeout },
		"seconds a rank waits for the other ranks' business cards and the shared segment at Init"),
})

// state is the process-wide runtime: one job per process.
var state struct {
	sync.Mutex
	world     *Comm
	pml       *pml.PML
	finalized bool
}

// Init joins the job started by gorun and returns the world communicator.
// Started without gorun it returns a singleton world (Size()==1). Calling
// Init twice returns the same *Comm; after Finalize it returns ErrFinalized.
func Init() (*Comm, error) {
	state.Lock()
	defer state.Unlock()
	if state.finalized {
		return nil, fmt.Errorf("gorun: Init after Finalize: %w", ErrFinalized)
	}
	if state.world != nil {
		return state.world, nil
	}
	p, err := bootstrap()
	if err != nil {
		return nil, err
	}
	state.pml = p
	state.world = &Comm{c: p.World()}
	return state.world, nil
}

// Finalize synchronizes all ranks, completes outstanding sends, cancels
// pending receives, then detaches from the job. Later calls on any Comm
// return ErrFinalized. It is idempotent.
func Finalize() error {
	state.Lock()
	defer state.Unlock()
	if state.finalized {
		return nil
	}
	state.finalized = true
	if state.pml == nil {
		return nil
	}
	return state.pml.Finalize(state.world.c)
}

// Abort ends every rank of the job; gorun exits with code when
// 1 ≤ code ≤ 255, with 1 otherwise. Outside gorun it exits the process by
// the same rule.
func (c *Comm) Abort(code int) { launcher.Abort(code) }

// jobEnv is what gorun tells a rank through its environment.
type jobEnv struct {
	rank, size, localRank int
	jobID, sessionDir     string
}

func readJobEnv() (jobEnv, bool, error) {
	rs, ok := os.LookupEnv("GORUN_RANK")
	if !ok {
		return jobEnv{rank: 0, size: 1}, false, nil
	}
	var e jobEnv
	var err error
	num := func(name, v string, min int) int {
		n, perr := strconv.Atoi(v)
		if (perr != nil || n < min) && err == nil {
			err = fmt.Errorf("gorun: environment variable %s=%q is not an integer ≥ %d (is this process started by gorun?)", name, v, min)
		}
		return n
	}
	e.rank = num("GORUN_RANK", rs, 0)
	e.size = num("GORUN_SIZE", os.Getenv("GORUN_SIZE"), 1)
	e.localRank = num("GORUN_LOCAL_RANK", os.Getenv("GORUN_LOCAL_RANK"), 0)
	e.jobID = os.Getenv("GORUN_JOBID")
	e.sessionDir = os.Getenv("GORUN_SESSION_DIR")
	if err == nil && e.rank >= e.size {
		err = fmt.Errorf("gorun: GORUN_RANK=%d is not below GORUN_SIZE=%d", e.rank, e.size)
	}
	if err == nil && (e.jobID == "" || e.sessionDir == "") {
		err = fmt.Errorf("gorun: GORUN_JOBID and GORUN_SESSION_DIR must be set with GORUN_RANK (is this process started by gorun?)")
	}
	return e, true, err
}

// bootstrap wires this rank into its job: parameters, business cards,
// BTLs, PML.
func bootstrap() (*pml.PML, error) {
	params, warnings, err := mca.Load()
	if err != nil {
		return nil, err
	}
	env, inJob, err := readJobEnv()
	if err != nil {
		return nil, err
	}
	if !inJob {
		for _, w := range warnings {
			fmt.Fprintln(os.Stderr, w)
		}
	}
	rt, err := runtimeParams.Config(params)
	if err != nil {
		return nil, err
	}
	pcfg, err := pml.Params.Config(params)
	if err != nil {
		return nil, err
	}
	log := mca.Logger(params, "pml")
	var mods []btl.Module
	closeAll := func() {
		for _, m := range mods {
			m.Close()
		}
	}
	if rt.BTL.Has("self") {
		m, err := self.New(env.rank, params)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	if inJob {
		if err := launcher.RankInit(); err != nil {
			return nil, err
		}
		timeout := time.Duration(rt.WireTimeout) * time.Second
		card := rndv.Card{Version: rndv.CardVersion, Rank: env.rank, LocalRank: env.localRank, Pid: os.Getpid(), Caps: []string{"sm"}}
		if err := rndv.PublishCard(env.sessionDir, card); err != nil {
			closeAll()
			return nil, err
		}
		cards, err := rndv.WaitCards(env.sessionDir, env.size, timeout)
		if err != nil {
			closeAll()
			return nil, err
		}
		if env.size > 1 && rt.BTL.Has("sm") {
			pids := make([]int, env.size)
			for i, c := range cards {
				pids[i] = c.Pid
			}
			job := sm.Job{Rank: env.rank, Size: env.size, LocalRank: env.localRank,
				SessionDir: env.sessionDir, JobID: env.jobID, Pids: pids}
			m, err := sm.New(job, params, mca.Logger(params, "btl"))
			if err != nil {
				closeAll()
				return nil, err
			}
			mods = append(mods, m)
		}
	}
	pcfg.Rank, pcfg.Size, pcfg.Modules, pcfg.Log = env.rank, env.size, mods, log
	pcfg.SetYield(runtime.NumCPU())
	p, err := pml.New(pcfg)
	if err != nil {
		closeAll()
		return nil, err
	}
	return p, nil
}
