package pml

import "github.com/gorun-mpi/gorun/btl"

// finalBarrier is Finalize's barrier: in the shared memory of a BTL that
// reaches every other rank (btl.JobBarrier; one machine), else world's
// barrier of messages and the flush of those messages.
func (p *PML) finalBarrier(world *Comm) error {
	jb := p.jobBarrier()
	if jb == nil {
		if err := world.Barrier(); err != nil {
			return err
		}
		return p.flushBarrier()
	}
	return p.sharedBarrier(jb)
}

// jobBarrier returns the module through which this rank reaches every
// other rank, if it is a btl.JobBarrier; nil otherwise (a job of one rank
// needs no barrier).
func (p *PML) jobBarrier() btl.JobBarrier {
	var m btl.Module
	for i := range p.peers {
		if i == p.cfg.Rank {
			continue
		}
		if m == nil {
			m = p.peers[i].m
		} else if p.peers[i].m != m {
			return nil
		}
	}
	jb, _ := m.(btl.JobBarrier)
	return jb
}

// sharedBarrier meets the other ranks in jb. Before arriving, this rank
// waits until its BTLs have handed over every send queued so far (a full
// FIFO): once all have arrived they close, and a message still queued
// would be lost, its receiver seeing us gone. While it waits for the
// release it keeps draining its own FIFO, for peers that still flush to
// it. It fails with ErrPeerLost when a rank is found gone first (one that
// never arrives would keep the others waiting until gorun stops the job).
func (p *PML) sharedBarrier(jb btl.JobBarrier) error {
	if err := p.flushQueued(); err != nil {
		return err
	}
	jb.Arrive()
	err := p.WaitFor(func() bool { return jb.Released() || p.nlost.Load() > 0 })
	if err != nil || jb.Released() {
		return err
	}
	for i := range p.peers {
		if p.peers[i].lost.Load() {
			return peerLost(i)
		}
	}
	return nil // not reached: nlost counts the peers marked lost
}

// flushQueued waits until every send queued in a Flusher BTL when it is
// called has been handed over (or its peer is lost). A module that can
// tell that none of its queues holds a send (queueIdler) costs no look
// per peer: at 1024 ranks those looks were a tenth of Finalize's barrier.
func (p *PML) flushQueued() error {
	type target struct {
		f    btl.Flusher
		rank int
		mark uint64
	}
	var ts []target
	for _, m := range p.mods {
		f, ok := m.(btl.Flusher)
		if !ok {
			continue
		}
		if q, ok := m.(queueIdler); ok && q.NoneQueued() {
			continue
		}
		for i := range p.peers {
			if p.peers[i].m != m || i == p.cfg.Rank {
				continue
			}
			if mark := f.QueueMark(i); !f.Flushed(i, mark) {
				ts = append(ts, target{f, i, mark})
			}
		}
	}
	return p.WaitFor(func() bool {
		for len(ts) > 0 && ts[0].f.Flushed(ts[0].rank, ts[0].mark) {
			ts = ts[1:]
		}
		return len(ts) == 0
	})
}

// queueIdler is a Flusher that can tell at once that none of its queues
// holds a send (every send accepted so far has been handed over).
type queueIdler interface {
	NoneQueued() bool
}
