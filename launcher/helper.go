package launcher

// The remote helper: `gorun --remote-helper`, started by gorun on every
// host of a job across machines (through the launch agent, or directly on
// gorun's own machine). It runs that host's ranks and reports to gorun in
// frames over its stdin and stdout (see frame.go).
//
// Its rules:
//   - It creates the host's session directory like gorun does on one
//     machine, spawns the ranks (own process groups, Pdeathsig, lifeline),
//     and gives each a socket pair as PMI_FD whose other end it relays to
//     gorun's PMI server.
//   - It forwards each rank's output line by line, its start and its exit.
//   - It signals its ranks when gorun says so.
//   - When gorun tells it to stop, or when its stdin ends (gorun is gone,
//     or the agent's connection broke), it stops every rank (SIGTERM, then
//     SIGKILL after stopGrace), removes the session directory and the job's
//     shared-memory files, and exits.

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/internal/node"
	"github.com/gorun-mpi/gorun/jobenv"
)

// Helper modes of the gorun command (hidden from its usage text).
const (
	HelperFlag = "--remote-helper"        // run as the helper
	VerifyFlag = "--remote-helper-verify" // exit 0 when our executable's SHA-256 is the argument
)

// PMI environment a rank gets from its helper.
const (
	EnvPMIFD    = "PMI_FD"
	EnvPMIRank  = "PMI_RANK"
	EnvPMISize  = "PMI_SIZE"
	EnvPMIJobID = "PMI_JOBID"
)

// More variables gorun sets for ranks of a job across machines.
const (
	EnvLocalSize = jobenv.EnvLocalSize
	EnvNode      = "GORUN_NODE"
)

// pmiFD is the descriptor number of PMI_FD in a rank (after the lifeline).
const pmiFD = 4

// VerifySelf is the --remote-helper-verify mode: status 0 when the running
// executable's SHA-256 is want, 1 otherwise.
func VerifySelf(want string) int {
	self, err := os.Executable()
	if err != nil {
		return 1
	}
	got, _, err := fileHash(self)
	if err != nil || got != want {
		return 1
	}
	return 0
}

// fileHash returns the hex SHA-256 and the size of a file.
func fileHash(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// cacheDir is where a host keeps what gorun brought, by content hash:
// $XDG_CACHE_HOME/gorun or $HOME/.cache/gorun (the bootstrap script uses
// the same rule).
func cacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "gorun"), nil
}

// helper is one run of the remote helper.
type helper struct {
	out    *frameWriter
	in     *bufio.Reader
	frames chan frame // from gorun; closed when stdin ends
	log    hclog.Logger

	spec    specMsg
	sess    *session
	sp      *spawner
	ranks   []*helperRank
	exits   chan int // index into ranks of a reaped rank
	stdin   *os.File // rank 0's stdin pipe (write end), when it is here
	lifeW   *os.File // the ranks' lifeline, held open until we exit
	pending []frame  // frames that came while the program was arriving
	sigs    chan os.Signal
}

type helperRank struct {
	id     int
	cmd    *exec.Cmd
	pmi    *os.File // our end of the rank's PMI socket pair
	output sync.WaitGroup
	done   bool
}

// RunHelper runs the helper over in and out (the agent's stdin and stdout)
// and returns its exit status.
func RunHelper(in io.Reader, out io.Writer) int {
	// TMPDIR comes from the agent's environment (ssh gives the host's own;
	// other agents may pass gorun's): where it does not exist on this host,
	// the host's default (/tmp) serves, for us and the ranks.
	if d := os.Getenv("TMPDIR"); d != "" {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			os.Unsetenv("TMPDIR")
		}
	}
	h := &helper{out: &frameWriter{w: out}, in: bufio.NewReaderSize(in, 64<<10), frames: make(chan frame, 64),
		exits: make(chan int, 16), log: hclog.NewNullLogger(), sigs: make(chan os.Signal, 4)}
	catchSignals(h.sigs)
	if _, err := io.WriteString(out, helperMagic+"\n"); err != nil {
		return 1
	}
	host, _ := os.Hostname()
	h.out.writeJSON(frHello, 0, helloMsg{Host: host, Cores: runtime.NumCPU(), Pid: os.Getpid()})
	go h.readFrames()
	status := h.run()
	h.teardown()
	return status
}

func (h *helper) readFrames() {
	defer close(h.frames)
	for {
		f, err := readFrame(h.in)
		if err != nil {
			return
		}
		h.frames <- f
	}
}

func (h *helper) fatal(format string, args ...any) int {
	h.out.write(frFatal, 0, []byte(fmt.Sprintf(format, args...)))
	return 1
}

// run serves gorun until it says stop (status 0) or is gone (status 1).
func (h *helper) run() int {
	for {
		var f frame
		ok := true
		var sig os.Signal
		exited := -1
		if len(h.pending) > 0 {
			f, h.pending = h.pending[0], h.pending[1:]
		} else {
			select {
			case f, ok = <-h.frames:
			case exited = <-h.exits:
			case sig = <-h.sigs:
			}
		}
		switch {
		case exited >= 0:
			h.ranks[exited].done = true
			continue
		case sig == unix.SIGPIPE:
			continue // gorun is gone: stdin ends too
		case sig != nil:
			h.stopRanks(unix.SIGTERM)
			return 1
		case !ok:
			h.stopRanks(unix.SIGTERM) // gorun is gone
			return 1
		}
		{
			switch f.typ {
			case frSpec:
				if err := json.Unmarshal(f.payload, &h.spec); err != nil {
					return h.fatal("bad job description from gorun: %v", err)
				}
				if err := h.start(); err != nil {
					return h.fatal("%v", err)
				}
			case frPMI:
				if r := h.rank(f.rank); r != nil && r.pmi != nil {
					r.pmi.Write(f.payload) // a rank that closed its end no longer listens
				}
			case frStdin:
				if h.stdin != nil {
					if len(f.payload) == 0 {
						h.stdin.Close()
						h.stdin = nil
					} else if _, err := h.stdin.Write(f.payload); err != nil {
						h.stdin.Close()
						h.stdin = nil
					}
				}
			case frSignal:
				if len(f.payload) == 1 {
					h.signalLive(syscall.Signal(f.payload[0]))
				}
			case frShutdown:
				return 0
			}
		}
	}
}

func (h *helper) rank(id int) *helperRank {
	i := id - h.spec.First
	if i < 0 || i >= len(h.ranks) {
		return nil
	}
	return h.ranks[i]
}

// start makes the session directory, finds the program and spawns the ranks.
func (h *helper) start() error {
	s := &h.spec
	if s.Count < 1 || s.First < 0 || s.First+s.Count > s.Size || s.Size > MaxNP {
		return fmt.Errorf("bad job description from gorun: ranks %d..%d of %d", s.First, s.First+s.Count-1, s.Size)
	}
	path, err := h.program()
	if err != nil {
		return err
	}
	if h.sess, err = openSession(os.TempDir(), os.Getuid(), s.Backing, h.log.Debug); err != nil {
		return err
	}
	if s.Dir != "" {
		if err := os.Chdir(s.Dir); err != nil {
			if home, herr := os.UserHomeDir(); herr == nil {
				os.Chdir(home)
			}
		}
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return err
	}
	h.lifeW = lifeW
	defer lifeR.Close()
	h.sp = newSpawner()
	var stdinR *os.File
	if s.Stdin {
		var w *os.File
		if stdinR, w, err = os.Pipe(); err != nil {
			return err
		}
		h.stdin = w
		defer stdinR.Close()
	}
	env := h.rankEnv()
	for i := range s.Count {
		id := s.First + i
		r, err := h.startRank(id, i, path, env, lifeR, stdinR)
		if err != nil {
			return err
		}
		h.ranks = append(h.ranks, r)
		h.out.writeJSON(frStarted, id, startedMsg{Pid: r.cmd.Process.Pid})
		go h.relayPMI(r)
		go func() {
			r.cmd.Wait()
			waitTimeout(&r.output, drainWait)
			code, how := exitStatus(r.cmd.ProcessState)
			m := exitMsg{Pid: r.cmd.Process.Pid, Code: code, How: how}
			if a, err := jobenv.ReadAbort(h.sess.dir, id); err == nil {
				m.Abort = &a
			}
			h.out.writeJSON(frExit, id, m)
			h.exits <- i
		}()
	}
	return nil
}

// program returns the executable to run, receiving it from gorun into the
// cache when gorun brings it and the cache lacks it.
func (h *helper) program() (string, error) {
	s := &h.spec
	host, _ := os.Hostname()
	if s.Program == nil {
		fi, err := os.Stat(s.Path)
		if err != nil {
			return "", fmt.Errorf("program %s not found on host %s (copy it there, or use --preload): %v", s.Path, host, unwrapPath(err))
		}
		if err := checkExecutable(s.Path, fi); err != nil {
			return "", fmt.Errorf("program %s on host %s %v", s.Path, host, err)
		}
		return s.Path, nil
	}
	dir, err := cacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory on host %s for the program gorun brings: %v", host, err)
	}
	path := filepath.Join(dir, "prog-"+s.Program.Hash)
	if got, _, err := fileHash(path); err == nil && got == s.Program.Hash {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating the cache directory on host %s: %v", host, err)
	}
	tmp, err := os.CreateTemp(dir, "prog-*.part")
	if err != nil {
		return "", fmt.Errorf("caching the program on host %s: %v", host, err)
	}
	defer os.Remove(tmp.Name())
	h.out.writeJSON(frNeed, 0, *s.Program)
	sum := sha256.New()
	var n int64
	for {
		f, ok := <-h.frames
		if !ok {
			tmp.Close()
			return "", errors.New("gorun went away while sending the program")
		}
		if f.typ != frFile {
			h.pending = append(h.pending, f) // handled once the ranks run
			continue
		}
		if len(f.payload) == 0 {
			break
		}
		sum.Write(f.payload)
		n += int64(len(f.payload))
		if _, err := tmp.Write(f.payload); err != nil {
			tmp.Close()
			return "", fmt.Errorf("caching the program on host %s: %v", host, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("caching the program on host %s: %v", host, err)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != s.Program.Hash || n != s.Program.Size {
		return "", fmt.Errorf("the program gorun sent arrived corrupted on host %s (%d bytes, SHA-256 %s; want %d, %s)", host, n, got, s.Program.Size, s.Program.Hash)
	}
	if err := os.Chmod(tmp.Name(), 0o700); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("caching the program on host %s: %v", host, err)
	}
	return path, nil
}

// rankEnv is the helper's environment without the variables gorun sets,
// plus the job's (spec.Env) and GOMAXPROCS when neither sets it.
func (h *helper) rankEnv() []string {
	own := []string{jobenv.EnvRank, jobenv.EnvSize, jobenv.EnvLocalRank, EnvLocalSize, EnvNode, jobenv.EnvJobID, jobenv.EnvSessionDir, jobenv.EnvLifelineFD,
		EnvPMIFD, EnvPMIRank, EnvPMISize, EnvPMIJobID, node.EnvCPUs}
	var env []string
	set := map[string]bool{}
	for _, kv := range h.spec.Env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !contains(own, k) && !set[k] {
			env = append(env, kv)
		}
	}
	env = append(env, h.spec.Env...)
	s := &h.spec
	return append(env,
		jobenv.EnvSize+"="+strconv.Itoa(s.Size),
		EnvLocalSize+"="+strconv.Itoa(s.Count),
		EnvNode+"="+strconv.Itoa(s.Node),
		node.EnvCPUs+"="+strconv.Itoa(runtime.NumCPU()), // the ranks' masks may be their shares (bind.go)
		jobenv.EnvJobID+"="+h.sess.jobID,
		jobenv.EnvSessionDir+"="+h.sess.dir,
		jobenv.EnvLifelineFD+"="+strconv.Itoa(jobenv.LifelineFD),
		EnvPMIFD+"="+strconv.Itoa(pmiFD),
		EnvPMISize+"="+strconv.Itoa(s.Size),
		EnvPMIJobID+"="+s.JobID)
}

func (h *helper) startRank(id, local int, path string, env []string, lifeline, stdin *os.File) (*helperRank, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("starting rank %d: socket pair for PMI: %v", id, err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "pmi"), os.NewFile(uintptr(fds[1]), "pmi-rank")
	defer theirs.Close()
	cmd := exec.Command(path, h.spec.Args...)
	cmd.Env = append(env[:len(env):len(env)], jobenv.EnvRank+"="+strconv.Itoa(id), jobenv.EnvLocalRank+"="+strconv.Itoa(local),
		EnvPMIRank+"="+strconv.Itoa(id))
	cmd.ExtraFiles = []*os.File{lifeline, theirs} // fds 3 and 4
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if id == 0 && stdin != nil {
		cmd.Stdin = stdin
	}
	prefix := ""
	if h.spec.TagOutput {
		prefix = "[" + strconv.Itoa(id) + "] "
	}
	r := &helperRank{id: id, cmd: cmd, pmi: ours}
	var readers, writers []*os.File
	for range 2 {
		pr, pw, err := os.Pipe()
		if err != nil {
			ours.Close()
			return nil, fmt.Errorf("starting rank %d: output pipe: %v", id, err)
		}
		readers, writers = append(readers, pr), append(writers, pw)
	}
	cmd.Stdout, cmd.Stderr = writers[0], writers[1]
	err = h.sp.start(cmd, h.spec.Bind, h.spec.Count, local)
	for _, w := range writers {
		w.Close()
	}
	if err != nil {
		ours.Close()
		for _, r := range readers {
			r.Close()
		}
		return nil, fmt.Errorf("starting rank %d (%s): %v", id, path, err)
	}
	for i, typ := range []byte{frStdout, frStderr} {
		r.output.Add(1)
		go func() {
			defer r.output.Done()
			defer readers[i].Close()
			forwardLines(readers[i], &sink{w: frameSink{h.out, typ, id}}, prefix)
		}()
	}
	return r, nil
}

// frameSink sends each write as one output frame.
type frameSink struct {
	fw   *frameWriter
	typ  byte
	rank int
}

func (s frameSink) Write(p []byte) (int, error) {
	return len(p), s.fw.chunks(s.typ, s.rank, p)
}

// relayPMI forwards what the rank writes on its PMI socket to gorun.
func (h *helper) relayPMI(r *helperRank) {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.pmi.Read(buf)
		if n > 0 {
			h.out.write(frPMI, r.id, buf[:n])
		}
		if err != nil {
			h.out.write(frPMI, r.id, nil) // the rank closed its end
			return
		}
	}
}

func (h *helper) signalLive(sig syscall.Signal) {
	for _, r := range h.ranks {
		if !r.done {
			unix.Kill(-r.cmd.Process.Pid, sig)
		}
	}
}

// stopRanks sends sig to the live ranks, then SIGKILL after stopGrace,
// and returns once every rank is reaped.
func (h *helper) stopRanks(sig syscall.Signal) {
	h.signalLive(sig)
	kill := time.After(stopGrace)
	for h.live() > 0 {
		select {
		case i := <-h.exits:
			h.ranks[i].done = true
		case <-kill:
			h.signalLive(unix.SIGKILL)
		}
	}
}

func (h *helper) live() int {
	n := 0
	for _, r := range h.ranks {
		if !r.done {
			n++
		}
	}
	return n
}

// teardown stops what is left and removes the host's files, then says bye.
func (h *helper) teardown() {
	h.stopRanks(unix.SIGKILL)
	for _, r := range h.ranks {
		unix.Kill(-r.cmd.Process.Pid, unix.SIGKILL) // descendants left in the groups
		r.pmi.Close()
	}
	if h.stdin != nil {
		h.stdin.Close()
	}
	if h.sp != nil {
		h.sp.stop()
	}
	if h.sess != nil {
		h.sess.close(h.spec.Backing)
	}
	h.out.write(frBye, 0, nil)
}
