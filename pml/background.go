package pml

import (
	"time"

	"github.com/gorun-mpi/gorun/btl"
)

// Background progress. A program may compute for minutes between MPI
// calls; a module that cannot wait that long (btl.Progressor: tcp, whose
// peers' connections die when this rank's receive windows stay shut past
// btl_tcp_timeout) gets polled by one goroutine per PML at the shortest
// interval any module asks for. Each tick is one Progress call: nothing
// when another goroutine is progressing or sleeping in a module (it holds
// progMu and polls or wakes on its own), else one non-blocking poll of
// every module, which drains arrived fragments into the matching engine or
// posted receives and moves queued sends. A rank of sm and self only
// starts no goroutine.

// startBackground starts the poller when a module asks for one.
func (p *PML) startBackground() {
	var every time.Duration
	for _, m := range p.mods {
		if pr, ok := m.(btl.Progressor); ok {
			if d := pr.ProgressWithin(); d > 0 && (every == 0 || d < every) {
				every = d
			}
		}
	}
	if every == 0 {
		return
	}
	p.bgStop = make(chan struct{})
	p.bgDone = make(chan struct{})
	go p.background(every)
}

// background polls every tick until Close.
func (p *PML) background(every time.Duration) {
	defer close(p.bgDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.bgStop:
			return
		case <-t.C:
			p.Progress()
		}
	}
}

// stopBackground ends the poller (Close) and waits for it, so that no
// Progress of it runs once the modules are closed.
func (p *PML) stopBackground() {
	if p.bgStop == nil {
		return
	}
	close(p.bgStop)
	<-p.bgDone
}
