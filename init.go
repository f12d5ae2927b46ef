package gorun

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/remap"
	"github.com/gorun-mpi/gorun/btl/self"
	"github.com/gorun-mpi/gorun/btl/sm"
	"github.com/gorun-mpi/gorun/coll"
	"github.com/gorun-mpi/gorun/coll/shm"
	"github.com/gorun-mpi/gorun/internal/node"
	"github.com/gorun-mpi/gorun/jobenv"
	"github.com/gorun-mpi/gorun/mca"
	"github.com/gorun-mpi/gorun/pmi"
	"github.com/gorun-mpi/gorun/pml"
	"github.com/gorun-mpi/gorun/rndv"
)

// runtimeConfig is the parameters of the runtime itself: which BTLs a rank
// uses and how long it waits for the others at Init.
type runtimeConfig struct {
	BTL         mca.Selection // btl
	WireTimeout int           // rndv_base_timeout, seconds
	ErrorsFatal bool          // mpi_base_errors_fatal (see fatal.go)
	MonSlack    int           // mpi_base_monitor_slack, microseconds (see monitor.go)
	GCBallast   int64         // mpi_base_gc_ballast, bytes (see gc.go)
	GCPrefault  bool          // mpi_base_gc_prefault (see gc.go)
}

// runtimeParams declares runtimeConfig's parameters. A new BTL adds its
// name to the btl selector's known components.
var runtimeParams = mca.Declare("gorun", []mca.Field[runtimeConfig]{
	mca.Selector("btl", "self,sm,tcp", []string{"self", "sm", "tcp"}, func(c *runtimeConfig) *mca.Selection { return &c.BTL },
		`BTL components to use: "a,b" uses exactly these, "^a" all but these`),
	mca.Int("rndv_base_timeout", "60", 1, 86400, func(c *runtimeConfig) *int { return &c.WireTimeout },
		"seconds a rank waits for the other ranks' business cards and the shared segment at Init"),
	mca.Bool("mpi_base_errors_fatal", "false", func(c *runtimeConfig) *bool { return &c.ErrorsFatal },
		"true: an API call's error (except ErrCanceled and a context's end) is printed with the call's name and aborts the job, as MPI_ERRORS_ARE_FATAL; false: errors are returned"),
	mca.Int("mpi_base_monitor_slack", "1000", 0, 1000000, func(c *runtimeConfig) *int { return &c.MonSlack },
		"microseconds of timer slack Init gives the Go runtime's monitor thread (sysmon), so that its short sleeps after the wire-up do not wake it every 80 us on the ranks' cores (needs CAP_SYS_NICE; 0: the kernel's default is kept)"),
	mca.Size("mpi_base_gc_ballast", "64m", 0, 1<<34, func(c *runtimeConfig) *int64 { return &c.GCBallast },
		"bytes of untouched, pointer-free memory Init keeps until Finalize so that Go's garbage collector, which starts a cycle each time the heap grows by GOGC% of its live part (at least 4 MiB), runs that many times less often in a program with a small heap that sends many messages (each Isend and Irecv allocates 32 bytes); the pages are never touched, so they cost no memory, but garbage may take that much more before it is collected; not used when the program sets a memory limit (GOMEMLIMIT); at most a 32nd of a rank's share of the machine's memory (or its control group's limit) among the ranks on it; 0: none. With mpi_base_gc_prefault, 64m against 16m: osu mr 1-256 B +14 to +82%, bibw 2-256 B +15 to +24% (no collection and no page fault until the heap has grown by 64 MiB: osu mr's first 0.3 s), Init 24 ms longer and 50 MiB more resident per rank"),
	mca.Bool("mpi_base_gc_prefault", "true", func(c *runtimeConfig) *bool { return &c.GCPrefault },
		"true: with a ballast, and when the job's ranks on this machine do not outnumber its CPUs, Init also has the kernel back as many bytes of heap as the ballast holds and frees them, so that the heap's growth up to the next collection lands on pages that are already there instead of faulting one page per 128 Requests (osu bw and mr at 1-64 B, a process's first sizes, +11 to +19%); costs that much resident memory per rank and the faults' time at Init (~12 ms for 16 MiB, ~24 ms for 64 MiB on a VM that backs memory at first touch); false: no"),
})

// state is the process-wide runtime: one job per process.
var state struct {
	sync.Mutex
	world     *Comm
	pml       *pml.PML
	pmi       *pmi.Client // a PMI job's server connection, finalized at Finalize
	finalized bool
	coll      *coll.Engine // runs the collectives' schedules
	collCfg   coll.Config
	shmCfg    shm.Config // coll/sm (coll_shm.go)
}

// Init joins the job started by gorun and returns the world communicator.
// Started without gorun it returns a singleton world (Size()==1). Calling
// Init twice returns the same *Comm; after Finalize it returns ErrFinalized.
//
// Until Finalize, Init keeps 64 MiB of memory it never touches (a GC
// ballast, mpi_base_gc_ballast; 0 turns it off, a program that sets a
// memory limit gets none, and no rank more than a 32nd of its share of
// the machine's memory), so that the garbage collector of a program
// with a small heap runs less often: every Isend and Irecv allocates its
// 32-byte Request, a slab at a time (see gc.go).
func Init() (*Comm, error) {
	state.Lock()
	defer state.Unlock()
	if state.finalized {
		return nil, fatalCheck(fmt.Errorf("gorun: Init after Finalize: %w", ErrFinalized))
	}
	if state.world != nil {
		return state.world, nil
	}
	p, pc, err := bootstrap()
	if err != nil {
		dropBallast()
		return nil, fatalCheck(err)
	}
	state.pml, state.pmi = p, pc
	state.coll = coll.NewEngine(p, state.collCfg)
	state.world = &Comm{c: p.World()}
	quietMonitor() // monitor.go
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
	dropBallast()
	if state.pml == nil {
		return nil
	}
	jobenv.RecordFinalize() // else gorun takes the rank's exit for a failure
	err := state.pml.Finalize(state.world.c)
	if state.pmi != nil {
		if perr := state.pmi.Finalize(); err == nil {
			err = perr
		}
	}
	return fatalCheck(err)
}

// Abort ends every rank of the job; gorun exits with code when
// 1 ≤ code ≤ 255, with 1 otherwise. Outside gorun it exits the process by
// the same rule.
func (c *Comm) Abort(code int) { jobenv.Abort(code) }

// bootstrap wires this rank into its job, one step after another: the
// job's environment and parameters, the wire-up (business cards), the
// BTLs, the PML. Each step is a method of wiring; a failing step leaves
// nothing open.
func bootstrap() (*pml.PML, *pmi.Client, error) {
	w, err := readJob()
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*pml.PML, *pmi.Client, error) {
		w.closeBTLs()
		if w.tcp != nil {
			w.tcp.Close()
		}
		if w.pmi != nil {
			w.pmi.Close()
		}
		return nil, nil, err
	}
	if err := w.wireUp(); err != nil {
		return fail(err)
	}
	if err := w.openBTLs(); err != nil {
		return fail(err)
	}
	p, err := w.startPML()
	if err != nil {
		return fail(err)
	}
	return p, w.pmi, nil
}

// wiring is what bootstrap has learnt so far about this rank's job.
type wiring struct {
	job    jobenv.Job
	inJob  bool // started by gorun; false for a singleton
	params *mca.Set
	rt     runtimeConfig
	cards  []rndv.Card  // every rank's business card, by rank; nil for a singleton
	mods   []btl.Module // the BTLs opened so far
	netWiring
}

// readJob is the first step: the job's environment and the parameters.
func readJob() (*wiring, error) {
	params, warnings, err := mca.Load()
	if err != nil {
		return nil, err
	}
	job, inJob, err := jobenv.Read()
	if err != nil {
		return nil, err
	}
	pe, viaPMI, err := lookupPMI()
	if err != nil {
		return nil, err
	}
	if !inJob { // under gorun, the launcher printed them
		for _, w := range warnings {
			fmt.Fprintln(os.Stderr, w)
		}
	}
	rt, err := runtimeParams.Config(params)
	if err != nil {
		return nil, err
	}
	errorsFatal.Store(rt.ErrorsFatal)
	monitorSlack = time.Duration(rt.MonSlack) * time.Microsecond
	gcBallastSize, gcPrefault = rt.GCBallast, rt.GCPrefault
	// Before the BTLs and the PML (gc.go). The ranks on this machine: as
	// gorun says, else (srun, a singleton) as many as it has CPUs.
	ranks, ok := jobenv.LocalSize()
	if !ok {
		ranks = node.CPUs()
	}
	holdBallast(node.Memory(), ranks)
	w := &wiring{job: job, inJob: inJob, params: params, rt: rt}
	if viaPMI {
		// Rank, size and job id come from the PMI server (srun --mpi=pmi2,
		// mpiexec.hydra, gorun across hosts), which also carries the cards.
		if inJob {
			if err := jobenv.Watch(); err != nil {
				return nil, err
			}
			w.hostSession, w.hostJobID = job.SessionDir, job.JobID
		}
		if w.pmi, w.job, err = readPMIJob(pe, time.Duration(rt.WireTimeout)*time.Second); err != nil {
			return nil, err
		}
		w.inJob = true
	}
	local, ok := jobenv.LocalSize()
	if !ok {
		local = w.job.Size // not said (srun): as many as the job has, at most
	}
	prefaultHeap(local, node.CPUs()) // before the BTLs and the PML too (gc.go)
	return w, nil
}

// wireUp exchanges business cards with the other ranks through the session
// directory, after starting to watch the launcher's lifeline. A singleton
// has nobody to wire up with.
func (w *wiring) wireUp() error {
	if !w.inJob {
		return nil
	}
	if w.pmi != nil {
		return w.wireUpPMI()
	}
	if err := jobenv.Watch(); err != nil {
		return err
	}
	if err := w.listenTCP(); err != nil {
		return err
	}
	if err := w.writeGorunSecret(); err != nil {
		return err
	}
	card := rndv.Card{Version: rndv.CardVersion, Rank: w.job.Rank, LocalRank: w.job.LocalRank, Pid: os.Getpid(), Caps: []string{"sm"}}
	if w.tcp != nil {
		card.Addr = w.tcp.Addr()
	}
	if err := rndv.PublishCard(w.job.SessionDir, card); err != nil {
		return err
	}
	cards, err := rndv.WaitAllCards(w.job.SessionDir, w.job.Rank, w.job.Size, time.Duration(w.rt.WireTimeout)*time.Second)
	w.cards = cards
	if err != nil {
		return err
	}
	return w.readGorunSecret()
}

// btlOpeners are the BTL components, in the order they are opened when the
// btl selector selects them. open returns a nil module when the component
// has nothing to do in this job. A new BTL adds one entry here and its name
// to the btl selector.
var btlOpeners = []struct {
	name string
	open func(w *wiring) (btl.Module, error)
}{
	{"self", func(w *wiring) (btl.Module, error) { return self.New(w.job.Rank, w.params) }},
	{"sm", openSM},
	{"tcp", openTCP},
}

// openBTLs opens every selected BTL; on an error, closeBTLs closes those
// already open.
func (w *wiring) openBTLs() error {
	for _, b := range btlOpeners {
		if !w.rt.BTL.Has(b.name) {
			continue
		}
		m, err := b.open(w)
		if err != nil {
			return err
		}
		if m != nil {
			w.mods = append(w.mods, m)
		}
	}
	return nil
}

func (w *wiring) closeBTLs() {
	for _, m := range w.mods {
		m.Close()
	}
	w.mods = nil
}

// openSM joins the job's shared segment; a singleton or a job of one rank
// has no peer to share it with.
func openSM(w *wiring) (btl.Module, error) {
	if !w.inJob || w.job.Size < 2 {
		return nil, nil
	}
	if w.pmi != nil {
		return openSMPMI(w)
	}
	pids := make([]int, w.job.Size)
	for i, c := range w.cards {
		pids[i] = c.Pid
	}
	job := sm.Job{Rank: w.job.Rank, Size: w.job.Size, LocalRank: w.job.LocalRank,
		SessionDir: w.job.SessionDir, JobID: w.job.JobID, Pids: pids}
	return w.newSM(job)
}

// newSM opens btl/sm with its wait for the other ranks at the segment
// bounded by rndv_base_timeout, as that parameter says (sm's own bound is
// a fixed 60 s).
func (w *wiring) newSM(job sm.Job) (btl.Module, error) {
	cfg, err := sm.ConfigFrom(w.params)
	if err != nil {
		return nil, err
	}
	cfg.AttachTimeout = time.Duration(w.rt.WireTimeout) * time.Second
	m, err := sm.NewWithConfig(job, cfg, mca.Logger(w.params, "btl"))
	if err != nil {
		return nil, err
	}
	return m, nil
}

// openSMPMI is openSM for a PMI job: the ranks of this machine share a
// segment exactly as under gorun, numbered 0..k-1 among themselves (shown
// to the PML by world rank through btl/remap), with their rendezvous in a
// node-local session directory keyed by the PMI job id, which local rank 0
// creates and removes once every local rank has attached.
func openSMPMI(w *wiring) (btl.Module, error) {
	local := w.localRanks()
	if len(local) < 2 {
		return nil, nil
	}
	me := slices.Index(local, w.job.Rank)
	pids := make([]int, len(local))
	for i, r := range local {
		pids[i] = w.pids[r]
	}
	dir, smJobID := pmiSessionDir(w.job.JobID), ""
	if w.hostSession != "" {
		// Under gorun's helper: in the host's session directory, with the
		// host's job id, so that the helper's cleanup covers the segment.
		dir, smJobID = filepath.Join(w.hostSession, "pmi"), w.hostJobID
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("gorun: creating the node-local session directory: %w", err)
	}
	if smJobID == "" {
		smJobID = "pmi-" + filepath.Base(dir)
	}
	job := sm.Job{Rank: me, Size: len(local), LocalRank: me,
		SessionDir: dir, JobID: smJobID, Pids: pids}
	m, err := w.newSM(job)
	// Once New returns, every local rank has attached (or the job is
	// failing): the rendezvous files are done with. Every local rank
	// removes them, so that one killed before this point leaves nothing
	// as long as another gets here.
	os.RemoveAll(dir)
	if err != nil {
		return nil, err
	}
	rm, err := remap.New(m, w.job.Size, local)
	if err != nil {
		m.Close()
		return nil, err
	}
	return rm, nil
}

// startPML starts the PML over the open BTLs.
func (w *wiring) startPML() (*pml.PML, error) {
	cfg, err := pml.Params.Config(w.params)
	if err != nil {
		return nil, err
	}
	if state.collCfg, err = coll.Params.Config(w.params); err != nil {
		return nil, err
	}
	if state.shmCfg, err = shm.Params.Config(w.params); err != nil {
		return nil, err
	}
	cfg.Rank, cfg.Size, cfg.Modules, cfg.Log = w.job.Rank, w.job.Size, w.mods, mca.Logger(w.params, "pml")
	cfg.NodeID = w.nodes      // SplitShared's machines; nil: all on this one
	cfg.SetYield(node.CPUs()) // the machine's, not this rank's share (launcher_base_bind)
	return pml.New(cfg)
}
