// Package remap shows a module that numbers its peers 0..k-1 (btl/sm over
// the ranks of one machine) to the PML, which numbers them by world rank:
// a job spread over several machines runs one sm module per machine, over
// that machine's ranks only.
//
// Invariants: every call that names a peer translates world → local on the
// way in, and every callback local → world on the way out; a world rank
// outside the group is unreachable, and Send to it fails. The wrapper
// forwards the optional capabilities the PML looks for that the inner
// module has (Sleeper, Flusher, the running-rank hints), and never claims
// btl.Watcher.
package remap

import (
	"fmt"
	"time"

	"github.com/gorun-mpi/gorun/btl"
)

// Module is inner seen through world ranks.
type Module struct {
	inner   btl.Module
	toLocal []int // by world rank: local rank, or -1
	toWorld []int // by local rank: world rank
	sleeper btl.Sleeper
	flusher btl.Flusher
	runner  runner
}

type runner interface {
	SetRunning(on bool)
	PeerRunning(rank int) bool
}

var (
	_ btl.Module  = (*Module)(nil)
	_ btl.Sleeper = (*Module)(nil)
	_ btl.Flusher = (*Module)(nil)
)

// New wraps inner, whose local rank i is world rank members[i], in a job of
// worldSize ranks. inner must be a btl.Sleeper (it is the rank's sleeper).
func New(inner btl.Module, worldSize int, members []int) (*Module, error) {
	s, ok := inner.(btl.Sleeper)
	if !ok {
		return nil, fmt.Errorf("btl/remap: module %s cannot sleep (btl.Sleeper)", inner.Name())
	}
	m := &Module{inner: inner, toLocal: make([]int, worldSize), toWorld: append([]int(nil), members...), sleeper: s}
	for i := range m.toLocal {
		m.toLocal[i] = -1
	}
	for l, w := range members {
		if w < 0 || w >= worldSize || m.toLocal[w] >= 0 {
			return nil, fmt.Errorf("btl/remap: member list %v: rank %d out of 0..%d or repeated", members, w, worldSize-1)
		}
		m.toLocal[w] = l
	}
	m.flusher, _ = inner.(btl.Flusher)
	m.runner, _ = inner.(runner)
	return m, nil
}

func (m *Module) local(world int) int {
	if world < 0 || world >= len(m.toLocal) {
		return -1
	}
	return m.toLocal[world]
}

func (m *Module) Name() string               { return m.inner.Name() }
func (m *Module) Attributes() btl.Attributes { return m.inner.Attributes() }
func (m *Module) Progress() int              { return m.inner.Progress() }
func (m *Module) Close() error               { return m.inner.Close() }
func (m *Module) Sleep(d time.Duration)      { m.sleeper.Sleep(d) }
func (m *Module) Wake()                      { m.sleeper.Wake() }

// Inner is the wrapped module.
func (m *Module) Inner() btl.Module { return m.inner }

func (m *Module) Reachable(peer int) bool {
	l := m.local(peer)
	return l >= 0 && m.inner.Reachable(l)
}

func (m *Module) Register(tag btl.Tag, fn btl.RecvFunc) {
	m.inner.Register(tag, func(src int, data []byte) { fn(m.toWorld[src], data) })
}

func (m *Module) OnPeerLost(fn func(peer int)) {
	m.inner.OnPeerLost(func(l int) { fn(m.toWorld[l]) })
}

func (m *Module) Send(peer int, tag btl.Tag, hdr, payload []byte, c btl.Completion) (bool, error) {
	l := m.local(peer)
	if l < 0 {
		return false, fmt.Errorf("btl/remap: rank %d is not on this machine; %s does not reach it", peer, m.inner.Name())
	}
	return m.inner.Send(l, tag, hdr, payload, c)
}

func (m *Module) ReadFrom(peer int, addr uintptr, dst []byte) error {
	l := m.local(peer)
	if l < 0 {
		return fmt.Errorf("btl/remap: rank %d is not on this machine", peer)
	}
	return m.inner.ReadFrom(l, addr, dst)
}

// WriteTo forwards btl.Writer when inner is one.
func (m *Module) WriteTo(peer int, addr uintptr, src []byte) error {
	w, ok := m.inner.(btl.Writer)
	if !ok {
		return fmt.Errorf("btl/remap: %s cannot write into another process's memory", m.inner.Name())
	}
	l := m.local(peer)
	if l < 0 {
		return fmt.Errorf("btl/remap: rank %d is not on this machine", peer)
	}
	return w.WriteTo(l, addr, src)
}

// QueueMark and Flushed forward btl.Flusher (flushed when inner holds no
// queues).
func (m *Module) QueueMark(peer int) uint64 {
	if l := m.local(peer); m.flusher != nil && l >= 0 {
		return m.flusher.QueueMark(l)
	}
	return 0
}

func (m *Module) Flushed(peer int, mark uint64) bool {
	l := m.local(peer)
	return m.flusher == nil || l < 0 || m.flusher.Flushed(l, mark)
}

// SetRunning and PeerRunning forward the running-rank hints.
func (m *Module) SetRunning(on bool) {
	if m.runner != nil {
		m.runner.SetRunning(on)
	}
}

func (m *Module) PeerRunning(rank int) bool {
	l := m.local(rank)
	return m.runner != nil && l >= 0 && m.runner.PeerRunning(l)
}
