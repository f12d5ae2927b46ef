package launcher

import (
	"os/exec"
	"runtime"
)

// spawner starts the ranks from one goroutine locked to its OS thread.
// Linux sends a child's Pdeathsig when the THREAD that forked it exits,
// not the process: so that thread must outlive every rank. It ends (and
// its thread with it, since it stays locked) only when stop is called,
// after every rank has been reaped.
type spawner struct {
	reqs chan spawnReq
	done chan struct{}
}

type spawnReq struct {
	cmd *exec.Cmd
	err chan error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnReq), done: make(chan struct{})}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		for {
			select {
			case r := <-s.reqs:
				r.err <- r.cmd.Start()
			case <-s.done:
				return
			}
		}
	}()
	return s
}

// start runs cmd.Start on the spawner's thread.
func (s *spawner) start(cmd *exec.Cmd) error {
	r := spawnReq{cmd: cmd, err: make(chan error)}
	s.reqs <- r
	return <-r.err
}

// stop ends the spawner's thread; call it once, when no rank is left.
func (s *spawner) stop() { close(s.done) }
