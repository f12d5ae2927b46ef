package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/node"
)

// Progress writes pending queues, reads every socket with data (one
// epoll_wait(0), then non-blocking reads; with few peers a non-blocking
// read of each, see directMax), delivers complete frames and reports lost
// peers. It returns the number of events handled.
func (m *Module) Progress() int {
	if !m.progMu.TryLock() {
		return 0
	}
	if m.closed.Load() {
		m.progMu.Unlock()
		return 0
	}
	n := 0
	var done []btl.Completion
	if m.pendPeers.Load() > 0 {
		for i := range m.peers {
			if p := &m.peers[i]; p.npend.Load() > 0 && !p.lost.Load() {
				var k int
				k, done = m.flush(p, done)
				n += k
			}
		}
	}
	for _, c := range done {
		c.SendDone(nil)
	}
	if m.direct != nil {
		for _, p := range m.direct {
			if p.rfd >= 0 && !p.lost.Load() {
				n += m.read(p)
			}
		}
	} else {
		n += m.pollEpoll()
	}
	if m.lostUnrep.Load() {
		n += m.reportLost()
	}
	if n > 0 {
		m.lastWork.Store(m.since())
	}
	m.progMu.Unlock()
	return n
}

// directMax is the most connections whose sockets Progress reads directly,
// one non-blocking read each, instead of asking epoll_wait(0) first which
// have data: with one or two peers (two hosts) that saves a system call
// on every message, and an idle poll costs at most one call more. Queued
// sends are written at the top of every Progress either way; a peer's
// hang-up or error shows as the read's end of stream or error, as it does
// after epoll reports it. Sleep and the watcher still wait in epoll.
const directMax = 2

// setDirect makes Progress read the connected sockets directly when there
// are at most directMax of them (called once, by Connect).
func (m *Module) setDirect() {
	if m.cfg.NoDirect {
		return
	}
	var conns []*peer
	for i := range m.peers {
		if p := &m.peers[i]; p.rfd >= 0 {
			conns = append(conns, p)
		}
	}
	if len(conns) > 0 && len(conns) <= directMax {
		m.direct = conns
	}
}

// pollEpoll asks epoll which sockets have data or room and serves them.
// It returns the number of events handled.
func (m *Module) pollEpoll() int {
	n := 0
	k, err := unix.EpollWait(m.epfd, m.events, 0)
	if err != nil && err != unix.EINTR {
		m.log.Error("btl/tcp: epoll_wait failed", "rank", m.rank, "error", err)
	}
	var done []btl.Completion
	for _, ev := range m.events[:max(0, k)] {
		if ev.Pad == 0 {
			m.drainEventfd()
			continue
		}
		p := &m.peers[ev.Pad-1]
		if ev.Events&unix.EPOLLOUT != 0 && p.npend.Load() > 0 && !p.lost.Load() {
			var k int
			k, done = m.flush(p, done[:0])
			n += k
			for _, c := range done {
				c.SendDone(nil)
			}
		}
		if ev.Events&^unix.EPOLLOUT != 0 && p.rfd >= 0 && !p.lost.Load() {
			n += m.read(p)
		}
	}
	return n
}

// since is the module's clock: monotonic nanoseconds since Listen.
func (m *Module) since() int64 { return int64(time.Since(m.born)) }

// recvRaw is a non-blocking read; EAGAIN is (0, nil), end of stream is
// (0, io.EOF).
func recvRaw(fd int, b []byte) (int, error) {
	for {
		r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			if r == 0 {
				return 0, io.EOF
			}
			return int(r), nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		}
		return 0, e
	}
}

// read takes what p's socket holds (a few reads at most) and delivers the
// complete frames; the payload of a fragment being placed goes straight
// into its place.
func (m *Module) read(p *peer) int {
	n := 0
	for i := 0; i < 4; i++ {
		if p.pl.dst != nil {
			done, more := m.readPlaced(p)
			n += done
			if !more {
				return n
			}
			continue
		}
		space := p.rbuf[p.rlen:]
		if len(space) == 0 {
			break // cannot happen: deliver keeps room for one whole frame
		}
		if p.pl.small {
			// The last frame was placed: its successor is likely
			// another, whose payload should not land here first.
			p.pl.small = false
			space = space[:min(len(space), frameHdr+btl.MaxHeader)]
		}
		k, err := recvRaw(p.rfd, space)
		if err != nil {
			m.markLost(p, err)
			return n
		}
		if k == 0 {
			break
		}
		p.rlen += k
		d, err := m.deliver(p)
		n += d
		if err != nil {
			m.log.Error("btl/tcp: malformed frame; dropping the connection", "rank", m.rank, "peer", p.rank, "error", err)
			m.markLost(p, err)
			return n
		}
		if k < len(space) || p.lost.Load() {
			break
		}
	}
	return n
}

// readPlaced reads the rest of a placed fragment's payload into its place
// and, once it is all there, tells the PML (landed). It returns the events
// handled and whether the socket may hold more.
func (m *Module) readPlaced(p *peer) (n int, more bool) {
	pl := &p.pl
	k, err := recvRaw(p.rfd, pl.dst[pl.got:])
	if err != nil {
		m.markLost(p, err)
		return 0, false
	}
	full := k == len(pl.dst)-pl.got
	pl.got += k
	if pl.got < len(pl.dst) {
		return 0, false
	}
	size, tag := len(pl.dst), pl.tag
	pl.dst, pl.got, pl.small = nil, 0, true
	if fn := m.landed[tag]; fn != nil {
		fn(p.rank, pl.hdr[:pl.hdrLen], size)
	}
	return 1, full
}

// placeMin is the smallest rest of a payload worth a place of its own
// (Module.placeMin, which tests lower): below it, reading the rest into
// the connection's buffer and copying costs no more than the extra read a
// placed frame costs (its successor's header is read on its own).
const placeMin = 32 << 10

// deliver hands every complete frame of p.rbuf to its callback, starts the
// placing of a partial frame whose tag has a place (btl.Placer), then
// makes sure the partial frame left (if any) fits the buffer.
func (m *Module) deliver(p *peer) (int, error) {
	n := 0
	maxBody := btl.MaxHeader + m.cfg.MaxSendSize
	for p.rlen-p.roff >= frameHdr {
		h := p.rbuf[p.roff:]
		body := int(binary.LittleEndian.Uint32(h))
		tag, hdrLen := btl.Tag(h[4]), int(h[5])
		if tag >= btl.NumTags || hdrLen > btl.MaxHeader || body < hdrLen || body > maxBody || h[6] != 0 || h[7] != 0 {
			return n, fmt.Errorf("frame header % x: tag %d, header %d bytes, body %d bytes (allowed: tag < %d, header ≤ %d, body ≤ %d)",
				h[:frameHdr], tag, hdrLen, body, btl.NumTags, btl.MaxHeader, maxBody)
		}
		if have := p.rlen - p.roff - frameHdr; have < body {
			if have >= hdrLen && body-have >= m.placeMin && m.place[tag] != nil && !p.pl.declined && m.startPlace(p, tag, hdrLen, body-hdrLen) {
				return n, nil
			}
			break
		}
		if fn := m.recv[tag]; fn != nil {
			fn(p.rank, p.rbuf[p.roff+frameHdr:p.roff+frameHdr+body])
		}
		p.roff += frameHdr + body
		p.pl.declined = false
		n++
	}
	if p.roff == p.rlen {
		p.roff, p.rlen = 0, 0
	} else if p.roff > 0 && len(p.rbuf)-p.roff < frameHdr+maxBody {
		p.rlen = copy(p.rbuf, p.rbuf[p.roff:p.rlen])
		p.roff = 0
	}
	return n, nil
}

// startPlace asks the PML where the size-byte payload of the partial frame
// at rbuf[roff:] (header complete) goes; given a place, it moves the part
// already read there, empties rbuf (the frame was its last bytes) and
// reports true: read then reads the rest straight into the place.
func (m *Module) startPlace(p *peer, tag btl.Tag, hdrLen, size int) bool {
	h := p.rbuf[p.roff+frameHdr : p.rlen]
	dst := m.place[tag](p.rank, h[:hdrLen], size)
	if len(dst) != size {
		p.pl.declined = true
		return false
	}
	pl := &p.pl
	pl.dst, pl.tag, pl.hdrLen, pl.declined = dst, tag, hdrLen, false
	copy(pl.hdr[:], h[:hdrLen])
	pl.got = copy(dst, h[hdrLen:])
	p.roff, p.rlen = 0, 0
	return true
}

// reportLost calls the peer-lost handler once per lost peer, closes its
// socket and fails its queued by-reference sends.
func (m *Module) reportLost() int {
	m.lostUnrep.Store(false)
	n := 0
	for i := range m.peers {
		p := &m.peers[i]
		if !p.lost.Load() || p.reported {
			continue
		}
		p.reported = true
		var owed []btl.Completion
		p.mu.Lock()
		if p.mu.fd >= 0 {
			unix.EpollCtl(m.epfd, unix.EPOLL_CTL_DEL, p.mu.fd, nil)
			unix.Close(p.mu.fd)
		}
		p.mu.fd, p.rfd = -1, -1
		p.pl = placing{} // nothing more goes into its place
		for p.mu.q.Len() > 0 {
			if c := p.mu.q.Front().c; c != nil {
				owed = append(owed, c)
			}
			p.mu.q.Pop()
		}
		if p.npend.Swap(0) > 0 {
			m.pendPeers.Add(-1)
		}
		p.mu.Unlock()
		err := errPeerLost(p.rank, nil)
		for _, c := range owed {
			c.SendDone(err)
		}
		m.log.Debug("tcp reporting lost peer", "rank", m.rank, "peer", p.rank)
		if m.onLost != nil {
			m.onLost(p.rank)
		}
		n++
	}
	return n
}

func (m *Module) drainEventfd() {
	var b [8]byte
	unix.Read(m.evfd, b[:])
}

// Sleep blocks in epoll_wait until a socket has data or fails, a socket
// with queued sends can take more (EPOLLOUT is watched while a queue is
// non-empty), Wake is called, or d elapses (d <= 0: no timeout).
func (m *Module) Sleep(d time.Duration) {
	if m.closed.Load() || m.spin(d) {
		return
	}
	m.sleeping.Store(true)
	if m.wakePend.Swap(false) || m.lostUnrep.Load() {
		m.sleeping.Store(false)
		return
	}
	ms := -1
	if d > 0 {
		ms = int((d + time.Millisecond - 1) / time.Millisecond)
	}
	var ev [1]unix.EpollEvent
	k := 0
	for {
		var err error
		k, err = unix.EpollWait(m.epfd, ev[:], ms)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	m.sleeping.Store(false)
	if m.wakePend.Swap(false) || k > 0 && ev[0].Pad == 0 {
		m.drainEventfd()
	}
}

// spinPolls is the number of polls between two looks at the clock (and
// passes through Go's scheduler) while spin polls.
const spinPolls = 64

// spin is the first part of a Sleep: until btl_tcp_spin_time has passed
// since the module last moved a message (and for at most d, when d > 0) it
// polls the epoll set without blocking, and reports true as soon as a
// socket has an event, Wake was called or a peer was lost (the caller then
// progresses), false when the time is up and nothing came. A rank idle for
// longer sleeps at once, so it does not spin again after each timeout.
// The PML's own spin phase counts polls; this one counts time, since a
// TCP poll costs a system call and a rank that sleeps pays a wake-up (tens
// of microseconds to milliseconds on a busy machine) on every message.
func (m *Module) spin(d time.Duration) bool {
	spin := m.cfg.Spin()
	if spin <= 0 {
		return false
	}
	start := m.since()
	end := m.lastWork.Load() + int64(spin) // spin only while recently busy
	if d > 0 {
		end = min(end, start+int64(d))
	}
	if end <= start {
		return false
	}
	// Oversubscribed (the PML's pml_ob1_yield_when_idle=auto rule), each
	// poll yields the core, so that the rank that holds the message runs.
	yield := m.size > node.CPUs()
	var ev [1]unix.EpollEvent
	for i := 1; ; i++ {
		// epoll_pwait with no signal mask is epoll_wait (which arm64
		// lacks); a raw call, since it never blocks.
		n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(m.epfd), uintptr(unsafe.Pointer(&ev[0])), 1, 0, 0, 0)
		if (e == 0 && n > 0) || m.lostUnrep.Load() || m.closed.Load() {
			if e == 0 && n > 0 && ev[0].Pad == 0 {
				m.drainEventfd() // a late kick: Progress reads sockets, not evfd, with direct reads
			}
			return true
		}
		if m.wakePend.Swap(false) {
			return true
		}
		if yield {
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
		if i%spinPolls == 0 {
			if m.since() >= end {
				return false
			}
			runtime.Gosched()
		}
	}
}

// Wake ends a Sleep of this module, now or the next one. It never
// blocks for long and does nothing after Close.
func (m *Module) Wake() {
	m.wakePend.Store(true)
	if m.sleeping.Load() {
		m.kick()
	}
}

// kick makes evfd readable, ending an epoll_wait on the module's set.
func (m *Module) kick() {
	m.fdMu.RLock()
	if !m.closed.Load() && m.evfd >= 0 {
		one := [8]byte{1}
		unix.Write(m.evfd, one[:])
	}
	m.fdMu.RUnlock()
}

// Watch arms (wake != nil) or disarms (nil) the watcher: a goroutine that
// waits in epoll_wait on the module's sockets while armed and calls wake
// once when one has data, fails, or can take more of its queued sends,
// then waits to be armed again. See btl.Watcher.
func (m *Module) Watch(wake func()) {
	if wake == nil {
		m.watchFn.Store(nil)
		return
	}
	m.watchFn.Store(&wake)
	select {
	case m.watchArm <- struct{}{}:
	default:
	}
}

func (m *Module) watchLoop() {
	defer m.wg.Done()
	var ev [8]unix.EpollEvent
	for {
		select {
		case <-m.watchArm:
		case <-m.watchEnd:
			return
		}
		for {
			ms := 100 // re-check the arming now and then
			m.fdMu.RLock()
			if m.closed.Load() {
				m.fdMu.RUnlock()
				return
			}
			epfd := m.epfd
			m.fdMu.RUnlock()
			// epfd stays open until Close has waited for this goroutine.
			n, _ := unix.EpollWait(epfd, ev[:], ms)
			if m.closed.Load() {
				return
			}
			fn := m.watchFn.Load()
			if fn == nil {
				break // disarmed: wait for the next arming
			}
			if n > 0 || m.lostUnrep.Load() {
				for _, e := range ev[:max(n, 0)] {
					if e.Pad == 0 {
						m.drainEventfd() // a late kick (see spin)
					}
				}
				if m.watchFn.CompareAndSwap(fn, nil) {
					(*fn)()
				}
				break
			}
		}
	}
}

// QueueMark implements btl.Flusher: the count of sends to peer that went
// through its queue so far.
func (m *Module) QueueMark(peer int) uint64 {
	if peer < 0 || peer >= len(m.peers) {
		return 0
	}
	p := &m.peers[peer]
	p.mu.Lock()
	n := p.mu.q.Pushed()
	p.mu.Unlock()
	return n
}

// Flushed implements btl.Flusher: the first mark sends of peer's queue are
// in the socket (or dropped because peer is lost).
func (m *Module) Flushed(peer int, mark uint64) bool {
	if peer < 0 || peer >= len(m.peers) {
		return true
	}
	p := &m.peers[peer]
	p.mu.Lock()
	done := p.mu.q.Popped() >= mark
	p.mu.Unlock()
	return done || p.lost.Load()
}

var _ btl.Flusher = (*Module)(nil)
