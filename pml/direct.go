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
// A RNDV is taken the same way when it fits the buffer (takeRndv): the
// receive then copies its first chunk, makes the single-copy read of the
// rest itself, outside the BTL's poll, and sends the FIN, or for a
// carried one the ACK (runRndv's work, finishDirect), and completes its
// request with plain stores (endRecv); only a read that the poll would
// split with the sender (pml_ob1_rget_split) is left to the poll. A
// failed read falls back to the pipeline, whose FRAGs the receive waits
// for as a posted one does. osu lat 16 KiB 4-7% faster, 8 KiB 1-5%
// (docs/bench/2026-11-30/evening).
//
// Anything else (another communicator's or tag's message first, an eager
// synchronous send, a longer message, FIFO traffic or queued work in the
// BTL, a module busy in another goroutine's poll, or no message after the
// looks) ends the direct part, and the receive is posted and waited for
// as before; nothing was consumed. Every passEvery-th direct receive
// (counted with pollFor's polls) first makes the full progress pass, so
// the rank's other traffic moves as in any wait. Not while the rank has
// sends whose receiver may split their read (bigSends: the wait must say
// it polls, waitLook).

// directTags are the messages a direct receive takes: an eager MATCH, and
// a RNDV (takeRndv), whose read, or whose carried payload's copy, it then
// makes itself.
var directTags = btl.TagsOf(btl.TagPMLMatch, btl.TagPMLRndv)

// recvDirect is the direct part of Recv for r (a fresh request, not
// posted) from world rank src; ok when it received the message, whose
// Status and error it returns. Otherwise r is left for startRecv.
func (c *Comm) recvDirect(r *Request, buf []byte, src, tag int) (Status, error, bool) {
	p := c.p
	dt := p.peers[src].direct
	r.p, r.buf, r.grp = p, buf, c.grp
	r.recv.Ctx, r.recv.Tag = c.ctx, tag
	if p.closed.Load() || !p.progMu.TryLock() {
		return Status{}, nil, false
	}
	// The full pass is counted per direct receive, made as it starts
	// (before the message is likely there: made between looks, a pass
	// that found it would have queued it unexpected, and the receive its
	// slow path). It releases progMu; what it delivered may be this
	// receive's message, now unexpected, which startRecv finds.
	if p.sincePass++; p.sincePass >= passEvery {
		if p.pass() > 0 || p.closed.Load() || !p.progMu.TryLock() {
			return Status{}, nil, false
		}
	}
	for i := 1; ; i++ {
		k := dt.TakeFrom(src, directTags, r)
		if k > 0 {
			j := p.taken
			if j.r != nil {
				p.taken = rndvJob{}
			}
			p.progMu.Unlock()
			p.wait.noteEvents()
			if j.r != nil {
				return c.finishDirect(&j)
			}
			r.early = true // completed inside the call that started it (putReq keeps it)
			return r.status, nil, true
		}
		p.progMu.Unlock()
		if k < 0 || i >= p.cfg.DirectPolls {
			return Status{}, nil, false
		}
		spinlock.Pause()
		if p.closed.Load() || !p.progMu.TryLock() {
			return Status{}, nil, false
		}
	}
}

// finishDirect carries out the rendezvous j that a direct receive took:
// the read of its rest (or, carried whole, the ACK), as runRndv does for a
// posted receive, and then, when it asked for the sender's pipeline
// instead (a failed read), the wait for its FRAGs.
func (c *Comm) finishDirect(j *rndvJob) (Status, error, bool) {
	p, r := c.p, j.r
	p.readRest(j)
	if !r.Done() {
		if err := p.waitLook(nil, r, false); err != nil {
			return Status{}, err, true
		}
	}
	return r.status, r.err, true
}

// Take implements btl.Taker for recvDirect: it takes data, src's next
// message, when the direct receive may (see above), under mu for the
// matching engine and the credit, and copies it into r's buffer (the BTL
// holds the message's memory until Take returns). A RNDV goes to takeRndv.
func (r *Request) Take(src int, tag btl.Tag, data []byte) bool {
	if tag == btl.TagPMLRndv {
		return r.takeRndv(src, data)
	}
	var h matchHdr
	if !h.plainMatch(data) {
		return false // synchronous, or malformed: the usual path logs it
	}
	payload := data[matchHdrLen:]
	if !r.accepts(&h) || len(payload) > len(r.buf) {
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
	if len(payload) <= memcpy.SmallMax {
		memcpy.Small(r.buf, payload)
	} else {
		memcpy.Copy(r.buf, payload)
	}
	r.status = Status{Source: r.source(src), Tag: int(h.tag), Count: len(payload)}
	return true
}

// takeRndv is Take for a RNDV: matched as the engine would match it
// (deliverLocked: its credit, the plan of its read), its first chunk
// copied out, and the job left in p.taken for recvDirect, which makes the
// read outside the BTL's poll. It declines a message longer than the
// buffer (the usual path reports the truncation) and one whose read the
// poll would share with the sender (splitRead), which only a poll makes.
func (r *Request) takeRndv(src int, data []byte) bool {
	var h matchHdr
	chunk, err := decodeRndv(data, &h)
	if err != nil || !r.accepts(&h) || h.size > uint64(len(r.buf)) || uint64(len(chunk)) > h.size {
		return false
	}
	p := r.p
	if p.peers[src].lim.splitsRead(int(h.size)-len(chunk), h.flags&flagStream != 0) {
		return false
	}
	p.mu.Lock()
	if !p.eng.TakeDirect(h.ctx, src, int(h.tag), h.seq) {
		p.mu.Unlock()
		return false
	}
	r.kind, r.userTag, r.recv.Src = kindRecv, r.recv.Tag, src
	j := p.deliverLocked(r, src, &h, true, chunk)
	p.mu.Unlock()
	r.received = memcpy.Copy(r.buf[:j.plan.copy], j.chunk)
	j.chunk = nil // the BTL's, valid only during this call
	j.direct = true
	p.taken = j
	return true
}

// accepts says whether a message with header h is for r, a direct
// receive: r's communicator, and its tag or AnyTag.
func (r *Request) accepts(h *matchHdr) bool {
	return h.ctx == r.recv.Ctx && (r.recv.Tag == match.AnyTag || int(h.tag) == r.recv.Tag)
}

var _ btl.Taker = (*Request)(nil)
