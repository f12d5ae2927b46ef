package jobtest

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runLimit bounds one job unless Job.Limit says otherwise: a hung job
// fails its test instead of the run.
const runLimit = 60 * time.Second

// Job is one gorun invocation.
type Job struct {
	Args   []string      // gorun's arguments
	Stdin  string        // gorun's stdin ("" : empty)
	Env    []string      // added to the test's environment
	Dir    string        // working directory ("": the test's)
	TMPDIR string        // "": a new t.TempDir()
	Linger time.Duration // how long ranks may outlive gorun (0: not at all)
	Limit  time.Duration // how long Wait lets gorun run before it kills it (0: runLimit); at least the job's --timeout
}

// Result is how a job ended.
type Result struct {
	Code           int // gorun's exit status; -1 if it was killed by a signal
	Stdout, Stderr string
}

// Proc is a running gorun.
type Proc struct {
	t      testing.TB
	job    Job
	cmd    *exec.Cmd
	stdout lockedBuffer
	stderr lockedBuffer
	done   chan struct{} // closed when gorun has been reaped and its stdout drained
	lines  chan string   // stdout lines, as they come
}

// Run runs gorun with args in a new TMPDIR and returns how it ended.
func Run(t testing.TB, args ...string) Result {
	t.Helper()
	return Job{Args: args}.Run(t)
}

// Run runs the job to its end.
func (j Job) Run(t testing.TB) Result {
	t.Helper()
	return j.Start(t).Wait()
}

// Start starts gorun and registers the leftover check with t.Cleanup.
func (j Job) Start(t testing.TB) *Proc {
	t.Helper()
	statSources()
	if j.TMPDIR == "" {
		j.TMPDIR = t.TempDir()
	}
	p := &Proc{t: t, job: j, done: make(chan struct{}), lines: make(chan string, 1024)}
	p.cmd = exec.Command(Gorun(), j.Args...)
	p.cmd.Dir = j.Dir
	p.cmd.Env = append(append(os.Environ(), "TMPDIR="+j.TMPDIR), j.Env...)
	p.cmd.Stdin = strings.NewReader(j.Stdin)
	p.cmd.Stderr = &p.stderr
	pr, pw := io.Pipe()
	p.cmd.Stdout = pw
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		br := bufio.NewReader(pr)
		for {
			line, err := br.ReadString('\n')
			p.stdout.WriteString(line)
			if err != nil {
				return
			}
			select {
			case p.lines <- strings.TrimSuffix(line, "\n"):
			default: // nobody is waiting for lines
			}
		}
	}()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting gorun: %v", err)
	}
	go func() {
		p.cmd.Wait() // returns once gorun's stdout has been copied into pw
		pw.Close()
		<-drained
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
			j.Linger = 15 * time.Second
		}
		CheckClean(t, j.TMPDIR, p.cmd.Process.Pid, j.Linger)
	})
	return p
}

// Pid is gorun's pid.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// TMPDIR is the job's TMPDIR.
func (p *Proc) TMPDIR() string { return p.job.TMPDIR }

// Lines waits for n stdout lines that start with prefix and returns them;
// it fails the test if they do not come within 30 s.
func (p *Proc) Lines(n int, prefix string) []string {
	p.t.Helper()
	got := p.LinesWithin(n, prefix, 30*time.Second)
	if len(got) < n {
		p.t.Fatalf("waited 30 s for %d stdout lines starting with %q; got %q; stderr %q", n, prefix, got, p.stderr.String())
	}
	return got
}

// LinesWithin is Lines without the failure: it returns the lines that
// came, fewer than n when d passed or gorun ended first.
func (p *Proc) LinesWithin(n int, prefix string, d time.Duration) []string {
	var got []string
	add := func(l string) {
		if strings.HasPrefix(l, prefix) {
			got = append(got, l)
		}
	}
	deadline := time.After(d)
	for len(got) < n {
		select {
		case l := <-p.lines:
			add(l)
		case <-p.done: // every line of gorun's is queued by now
			for len(got) < n {
				select {
				case l := <-p.lines:
					add(l)
				default:
					return got
				}
			}
		case <-deadline:
			return got
		}
	}
	return got
}

// Signal sends sig to gorun.
func (p *Proc) Signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signalling gorun: %v", err)
	}
}

// Wait waits for gorun to end (at most runLimit, then kills it).
func (p *Proc) Wait() Result {
	p.t.Helper()
	limit := p.job.Limit
	if limit <= 0 {
		limit = runLimit
	}
	select {
	case <-p.done:
	case <-time.After(limit):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Errorf("gorun %q still ran after %v; killed it", p.job.Args, limit)
	}
	return Result{Code: p.cmd.ProcessState.ExitCode(), Stdout: p.stdout.String(), Stderr: p.stderr.String()}
}

// lockedBuffer is a bytes.Buffer safe for one writer and many readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.WriteString(s)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
