package tcp

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/btl"
)

// sendOp is a send the socket has not taken whole yet.
type sendOp struct {
	head    [frameHdr + btl.MaxHeader]byte
	headLen int
	off     int    // bytes of head+payload already written
	payload []byte // the caller's (c != nil) or our own copy
	c       btl.Completion
}

func (op *sendOp) total() int { return op.headLen + len(op.payload) }

// sendv writes a then b with one sendmsg (MSG_NOSIGNAL, MSG_DONTWAIT). It
// returns the bytes written; EAGAIN is 0 bytes and no error.
func sendv(fd int, a, b []byte) (int, error) {
	var iov [2]unix.Iovec
	n := 0
	if len(a) > 0 {
		iov[n].Base = &a[0]
		iov[n].SetLen(len(a))
		n++
	}
	if len(b) > 0 {
		iov[n].Base = &b[0]
		iov[n].SetLen(len(b))
		n++
	}
	if n == 0 {
		return 0, nil
	}
	var msg unix.Msghdr
	msg.Iov = &iov[0]
	msg.SetIovlen(n)
	for {
		r, _, e := unix.RawSyscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT)
		switch e {
		case 0:
			return int(r), nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		}
		return 0, e
	}
}

// Send writes the fragment at once when the peer's queue is empty and the
// socket takes it; what it does not take joins the queue (see the package
// doc for copied).
func (m *Module) Send(peer int, tag btl.Tag, hdr, payload []byte, c btl.Completion) (bool, error) {
	switch {
	case tag >= btl.NumTags:
		return false, fmt.Errorf("btl/tcp: tag %d; allowed below %d", tag, btl.NumTags)
	case len(hdr) > btl.MaxHeader:
		return false, fmt.Errorf("btl/tcp: header of %d bytes; allowed at most %d", len(hdr), btl.MaxHeader)
	case len(payload) > m.cfg.MaxSendSize:
		return false, fmt.Errorf("btl/tcp: payload of %d bytes; allowed at most btl_tcp_max_send_size=%d", len(payload), m.cfg.MaxSendSize)
	case !m.Reachable(peer):
		return false, fmt.Errorf("btl/tcp: rank %d is not reachable through tcp from rank %d", peer, m.rank)
	}
	p := &m.peers[peer]
	m.lastWork.Store(m.since())
	headLen := frameHdr + len(hdr)
	p.mu.Lock()
	if m.closed.Load() {
		p.mu.Unlock()
		return false, errClosed
	}
	if p.lost.Load() || p.mu.fd < 0 {
		p.mu.Unlock()
		return false, errPeerLost(peer, nil)
	}
	var op *sendOp
	if p.mu.q.Len() == 0 {
		var head [frameHdr + btl.MaxHeader]byte
		putFrameHdr(head[:], tag, len(hdr), len(payload))
		copy(head[frameHdr:], hdr)
		w, err := sendv(p.mu.fd, head[:headLen], payload)
		if err != nil {
			p.mu.Unlock()
			m.markLost(p, err)
			return false, errPeerLost(peer, err)
		}
		if w == headLen+len(payload) {
			p.mu.Unlock()
			return true, nil
		}
		op = p.mu.q.Push()
		op.head = head
		op.off = w
	} else {
		op = p.mu.q.Push()
		putFrameHdr(op.head[:], tag, len(hdr), len(payload))
		copy(op.head[frameHdr:], hdr)
		op.off = 0
	}
	op.headLen = headLen
	copied := true
	if rest := len(payload) - max(0, op.off-headLen); rest <= copyLimit || c == nil {
		// Keep only the unwritten part, in our own copy.
		skip := max(0, op.off-headLen)
		own := make([]byte, len(payload))
		copy(own[skip:], payload[skip:])
		op.payload, op.c = own, nil
	} else {
		op.payload, op.c = payload, c
		copied = false
	}
	if p.npend.Add(1) == 1 {
		m.pendPeers.Add(1)
		m.watchWritable(p, true)
	}
	p.mu.Unlock()
	return copied, nil
}

// flush writes p's queue in order until the socket stops taking bytes. It
// returns the number of sends completed. Completions are called after the
// lock is released (they may Send).
func (m *Module) flush(p *peer, done []btl.Completion) (int, []btl.Completion) {
	n := 0
	p.mu.Lock()
	for p.mu.q.Len() > 0 && p.mu.fd >= 0 {
		op := p.mu.q.Front()
		var a, b []byte
		if op.off < op.headLen {
			a, b = op.head[op.off:op.headLen], op.payload
		} else {
			b = op.payload[op.off-op.headLen:]
		}
		w, err := sendv(p.mu.fd, a, b)
		if err != nil {
			p.mu.Unlock()
			m.markLost(p, err)
			return n, done
		}
		op.off += w
		if op.off < op.total() {
			break
		}
		if op.c != nil {
			done = append(done, op.c)
		}
		p.mu.q.Pop()
		n++
		if p.npend.Add(-1) == 0 {
			m.pendPeers.Add(-1)
			m.watchWritable(p, false)
		}
	}
	p.mu.Unlock()
	return n, done
}

// watchWritable adds (or removes) EPOLLOUT to p's socket in the epoll set,
// so that Sleep and the watcher wake when a socket with queued sends can
// take more. Called with p.mu held, when the queue becomes non-empty (or
// empty).
func (m *Module) watchWritable(p *peer, on bool) {
	if p.mu.fd < 0 {
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(p.mu.fd), Pad: int32(p.rank + 1)}
	if on {
		ev.Events |= unix.EPOLLOUT
	}
	unix.EpollCtl(m.epfd, unix.EPOLL_CTL_MOD, p.mu.fd, &ev)
}

// markLost records that p's connection failed; Progress reports it.
func (m *Module) markLost(p *peer, why error) {
	if m.closed.Load() || p.lost.Swap(true) {
		return
	}
	m.log.Debug("tcp peer lost", "rank", m.rank, "peer", p.rank, "error", why)
	m.lostUnrep.Store(true)
	m.Wake()
}
