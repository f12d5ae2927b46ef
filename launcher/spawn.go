package launcher

import (
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// spawner starts the ranks from one goroutine locked to its OS thread.
// Linux sends a child's Pdeathsig when the THREAD that forked it exits,
// not the process: so that thread must outlive every rank. It ends (and
// its thread with it, since it stays locked) only when stop is called,
// after every rank has been reaped.
//
// It also binds: a child inherits the affinity of the thread that forks
// it, so the thread takes a rank's CPUs for the fork and its own back
// after it (see bind.go). allowed is the thread's own set.
type spawner struct {
	reqs    chan spawnReq
	done    chan struct{}
	allowed []int
}

type spawnReq struct {
	cmd  *exec.Cmd
	cpus []int // the CPUs the child is bound to; nil: not bound
	err  chan error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnReq), done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		s.allowed = allowedCPUs()
		close(ready)
		for {
			select {
			case r := <-s.reqs:
				r.err <- s.startBound(r.cmd, r.cpus)
			case <-s.done:
				return
			}
		}
	}()
	<-ready
	return s
}

// startBound starts cmd bound to cpus (nil: with the thread's own set).
// A binding the kernel refuses (a CPU gone offline meanwhile) leaves the
// child unbound rather than failing the job.
func (s *spawner) startBound(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	var own, set unix.CPUSet
	if unix.SchedGetaffinity(0, &own) != nil {
		return cmd.Start()
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if unix.SchedSetaffinity(0, &set) != nil {
		return cmd.Start()
	}
	err := cmd.Start()
	unix.SchedSetaffinity(0, &own)
	return err
}

// start runs cmd.Start on the spawner's thread, bound to local rank i of
// n when bind says so (see bindCPUs).
func (s *spawner) start(cmd *exec.Cmd, bind bool, n, i int) error {
	r := spawnReq{cmd: cmd, err: make(chan error)}
	if bind {
		r.cpus = bindCPUs(s.allowed, n, i)
	}
	s.reqs <- r
	return <-r.err
}

// stop ends the spawner's thread; call it once, when no rank is left.
func (s *spawner) stop() { close(s.done) }
