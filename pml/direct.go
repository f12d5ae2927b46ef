package pml

import (
	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/memcpy"
	"github.com/gorun-mpi/gorun/internal/spinlock"
	"github.com/gorun-mpi/gorun/pml/match"
)

// The direct receive. A blocking Recv from one peer whose BTL can hand it
// that peer's next message (btl.DirectTaker: sm's fast box) first looks
// for the message there itself, up to cfg.DirectPolls times, and takes it
// without posting a receive when the message is a plain eager MATCH for
// this receive's communicator and tag, fits its buffer, is the peer's next
// in turn (match.Engine.TakeDirect), and no receive posted before accepts
// it. Posting, matching on arrival, completing the request and waking its
// waiter are all skipped: osu lat near 0-2 KiB 17-37% faster (0 B 0.293
// -> 0.205 us, where Open MPI takes 0.240), far 7-13% (tagged rounds,
// docs/bench/2026-11-30/noon).
//
// Anything else (another communicator's or tag's message first, a
// rendezvous, a synchronous send, a longer message, FIFO traffic or
// queued work in the BTL, a module busy in another goroutine's poll, or no
// message after the looks) ends the direct part, and the receive is
// posted and waited for as before; nothing was consumed. Every
// passEvery-th direct receive (counted with pollFor's polls) first makes
// the full progress pass, so the rank's other traffic moves as in any
// wait. Not while the rank has sends whose receiver may split their read
// (bigSends: the wait must say it polls, waitLook).

// recvDirect is the direct part of Recv for r (a fresh request, not
// posted) from world rank src; ok when it received the message, whose
// Status it returns. Otherwise r is left for startRecv.
func (c *Comm) recvDirect(r *Request, buf []byte, src, tag int) (Status, bool) {
	p := c.p
	dt := p.peers[src].direct
	r.p, r.buf, r.grp = p, buf, c.grp
	r.recv.Ctx, r.recv.Tag = c.ctx, tag
	if p.closed.Load() || !p.progMu.TryLock() {
		return Status{}, false
	}
	// The full pass is counted per direct receive, made as it starts
	// (before the message is likely there: made between looks, a pass
	// that found it would have queued it unexpected, and the receive its
	// slow path). It releases progMu; what it delivered may be this
	// receive's message, now unexpected, which startRecv finds.
	if p.sincePass++; p.sincePass >= passEvery {
		if p.pass() > 0 || p.closed.Load() || !p.progMu.TryLock() {
			return Status{}, false
		}
	}
	for i := 1; ; i++ {
		k := dt.TakeFrom(src, btl.TagPMLMatch, r)
		p.progMu.Unlock()
		if k > 0 {
			p.wait.noteEvents()
			r.early = true // completed inside the call that started it (putReq keeps it)
			return r.status, true
		}
		if k < 0 || i >= p.cfg.DirectPolls {
			return Status{}, false
		}
		spinlock.Pause()
		if p.closed.Load() || !p.progMu.TryLock() {
			return Status{}, false
		}
	}
}

// Take implements btl.Taker for recvDirect: it takes data, src's next
// message, when the direct receive may (see above), under mu for the
// matching engine and the credit, and copies it into r's buffer (the BTL
// holds the message's memory until Take returns).
func (r *Request) Take(src int, data []byte) bool {
	var h matchHdr
	if !h.plainMatch(data) {
		return false // synchronous, or malformed: the usual path logs it
	}
	payload := data[matchHdrLen:]
	if h.ctx != r.recv.Ctx || len(payload) > len(r.buf) || r.recv.Tag != match.AnyTag && int(h.tag) != r.recv.Tag {
		return false
	}
	p := r.p
	p.mu.Lock()
	if !p.eng.TakeDirect(h.ctx, src, int(h.tag), h.seq) {
		p.mu.Unlock()
		return false
	}
	p.returnCreditLocked(src, len(payload))
	p.mu.Unlock()
	if len(payload) <= memcpy.TinyMax {
		memcpy.Tiny(r.buf, payload)
	} else {
		memcpy.Copy(r.buf, payload)
	}
	r.status = Status{Source: r.source(src), Tag: int(h.tag), Count: len(payload)}
	return true
}

var _ btl.Taker = (*Request)(nil)
