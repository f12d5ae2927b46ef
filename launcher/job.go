package launcher

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/btl/sm"
	"github.com/gorun-mpi/gorun/internal/node"
	"github.com/gorun-mpi/gorun/jobenv"
	"github.com/gorun-mpi/gorun/mca"
	"github.com/gorun-mpi/gorun/mpool"
	"github.com/gorun-mpi/gorun/rndv"
)

// Exit statuses of gorun other than a rank's own (see the contract).
const (
	ExitUsage   = 2   // usage error, missing program, failed build, bad parameter
	ExitTimeout = 124 // --timeout expired
)

// MaxNP is the largest -np gorun accepts.
const MaxNP = rndv.MaxRanks

// stopGrace is how long ranks get between the first signal that stops
// them (SIGTERM, the forwarded SIGINT/SIGTERM, or SIGQUIT on a timeout)
// and SIGKILL. The contract allows 10 s for the whole stop.
const stopGrace = 2 * time.Second

// drainWait bounds the wait for the ranks' output after the last rank is
// reaped; only a rank's escaped descendant can hold a pipe that long.
const drainWait = 2 * time.Second

// Options is one gorun command line, parsed.
type Options struct {
	NP        int           // number of ranks, 1..MaxNP
	MCA       [][2]string   // --mca NAME VALUE pairs, in order
	TagOutput bool          // prefix "[R] " to every output line
	Timeout   time.Duration // 0: no timeout
	Program   string        // executable, Go package directory or .go file
	Hosts     []Host        // --host / --hostfile; nil: this machine only
	Preload   bool          // copy an executable PROGRAM to remote hosts
	Args      []string      // the program's arguments

	// Stdin goes to rank 0 (nil: rank 0 reads /dev/null too). Stdout and
	// Stderr receive the ranks' output and gorun's messages (nil: os.Stdout,
	// os.Stderr). Environ is gorun's environment (nil: os.Environ()), and
	// TempDir the parent of the session directory ("": os.TempDir()).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Environ        []string
	TempDir        string

	// Janitor is the gorun executable, started as the job's janitor
	// (JanitorArg): if gorun is killed, it removes what the job left.
	// "" starts none (tests that call Run in their own process).
	Janitor string
}

// job is one run of Run.
type job struct {
	o              Options
	stdout, stderr *sink
	log            hclog.Logger
	backingDir     string // btl_sm_backing_directory
	gomaxprocs     string // GOMAXPROCS=N for the ranks' environment, or ""
	cfg            Config // the launcher's parameters
	sess           *session
	ranks          []*rankProc
}

// rankProc is one started rank.
type rankProc struct {
	id   int
	cmd  *exec.Cmd
	done bool // reaped (event loop only)
}

// exitEvent reports a reaped rank to the event loop.
type exitEvent struct {
	r     *rankProc
	state *os.ProcessState
}

// Run runs one job and returns gorun's exit status. Every path out of Run,
// the error paths included, has stopped and reaped every rank it started
// and removed the session directory.
func Run(o Options) int {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	j := &job{o: o, stdout: &sink{w: o.Stdout}, stderr: &sink{w: o.Stderr}}
	defer ignoreSIGPIPE()()
	return j.run()
}

// ignoreSIGPIPE makes a write to a closed pipe on gorun's stdout or
// stderr fail with EPIPE instead of killing gorun (Go's default for fds 1
// and 2), so that `gorun ... | head` neither leaves the session directory
// behind nor kills the job (see sink). The returned func undoes it. A
// handled signal is reset on exec, so the ranks keep the default.
func ignoreSIGPIPE() func() {
	c := make(chan os.Signal, 1) // never read: the signal is only noted
	signal.Notify(c, unix.SIGPIPE)
	return func() { signal.Stop(c) }
}

func (j *job) fail(format string, args ...any) int {
	j.stderr.printf("gorun: "+format, args...)
	return ExitUsage
}

func (j *job) run() int {
	if msg := j.checkOptions(); msg != "" {
		return j.fail("%s", msg)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGINT, unix.SIGTERM, unix.SIGHUP)
	defer signal.Stop(sigs)

	set, plm, err := j.resolveParams()
	if err != nil {
		return j.fail("%v", err)
	}
	prog, err := findProgram(j.o.Program)
	if err != nil {
		return j.fail("%v", err)
	}
	j.sess, err = openSession(j.o.TempDir, os.Getuid(), j.backingDir, j.log.Debug)
	if err != nil {
		return j.fail("%v", err)
	}
	if j.o.Janitor != "" {
		stop, err := startJanitor(j.o.Janitor, j.sess, j.backingDir)
		if err != nil {
			j.sess.close(j.backingDir)
			return j.fail("%v", err)
		}
		defer stop() // runs after close: the janitor then finds nothing to do
	}
	defer j.sess.close(j.backingDir)
	j.log.Debug("session", "dir", j.sess.dir)

	if prog.target != "" {
		if status, ok := j.build(&prog, sigs); !ok {
			return status
		}
	}
	return j.launch(prog, set.Encode(), sigs, plm)
}

// checkOptions returns what is wrong with the options, or "".
func (j *job) checkOptions() string {
	o := &j.o
	switch {
	case o.NP < 1 || o.NP > MaxNP:
		return fmt.Sprintf("-np %d: the number of ranks must be 1..%d", o.NP, MaxNP)
	case o.Program == "":
		return "missing PROGRAM (usage: gorun -np N [--mca NAME VALUE]... [--tag-output] [--timeout D] PROGRAM [ARGS...])"
	case o.Timeout < 0:
		return fmt.Sprintf("--timeout %v: must not be negative", o.Timeout)
	}
	return ""
}

// resolveParams resolves the MCA parameters once for the whole job (its
// warnings go to stderr), sets up the launcher's logger and reads the
// parameters the launcher itself uses. An error means the job must not
// start: a bad value, values that cannot work together, an unusable
// backing directory.
func (j *job) resolveParams() (*mca.Set, PLMConfig, error) {
	wd, _ := os.Getwd()         // none: mca skips the working-directory file
	home, _ := os.UserHomeDir() // none: mca skips the home file
	set, warns, err := mca.Resolve(mca.Inputs{Flags: j.o.MCA, Environ: j.o.Environ, WorkDir: wd, Home: home})
	for _, w := range warns {
		j.stderr.printf("gorun: warning: %s", w)
	}
	if err != nil {
		return nil, PLMConfig{}, err
	}
	j.log = mca.LoggerTo(set, "launcher", sinkWriter{j.stderr})
	if err := checkBTLs(set, j.o.NP); err != nil {
		return nil, PLMConfig{}, err
	}
	smCfg, err := sm.Params.Config(set) // the launcher removes what btl/sm leaves in its directory
	if err != nil {
		return nil, PLMConfig{}, err
	}
	j.backingDir = smCfg.BackingDir
	// Refused here, before any rank runs, rather than in every rank.
	if err := mpool.CheckBackingDir(j.backingDir); err != nil {
		return nil, PLMConfig{}, err
	}
	if j.cfg, err = Params.Config(set); err != nil {
		return nil, PLMConfig{}, err
	}
	j.gomaxprocs = gomaxprocsEnv(j.o.Environ, j.cfg, j.o.NP)
	plm, err := PLMParams.Config(set)
	return set, plm, err
}

// launch starts the ranks where they belong: on the hosts of --host or
// --hostfile, on the nodes of the Slurm allocation gorun runs in, or here.
func (j *job) launch(prog program, mcaEnc string, sigs <-chan os.Signal, plm PLMConfig) int {
	if len(remoteHosts(j.o.Hosts)) > 0 {
		return j.runHosts(prog, mcaEnc, sigs, plm, false)
	}
	if len(j.o.Hosts) == 0 {
		hosts, err := slurmHosts(j.o.Environ)
		if err != nil {
			return j.fail("%v", err)
		}
		if hosts != nil {
			j.o.Hosts = hosts
			return j.runHosts(prog, mcaEnc, sigs, plm, true)
		}
	}
	return j.runRanks(prog.path, mcaEnc, sigs)
}

// build builds prog, giving up on SIGINT/SIGTERM/SIGHUP. ok is false when
// gorun must exit with status.
func (j *job) build(prog *program, sigs <-chan os.Signal) (status int, ok bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		// go build's Pdeathsig fires when the thread that started it
		// exits: this goroutine keeps its thread until the build is over.
		runtime.LockOSThread()
		done <- prog.build(ctx, j.sess.dir)
	}()
	select {
	case err := <-done:
		if err != nil {
			return j.fail("%v", err), false
		}
		return 0, true
	case sig := <-sigs:
		cancel()
		<-done
		j.stderr.printf("gorun: build of %s interrupted by %s", prog.target, signalName(sig))
		return signalStatus(sig), false
	}
}

// rankEnv is gorun's environment without the variables gorun sets itself,
// plus GOMAXPROCS when gorun's environment has none (see rankGOMAXPROCS).
func (j *job) rankEnv(mcaEnc string) []string {
	own := []string{jobenv.EnvRank, jobenv.EnvSize, jobenv.EnvLocalRank, EnvLocalSize, EnvNode, jobenv.EnvJobID, jobenv.EnvSessionDir, jobenv.EnvLifelineFD, mca.EnvResolved, node.EnvCPUs}
	env := make([]string, 0, len(j.o.Environ)+len(own))
	for _, kv := range j.o.Environ {
		key, _, _ := strings.Cut(kv, "=")
		if !contains(own, key) {
			env = append(env, kv)
		}
	}
	if j.gomaxprocs != "" {
		env = append(env, j.gomaxprocs)
	}
	return append(env,
		jobenv.EnvSize+"="+strconv.Itoa(j.o.NP),
		EnvLocalSize+"="+strconv.Itoa(j.o.NP), // one machine: every rank is local
		EnvNode+"=0",
		node.EnvCPUs+"="+strconv.Itoa(runtime.NumCPU()), // the ranks' masks may be their shares (bind.go)
		jobenv.EnvJobID+"="+j.sess.jobID,
		jobenv.EnvSessionDir+"="+j.sess.dir,
		jobenv.EnvLifelineFD+"="+strconv.Itoa(jobenv.LifelineFD),
		mca.EnvResolved+"="+mcaEnc)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sinkWriter lets a logger write through a sink, one entry per Write.
type sinkWriter struct{ s *sink }

func (w sinkWriter) Write(p []byte) (int, error) {
	w.s.write(p)
	return len(p), nil
}
