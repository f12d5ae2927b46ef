package launcher

// A job across machines, seen from gorun: one helper per host (started
// through the launch agent, or directly on this machine), gorun's PMI-2
// server for the wire-up, and the same exit, signal and output rules as on
// one machine.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/mca"
	"github.com/gorun-mpi/gorun/pmi"
)

// helperWait bounds the wait for the helpers to clean up and exit once
// the job is over.
const helperWait = 10 * time.Second

// hostProc is one host's helper, seen from gorun.
type hostProc struct {
	name   string
	local  bool
	slots  int // from --host/--hostfile; 0: the host's cores
	cmd    *exec.Cmd
	out    *frameWriter // to the helper's stdin
	stdin  io.WriteCloser
	stderr *tailBuffer
	hello  *helloMsg
	first  int
	count  int
	node   int
	gone   bool // its stdout ended
	exited []bool
	pids   []int
}

// hostEvent is a frame from a helper, or the end of its stdout.
type hostEvent struct {
	h   *hostProc
	f   frame
	eof bool
	err error // why the stream ended, when not cleanly
}

// tailBuffer keeps the last bytes written to it (an agent's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// shQuote quotes s for a POSIX shell.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// bootstrapScript is the command gorun runs on a remote host: it runs
// gorun's helper from the host's cache when it is there and intact, and
// otherwise asks for it ("gorun-need-helper"), receives exactly size bytes
// on stdin, checks them and caches them. It needs a POSIX shell, mkdir,
// chmod, mv and head -c.
func bootstrapScript(hash string, size int64) string {
	return fmt.Sprintf(`d="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gorun"; f="$d/helper-%[1]s"
if ! { [ -x "$f" ] && "$f" %[3]s %[1]s; }; then
  echo gorun-need-helper
  umask 077; mkdir -p "$d" || exit 1
  if ! head -c %[2]d > "$f.$$" || ! chmod 700 "$f.$$" || ! "$f.$$" %[3]s %[1]s || ! mv -f "$f.$$" "$f"; then
    rm -f "$f.$$"; echo "gorun-helper-corrupt: the helper gorun sent did not arrive intact" >&2; exit 1
  fi
fi
exec "$f" %[4]s`, hash, size, VerifyFlag, HelperFlag)
}

// multiJob is the state of a job across machines.
type multiJob struct {
	j      *job
	hosts  []*hostProc
	events chan hostEvent
	server *pmi.Server
	conns  map[int]*relayConn
	self   string // our executable
	selfH  string // its SHA-256, when a remote host needs it
	selfN  int64
	prog   string         // the program's local path
	progF  *fileMsg       // set when gorun brings the program to remote hosts
	aborts map[int]*int   // the Abort code of each rank that called it
	lost   map[int]string // ranks lost with their host: how the agent ended
	slurm  bool           // helpers start as Slurm job steps (srun)
}

// runHosts runs the job on j.o.Hosts, whose helpers start through agent,
// or as Slurm job steps when slurm is true.
func (j *job) runHosts(prog program, mcaEnc string, sigs <-chan os.Signal, plm PLMConfig, slurm bool) int {
	agent := strings.Fields(plm.Agent)
	if len(agent) == 0 && !slurm {
		return j.fail("plm_ssh_agent is empty; want a command such as ssh")
	}
	m := &multiJob{j: j, events: make(chan hostEvent, 64), conns: map[int]*relayConn{}, prog: prog.path,
		aborts: map[int]*int{}, lost: map[int]string{}, slurm: slurm}
	var err error
	if m.self, err = os.Executable(); err != nil {
		return j.fail("cannot find gorun's own executable to start its helpers: %v", err)
	}
	// If gorun is killed, its janitor removes gorun's own session
	// directory here; each helper removes its host's.
	local := newLocalNames()
	for _, h := range j.o.Hosts {
		isLocal := local.isLocal(h.Name) && !slurm // under Slurm every rank runs in a job step
		m.hosts = append(m.hosts, &hostProc{name: h.Name, slots: h.Slots, local: isLocal, stderr: &tailBuffer{}})
	}
	for _, h := range m.hosts {
		if !h.local && m.selfH == "" {
			if m.selfH, m.selfN, err = fileHash(m.self); err != nil {
				return j.fail("reading gorun's own executable: %v", err)
			}
		}
	}
	if prog.target != "" || j.o.Preload {
		hash, size, err := fileHash(prog.path)
		if err != nil {
			return j.fail("reading the program: %v", err)
		}
		m.progF = &fileMsg{Hash: hash, Size: size}
	}
	for _, h := range m.hosts {
		if err := m.startHelper(h, agent); err != nil {
			m.shutdown()
			return j.fail("host %s: %v", h.name, err)
		}
	}
	defer m.shutdown()
	return m.loop(mcaEnc, sigs)
}

// startHelper starts h's helper and the goroutine that reads its frames.
func (m *multiJob) startHelper(h *hostProc, agent []string) error {
	script := bootstrapScript(m.selfH, m.selfN)
	switch {
	case h.local:
		h.cmd = exec.Command(m.self, HelperFlag)
	case m.slurm:
		args := srunArgs(h.name, h.slots, "sh", "-c", script)
		h.cmd = exec.Command(args[0], args[1:]...)
	default:
		args := append(append(agent[1:len(agent):len(agent)], h.name), "sh -c "+shQuote(script))
		h.cmd = exec.Command(agent[0], args...)
	}
	// Its own process group: the terminal's Ctrl-C reaches gorun only,
	// which forwards it in order. No Pdeathsig: when gorun dies the helper
	// must live on long enough to clean up (its stdin ends).
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	h.cmd.Stderr = h.stderr
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		return err
	}
	stdout, err := h.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	h.out = &frameWriter{w: h.stdin}
	if err := h.cmd.Start(); err != nil {
		switch {
		case h.local:
			return fmt.Errorf("starting gorun's helper: %v", err)
		case m.slurm:
			return fmt.Errorf("starting srun inside Slurm job: %v", err)
		}
		return fmt.Errorf("starting the launch agent %q: %v (set plm_ssh_agent)", agent[0], err)
	}
	go m.readHelper(h, stdout)
	return nil
}

// readHelper reads h's bootstrap lines, sends the helper binary if asked,
// then forwards h's frames as events until its stdout ends.
func (m *multiJob) readHelper(h *hostProc, stdout io.Reader) {
	br := bufio.NewReaderSize(stdout, 64<<10)
	err := func() error {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return fmt.Errorf("the helper did not start")
			}
			switch strings.TrimSpace(line) {
			case helperMagic:
				return nil
			case "gorun-need-helper":
				go m.sendFile(h, m.self, false)
			}
		}
	}()
	for err == nil {
		var f frame
		if f, err = readFrame(br); err != nil {
			break
		}
		m.events <- hostEvent{h: h, f: f}
	}
	if err == io.EOF {
		err = nil
	}
	m.events <- hostEvent{h: h, eof: true, err: err}
}

// sendFile streams path to h: raw for the bootstrap, or as file frames
// ending with an empty one.
func (m *multiJob) sendFile(h *hostProc, path string, framed bool) {
	f, err := os.Open(path)
	if err != nil {
		m.j.stderr.printf("gorun: host %s: cannot send %s: %v", h.name, path, err)
		h.stdin.Close()
		return
	}
	defer f.Close()
	if !framed {
		if _, err := io.Copy(h.stdin, f); err != nil {
			h.stdin.Close()
		}
		return
	}
	buf := make([]byte, 256<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if h.out.write(frFile, 0, buf[:n]) != nil {
				return
			}
		}
		if err != nil {
			break
		}
	}
	h.out.write(frFile, 0, nil)
}

// agentStatus describes how h's agent (or local helper) ended.
func (h *hostProc) agentStatus() string {
	st := h.cmd.ProcessState
	if st == nil {
		return "it is still running"
	}
	_, how := exitStatus(st)
	msg := "it " + how
	if tail := h.stderr.String(); tail != "" {
		msg += ": " + strings.ReplaceAll(tail, "\n", "\n  ")
	}
	return msg
}

func (m *multiJob) what(h *hostProc) string {
	switch {
	case h.local:
		return "gorun's helper"
	case m.slurm:
		return "srun"
	}
	return "the launch agent"
}

// loop runs the job: the startup (every helper's hello, then the
// placement), then the ranks' events through the exit rules (jobState),
// with signals and the timeout.
func (m *multiJob) loop(mcaEnc string, sigs <-chan os.Signal) int {
	j := m.j
	var timeoutC <-chan time.Time
	if j.o.Timeout > 0 {
		timeoutC = time.After(j.o.Timeout)
	}
	if status, ok := m.startup(sigs, timeoutC); !ok {
		return status
	}
	m.place(mcaEnc)
	st := newJobState(j.o.NP)
	var graceC <-chan time.Time
	for !st.done() {
		var evs []event
		select {
		case ev := <-m.events:
			evs = m.hostEvent(st, ev)
		case sig := <-sigs:
			evs = []event{{kind: evSignal, sig: sig.(syscall.Signal)}}
		case <-timeoutC:
			evs = []event{{kind: evTimeout}}
		case <-graceC:
			graceC = nil
			evs = []event{{kind: evGraceOver}}
		}
		for _, ev := range evs {
			if c := m.apply(st.step(ev)); c != nil {
				graceC = c
			}
		}
	}
	if line := st.summary(j.o.Timeout); line != "" {
		j.stderr.printf("%s", line)
	}
	return st.status
}

// startup waits for every helper's hello. ok is false when the job ends
// before any rank starts (a host that cannot be reached, a signal, the
// timeout), with gorun's status.
func (m *multiJob) startup(sigs <-chan os.Signal, timeoutC <-chan time.Time) (status int, ok bool) {
	j := m.j
	for waiting := len(m.hosts); waiting > 0; {
		select {
		case ev := <-m.events:
			h := ev.h
			switch {
			case ev.eof:
				h.gone = true
				h.cmd.Wait()
				return j.fail("host %s: cannot start gorun's helper there through %s (%s)", h.name, m.what(h), h.agentStatus()), false
			case ev.f.typ == frHello && h.hello == nil:
				var hello helloMsg
				if err := json.Unmarshal(ev.f.payload, &hello); err != nil {
					return j.fail("host %s: the helper's hello is malformed: %v", h.name, err), false
				}
				h.hello = &hello
				waiting--
			}
		case sig := <-sigs:
			j.stderr.printf("gorun: job interrupted by %s while starting the helpers", signalName(sig))
			return signalStatus(sig), false
		case <-timeoutC:
			j.stderr.printf("gorun: job timed out after %v while starting the helpers", j.o.Timeout)
			return ExitTimeout, false
		}
	}
	return 0, true
}

// hostEvent handles a helper's frame or end; it returns the events it
// means for the exit rules.
func (m *multiJob) hostEvent(st *jobState, ev hostEvent) []event {
	j, h := m.j, ev.h
	if ev.eof {
		h.gone = true
		h.cmd.Wait()
		code := 1
		if c := h.cmd.ProcessState.ExitCode(); c > 0 {
			code = c // ssh: 255 when the connection broke
		}
		var evs []event
		for i, done := range h.exited {
			if !done {
				h.exited[i] = true
				m.lost[h.first+i] = h.agentStatus()
				m.server.RankGone(h.first+i, "was lost with host "+h.name)
				evs = append(evs, event{kind: evExit, rank: h.first + i, code: code, how: "lost"})
			}
		}
		return evs
	}
	f := ev.f
	switch f.typ {
	case frNeed:
		go m.sendFile(h, m.prog, true)
	case frStarted:
		var s startedMsg
		if i := f.rank - h.first; json.Unmarshal(f.payload, &s) == nil && i >= 0 && i < h.count {
			h.pids[i] = s.Pid
		}
	case frStdout:
		j.stdout.write(f.payload)
	case frStderr:
		j.stderr.write(f.payload)
	case frPMI:
		if c := m.conns[f.rank]; c != nil {
			c.feed(f.payload)
		}
	case frFatal:
		if st.phase == phaseRunning {
			j.stderr.printf("gorun: host %s: %s", h.name, f.payload)
		}
		return []event{{kind: evStartFailed}}
	case frExit:
		var x exitMsg
		i := f.rank - h.first
		if json.Unmarshal(f.payload, &x) != nil || i < 0 || i >= h.count || h.exited[i] {
			return nil
		}
		h.exited[i] = true
		h.pids[i] = x.Pid
		m.aborts[f.rank] = x.Abort
		if x.Code == 0 && m.server.Unfinalized(f.rank) {
			// Called Init, never Finalize: its peers may be waiting for it
			// (the same rule as on one machine).
			x.Code, x.How = 1, x.How+" without calling Finalize"
		}
		m.server.RankGone(f.rank, x.How)
		j.log.Debug("rank exited", "rank", f.rank, "pid", x.Pid, "host", h.name, "how", x.How)
		return []event{{kind: evExit, rank: f.rank, code: x.Code, how: x.How}}
	}
	return nil
}

// apply carries out the exit rules' actions across the hosts; it returns
// the grace timer's channel when one of them starts it.
func (m *multiJob) apply(actions []action) <-chan time.Time {
	var grace <-chan time.Time
	j := m.j
	for _, a := range actions {
		switch a.kind {
		case actRecordGone:
			// The PMI server already knows (RankGone): a fence the rank
			// did not join fails.
		case actReportFailure:
			h := m.hostOf(a.rank)
			if why, lost := m.lost[a.rank]; lost {
				j.stderr.printf("gorun: rank %d (on %s) was lost with its host: %s ended (%s)", a.rank, h.name, m.what(h), why)
				continue
			}
			if code := m.aborts[a.rank]; code != nil {
				j.stderr.printf("gorun: rank %d called Abort(%d)", a.rank, *code)
			}
			// The contract's line, as on one machine, then the host on a
			// line of its own (not a second "gorun: rank" line), in one write.
			j.stderr.printf("gorun: rank %d (pid %d) %s\ngorun: host %s ran rank %d", a.rank, h.pids[a.rank-h.first], a.how, h.name, a.rank)
		case actSignal:
			m.signalAll(a.sig)
		case actStartGrace:
			grace = time.After(stopGrace)
		}
	}
	return grace
}

// hostOf is the host of rank r.
func (m *multiJob) hostOf(r int) *hostProc {
	for _, h := range m.hosts {
		if r >= h.first && r < h.first+h.count {
			return h
		}
	}
	return m.hosts[0]
}

// allGoneOrHello: every helper has said hello or is gone (startup over).
func (m *multiJob) allGoneOrHello() bool {
	for _, h := range m.hosts {
		if h.hello == nil && !h.gone {
			return false
		}
	}
	return true
}

// place decides where the ranks go, starts the PMI server and sends each
// helper its part of the job.
func (m *multiJob) place(mcaEnc string) {
	j := m.j
	var slots []int
	for _, h := range m.hosts {
		n := h.slots
		if n == 0 {
			n = max(1, h.hello.Cores)
		}
		slots = append(slots, n)
	}
	counts := placeRanks(j.o.NP, slots)
	first := rankBlocks(counts)
	nodeOf := make([]int, j.o.NP)
	nodes := 0
	for i, h := range m.hosts {
		h.first, h.count = first[i], counts[i]
		h.exited, h.pids = make([]bool, h.count), make([]int, h.count)
		if h.count == 0 {
			continue
		}
		h.node = nodes
		for r := h.first; r < h.first+h.count; r++ {
			nodeOf[r] = nodes
		}
		nodes++
	}
	jobID := j.sess.jobID
	m.server = pmi.NewServer(jobID, j.o.NP, nodeOf, map[string]string{"PMI_process_mapping": processMapping(counts)})
	for r := 0; r < j.o.NP; r++ {
		c := &relayConn{h: m.hostOf(r), rank: r}
		c.cond = sync.NewCond(&c.mu)
		m.conns[r] = c
		go func() {
			if err := m.server.Serve(c, r); err != nil {
				j.log.Warn("PMI", "rank", r, "error", err)
			}
		}()
	}
	wd, _ := os.Getwd()
	stdin := j.rank0Stdin()
	for _, h := range m.hosts {
		if h.count == 0 {
			h.out.write(frShutdown, 0, nil)
			continue
		}
		env := []string{mca.EnvResolved + "=" + mcaEnc}
		if g := m.gomaxprocs(h); g != "" {
			env = append(env, g)
		}
		spec := specMsg{JobID: jobID, Size: j.o.NP, Node: h.node, Nodes: nodes, First: h.first, Count: h.count,
			Args: j.o.Args, Env: env, Dir: wd, TagOutput: j.o.TagOutput, Stdin: h.first == 0 && stdin != nil,
			Backing: j.backingDir, Path: m.prog, Bind: bindable(j.cfg, j.o.Environ)}
		if !h.local {
			spec.Program = m.progF
		}
		h.out.writeJSON(frSpec, 0, spec)
		if spec.Stdin {
			go forwardStdin(h, stdin)
		}
	}
}

// gomaxprocs is the GOMAXPROCS entry for h's ranks ("" when gorun's
// environment sets one: it is passed on as is).
func (m *multiJob) gomaxprocs(h *hostProc) string {
	j := m.j
	for _, kv := range j.o.Environ {
		if strings.HasPrefix(kv, envGOMAXPROCS+"=") {
			return kv
		}
	}
	cores := h.hello.Cores
	if h.local {
		cores = runtime.NumCPU()
	}
	return envGOMAXPROCS + "=" + strconv.Itoa(rankGOMAXPROCS(j.cfg.GOMAXPROCS, h.count, cores))
}

// forwardStdin sends gorun's stdin to rank 0's helper, then the end.
func forwardStdin(h *hostProc, in *os.File) {
	defer in.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 && h.out.write(frStdin, 0, buf[:n]) != nil {
			return
		}
		if err != nil {
			break
		}
	}
	h.out.write(frStdin, 0, nil)
}

// signalAll asks every helper still there to signal its live ranks.
func (m *multiJob) signalAll(sig syscall.Signal) {
	for _, h := range m.hosts {
		if !h.gone {
			h.out.write(frSignal, 0, []byte{byte(sig)})
		}
	}
}

// shutdown tells every helper to tear down, waits for them (helperWait at
// most), then kills what is left of the agents.
func (m *multiJob) shutdown() {
	for _, h := range m.hosts {
		if h.cmd != nil && !h.gone {
			h.out.write(frShutdown, 0, nil)
		}
	}
	if m.server != nil {
		m.server.Close()
	}
	for _, c := range m.conns {
		c.feed(nil)
	}
	deadline := time.After(helperWait)
	for m.anyRunning() {
		select {
		case ev := <-m.events:
			if ev.eof {
				ev.h.gone = true
				ev.h.cmd.Wait()
			} else if ev.f.typ == frStdout {
				m.j.stdout.write(ev.f.payload)
			} else if ev.f.typ == frStderr {
				m.j.stderr.write(ev.f.payload)
			}
		case <-deadline:
			for _, h := range m.hosts {
				if h.cmd != nil && !h.gone {
					m.j.stderr.printf("gorun: host %s: its helper did not exit within %v; killing %s", h.name, helperWait, m.what(h))
					unix.Kill(-h.cmd.Process.Pid, unix.SIGKILL)
				}
			}
			deadline = nil
		}
	}
	for _, h := range m.hosts {
		if h.stdin != nil {
			h.stdin.Close()
		}
	}
}

func (m *multiJob) anyRunning() bool {
	for _, h := range m.hosts {
		if h.cmd != nil && h.cmd.Process != nil && !h.gone {
			return true
		}
	}
	return false
}

// relayConn is gorun's side of one rank's PMI connection: what the rank
// writes arrives in frames (feed); what the server writes goes out in
// frames to the rank's helper.
type relayConn struct {
	h    *hostProc
	rank int
	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte
	eof  bool
}

// feed adds bytes from the rank; nil or empty means its end.
func (c *relayConn) feed(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(p) == 0 {
		c.eof = true
	} else {
		c.buf = append(c.buf, p...)
	}
	c.cond.Broadcast()
}

func (c *relayConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.buf) == 0 && !c.eof {
		c.cond.Wait()
	}
	if len(c.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

func (c *relayConn) Write(p []byte) (int, error) {
	if err := c.h.out.chunks(frPMI, c.rank, p); err != nil {
		return 0, err
	}
	return len(p), nil
}
