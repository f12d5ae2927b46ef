package pml

import (
	"fmt"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/internal/memcpy"
	"github.com/gorun-mpi/gorun/pml/match"
)

// unexp is an arrived message that is parked or waits for its receive.
type unexp struct {
	rndv    bool
	h       matchHdr
	payload []byte // eager payload, or the RNDV first chunk (a private copy)
}

// onMatch handles an eager MATCH fragment.
func (p *PML) onMatch(src int, data []byte) {
	var h matchHdr
	payload, err := decodeMatch(data, &h)
	if err != nil {
		p.log.Error("dropping a malformed fragment", "from", src, "error", err)
		return
	}
	p.arrive(src, &h, false, payload)
}

// onRndv handles a RNDV fragment.
func (p *PML) onRndv(src int, data []byte) {
	var h matchHdr
	chunk, err := decodeRndv(data, &h)
	if err != nil {
		p.log.Error("dropping a malformed fragment", "from", src, "error", err)
		return
	}
	p.arrive(src, &h, true, chunk)
}

// arrive matches one arrived message and delivers every pair that follows.
func (p *PML) arrive(src int, h *matchHdr, rndv bool, payload []byte) {
	if src < 0 || src >= len(p.peers) {
		p.log.Error("fragment from an unknown rank", "from", src)
		return
	}
	p.mu.Lock()
	m := p.newMsgLocked()
	m.Envelope = match.Envelope{Ctx: h.ctx, Src: src, Tag: int(h.tag), Seq: h.seq}
	pairs := p.eng.Arrive(m, p.pairs[:0])
	kept := true
	for _, pr := range pairs {
		if pr.Msg == m {
			kept = false
		}
	}
	if kept {
		// Parked or unexpected: it outlives this callback. An eager
		// payload is copied; a rendezvous first chunk is dropped (its
		// credit returned): the receive asks for the whole message when
		// it matches, so unexpected rendezvous messages cost a header.
		u := p.newUnexpLocked(rndv, h)
		if rndv {
			p.returnCreditLocked(src, len(payload))
		} else {
			u.payload = append(u.payload, payload...)
			p.unexpBytes += int64(len(payload))
		}
		m.Data = u
	}
	for i, pr := range pairs {
		r := pr.Recv.Data.(*Request)
		if pr.Msg == m {
			p.deliverLocked(r, src, h, rndv, payload)
		} else {
			p.deliverUnexpLocked(r, pr.Msg)
		}
		p.freeMsgLocked(pr.Msg)
		pairs[i] = match.Pair{}
	}
	p.pairs = pairs[:0]
	p.mu.Unlock()
}

// newMsgLocked takes a Msg from the free list (p.mu held).
func (p *PML) newMsgLocked() *match.Msg {
	if n := len(p.msgFree); n > 0 {
		m := p.msgFree[n-1]
		p.msgFree = p.msgFree[:n-1]
		return m
	}
	return new(match.Msg)
}

// maxPooledPayload bounds the buffer an unexpected record keeps when it is
// recycled: eager payloads fit, a rare large one goes to the GC.
const maxPooledPayload = 16 << 10

// newUnexpLocked takes an unexpected record from the free list, its
// payload emptied but its buffer kept (p.mu held). Recycling both keeps the
// unexpected-eager path, the common case whenever the sender is ahead, free
// of allocations.
func (p *PML) newUnexpLocked(rndv bool, h *matchHdr) *unexp {
	var u *unexp
	if n := len(p.unexpFree); n > 0 {
		u = p.unexpFree[n-1]
		p.unexpFree = p.unexpFree[:n-1]
	} else {
		u = new(unexp)
	}
	u.rndv, u.h, u.payload = rndv, *h, u.payload[:0]
	return u
}

// freeMsgLocked returns a Msg the engine no longer holds, and its
// unexpected record, which the caller has delivered (p.mu held).
func (p *PML) freeMsgLocked(m *match.Msg) {
	if u, ok := m.Data.(*unexp); ok && cap(u.payload) <= maxPooledPayload && len(p.unexpFree) < 1024 {
		p.unexpFree = append(p.unexpFree, u)
	}
	*m = match.Msg{}
	if len(p.msgFree) < 1024 {
		p.msgFree = append(p.msgFree, m)
	}
}

// deliverUnexpLocked delivers a stored message to r.
func (p *PML) deliverUnexpLocked(r *Request, m *match.Msg) {
	u := m.Data.(*unexp)
	p.unexpBytes -= int64(len(u.payload))
	p.deliverLocked(r, m.Src, &u.h, u.rndv, u.payload)
}

// deliverLocked hands a matched message to its receive r.
func (p *PML) deliverLocked(r *Request, src int, h *matchHdr, rndv bool, payload []byte) {
	r.peer = src
	r.tag = int(h.tag)
	if !rndv {
		p.returnCreditLocked(src, len(payload))
		n := memcpy.Copy(r.buf, payload)
		if h.flags&flagSync != 0 {
			p.sendAckLocked(src, h.sreq, 0, 0, 0)
		}
		r.finish(Status{Source: src, Tag: r.tag, Count: n}, truncErr(len(payload), len(r.buf), src, r.tag))
		return
	}
	p.returnCreditLocked(src, len(payload))
	r.size = int(h.size)
	plan := planRndv(r.size, len(payload), len(r.buf), h.flags&flagRget != 0)
	r.want = plan.want
	r.received = memcpy.Copy(r.buf[:plan.copy], payload)
	if plan.read > 0 {
		err := p.peers[src].m.ReadFrom(src, uintptr(h.addr)+uintptr(r.received), r.buf[r.received:r.want])
		if err == nil {
			if _, err := p.peers[src].m.Send(src, btl.TagPMLFin, encodeFin(p.hdrBuf[:], h.sreq), nil, nil); err != nil {
				r.finish(Status{}, err)
				return
			}
			r.received = r.want
			p.finishRecv(r)
			return
		}
		p.log.Debug("single-copy read failed; using the copy pipeline", "from", src, "error", err)
		plan.frags = true
	}
	if !plan.frags {
		p.sendAckLocked(src, h.sreq, 0, uint64(r.want), uint64(r.want))
		p.finishRecv(r)
		return
	}
	p.nextID++
	r.id = p.nextID
	p.recvs[r.id] = r
	p.sendAckLocked(src, h.sreq, r.id, uint64(r.received), uint64(r.want))
}

// finishRecv completes a receive whose bytes are all in.
func (p *PML) finishRecv(r *Request) {
	r.finish(Status{Source: r.peer, Tag: r.tag, Count: r.want}, truncErr(r.size, len(r.buf), r.peer, r.tag))
}

func (p *PML) sendAckLocked(dest int, sreq, rreq, from, want uint64) {
	pe := &p.peers[dest]
	if _, err := pe.m.Send(dest, btl.TagPMLAck, encodeAck(p.hdrBuf[:], sreq, rreq, from, want), nil, nil); err != nil {
		p.log.Debug("ACK send failed", "to", dest, "error", err)
	}
}

// onFrag copies one rendezvous fragment into its receive.
func (p *PML) onFrag(src int, data []byte) {
	rreq, off, payload, err := decodeFrag(data)
	if err != nil {
		p.log.Error("dropping a malformed fragment", "from", src, "error", err)
		return
	}
	p.mu.Lock()
	r := p.recvs[rreq]
	if r == nil || r.peer != src || !fragFits(off, len(payload), r.want) {
		p.mu.Unlock()
		p.log.Error("FRAG for an unknown receive or out of its bounds", "from", src, "rreq", rreq, "offset", off, "bytes", len(payload))
		return
	}
	r.received += memcpy.Copy(r.buf[off:], payload)
	if r.received < r.want {
		p.mu.Unlock()
		return
	}
	delete(p.recvs, rreq)
	p.mu.Unlock()
	p.finishRecv(r)
}

// truncErr is nil unless a message of size bytes did not fit in n.
func truncErr(size, n, src, tag int) error {
	if size <= n {
		return nil
	}
	return fmt.Errorf("gorun: message of %d bytes from rank %d with tag %d truncated to the receive buffer of %d bytes: %w",
		size, src, tag, n, errs.ErrTruncate)
}
