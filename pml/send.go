package pml

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/relaxed"
)

// startSend starts the send r of buf to world rank dest with (ctx, tag),
// planned by Comm.planSend (arguments checked, credit taken): a send that
// waits for an answer naming it, ACK or FIN (rendezvous, single-copy read,
// or a synchronous send of any size).
func (c *Comm) startSend(r *Request, buf []byte, dest, tag int, sync bool, plan sendPlan) error {
	p := c.p
	pe := &p.peers[dest]
	r.p, r.kind, r.buf, r.peer, r.sync = p, kindSend, buf, dest, sync
	r.carried, r.split, r.st0 = plan.carried, plan.split, plan.t0
	p.activeSends.Add(1)
	h := matchHdr{ctx: c.ctx, tag: int32(tag)}
	hb := &r.hdr
	r.pending.Store(3) // this call + the first copy + the answer
	r.chunk = plan.chunk
	if sync {
		h.flags |= flagSync
	}
	if plan.proto == protoRget && pe.lim.splitMin > 0 && (len(buf) >= pe.lim.splitMin || plan.stream && len(buf) >= pe.lim.splitStream) && len(p.wait.runners) > 0 { // splitMin is 0 when yielding
		// Polling from here on (a receiver may split the read): a
		// blocking Send's wait follows, an Isend says it has returned
		// (StartIsend), and the receiver may look before either.
		r.big = true
		p.bigSends.Add(1)
		p.setRunning(true)
	}
	if plan.proto != protoEager {
		h.size = uint64(len(buf))
		if plan.proto == protoRget || plan.offer {
			h.flags |= flagRget
			h.addr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
			if pe.lim.rget {
				// Quiet: no other send of this rank is in flight (the
				// count includes this one), so no peer reads its memory.
				p.huge.Offer(buf, p.activeSends.Load() <= 1)
			}
		}
		if plan.stream {
			h.flags |= flagStream
		}
	}
	// Numbered and registered for its answer in one section, and sent in
	// it too when the BTL can take the RNDV at once (sendTable).
	r.tracked = true
	pe.sendMu.Lock()
	h.seq = c.seqLocked(dest)
	pe.sends.add(r)
	h.sreq = r.id
	copied := false
	if ls := pe.locked; ls != nil && plan.proto != protoEager {
		copied = ls.TrySendBytesLocked(dest, btl.TagPMLRndv, h.encodeRndv(hb[:]), buf[:plan.chunk], plan.carried)
	}
	pe.sendMu.Unlock()
	var err error
	switch {
	case copied:
	case plan.proto == protoEager: // Ssend of an eager-sized message
		copied, err = pe.m.Send(dest, btl.TagPMLMatch, h.encodeMatch(hb[:]), buf, r)
	default:
		copied, err = pe.m.Send(dest, btl.TagPMLRndv, h.encodeRndv(hb[:]), buf[:plan.chunk], r)
	}
	return r.afterSend(copied, err)
}

// untrack removes r, a send, from its peer's table if it is still there.
func (p *PML) untrack(r *Request) { p.sendOf(r.peer, r.id, true) }

// afterSend accounts for the first btl.Send of r and drops the starter's token.
func (r *Request) afterSend(copied bool, err error) error {
	if err != nil {
		if r.tracked {
			r.p.untrack(r)
		}
		r.pending.Store(0)
		big, p := r.big, r.p
		if big {
			p.setRunning(false) // no wait follows a failed start
		}
		if r.finish(Status{}, err) && big {
			p.bigSends.Add(-1)
		}
		return err
	}
	if copied {
		r.pending.Add(-1)
	}
	r.p.sentTo(r.peer)
	r.release()
	return nil
}

// onAck handles the receiver's answer to a RNDV or a sync MATCH.
func (p *PML) onAck(src int, data []byte) {
	sreq, rreq, from, want, addr, err := decodeAck(data)
	if err == nil && addr != 0 {
		p.onSplitAck(src, sreq, rreq, from, want, uintptr(addr))
		return
	}
	r := p.takeSend(src, sreq, "ACK", err)
	if r == nil {
		return
	}
	want = min(want, uint64(len(r.buf)))
	if from < want && !p.sendFrags(r, rreq, int(from), int(want)) {
		return // failed: its owner may have recycled it already
	}
	r.release() // the answer's token
}

// onSplitAck handles a split ACK (recv.go, splitRead): the receiver reads
// the first part of our buffer and asks us to write [from, want) into its
// buffer at addr meanwhile, so that both ranks' cores copy. The send stays
// in its peer's table (sendTable) for the FIN the receiver sends once its
// read is done (or the plain ACK that asks for its part as FRAGs if the
// read failed); it completes on that. A write that fails sends the part as
// FRAGs instead.
func (p *PML) onSplitAck(src int, sreq, rreq, from, want uint64, addr uintptr) {
	p.endDelivery() // a BTL callback that may copy long (WriteTo): not under mu
	r := p.sendOf(src, sreq, false)
	if r == nil || want > uint64(len(r.buf)) {
		p.log.Error("split ACK for an unknown send request or beyond its buffer", "from", src, "sreq", sreq, "bytes", want)
		return
	}
	// r stays valid: only BTL callbacks (this one holds progMu) or a
	// loss of src, handled under progMu too, end a send in the table.
	r.pending.Add(1) // the FIN still to come
	r.wrote = true   // (read at r's completion, which the FIN's callback makes, under progMu as this one)
	pe := &p.peers[src]
	w, ok := pe.m.(btl.Writer)
	if ok && w.WriteTo(src, addr, r.buf[from:want]) == nil {
		if _, err := pe.m.Send(src, btl.TagPMLFin, encodeWrote(r.hdr[:], rreq, from, want-from), nil, nil); err != nil {
			p.finishSend(r, err)
			return
		}
	} else if !p.sendFrags(r, rreq, int(from), int(want)) {
		return // failed: its owner may have recycled it already
	}
	r.release() // the split ACK's token
}

// sendFrags streams buf[from:to] of r as FRAGs of the peer's max send
// size. It reports false when a send failed and so finished r, which its
// caller must then leave alone.
func (p *PML) sendFrags(r *Request, rreq uint64, from, to int) bool {
	pe := &p.peers[r.peer]
	hb := &r.hdr // free again: the BTL copies a header before Send returns
	for off := from; off < to; {
		n := min(to-off, pe.lim.maxSend)
		r.pending.Add(1)
		copied, err := pe.m.Send(r.peer, btl.TagPMLFrag, encodeFrag(hb[:], rreq, uint64(off)), r.buf[off:off+n], r)
		if err != nil {
			p.finishSend(r, err)
			return false
		}
		if copied {
			r.pending.Add(-1)
		}
		off += n
	}
	return true
}

// takeSend removes and returns the send request an answer from src names,
// or logs why there is none (a malformed header, an unknown request).
func (p *PML) takeSend(src int, sreq uint64, what string, decodeErr error) *Request {
	p.endDelivery() // a BTL callback: the poll may hold mu (recv.go)
	if decodeErr != nil {
		p.log.Error("dropping a malformed fragment", "from", src, "error", decodeErr)
		return nil
	}
	r := p.sendOf(src, sreq, true)
	if r == nil {
		p.log.Error(what+" for an unknown send request", "from", src, "sreq", sreq)
	}
	return r
}

// sendOf returns our send sreq to world rank src from src's sendTable,
// removed from it with take, or nil when src has no such send.
func (p *PML) sendOf(src int, sreq uint64, take bool) *Request {
	if src < 0 || src >= len(p.peers) {
		return nil
	}
	pe := &p.peers[src]
	pe.sendMu.Lock()
	defer pe.sendMu.Unlock()
	if take {
		return pe.sends.take(sreq)
	}
	return pe.sends.get(sreq)
}

// onFin: the receiver has read the payload itself (single copy).
func (p *PML) onFin(src int, data []byte) {
	if len(data) == wroteHdrLen {
		p.onWrote(src, data)
		return
	}
	sreq, err := decodeFin(data)
	if r := p.takeSend(src, sreq, "FIN", err); r != nil {
		r.release()
	}
}

// streamingTo notes a send on c to world rank dest (pe) of a size in the
// stream band (limits.streamable), in the band whose read is split only
// in a stream (limits.splitsInStream), or in the pipeline band
// (limits.pipeable), and reports whether it is part of a one-way stream,
// whose rendezvous carries the whole payload (planSend), or, larger, is
// flagged so that its read may be split (flagStream) or goes by the
// pipeline when timeStream chose that:
// it continues a stream (the previous such send to pe came with no
// progress event since: no message delivered, no send completed by an
// answer, as in a window of Isends) that is one-way: as it began, no
// receive was posted on c that a message from dest could take, and the
// stream before it got fewer than a quarter as many messages back from
// dest on c.
//
// Such a message is copied twice: the sender copies it into a fragment
// while the receiver copies the one before out, both cores busy, where a
// single-copy read leaves the sender idle and makes the receiver copy
// every message itself, and pays a system call for each (osu bw and mr,
// five runs of 6-10 rounds: 8 KiB -7 to +27%, four of five up; 16 KiB -23
// to +18%; sent eagerly, without the ACK, +11 to +54%, but a message above
// the eager limit must not complete before its receive is matched: see
// CONTRACT.md). A ping-pong's message,
// which an event (the reply) precedes and whose receive waits for it,
// keeps the read, which is faster there; and so does a stream met by one
// the other way (osu bibw), where both cores copy anyway and two copies
// per message cost more than one (bibw 16 and 32 KiB -17 and -32% with
// two copies).
//
// The first send of a stream after one of several sends reads the
// engine's count of messages from dest under PML.mu; the others, a
// ping-pong's among them, read only atomics. (After a lone send the count
// is not read, so the next one covers more than one stream: it can only
// find more messages back, and keep the read.)
//
// With Config.StreamAdaptive, the first send of a stream also ends the
// timing of the one before it and picks how this one's messages travel
// (timeStream).
func (c *Comm) streamingTo(pe *peer, dest, n int) bool {
	p := c.p
	ev := p.wait.events.Load() + 1
	if pe.streamEv.Load() == ev {
		relaxed.Store32(&pe.streamSent, pe.streamSent.Load()+1)
		return pe.oneWay.Load() != 0
	}
	relaxed.Store64(&pe.streamEv, ev)
	var oneWay uint32
	if sent := pe.streamSent.Load(); sent > 1 {
		p.mu.Lock()
		back, expecting := p.eng.Inbound(c.ctx, dest)
		p.mu.Unlock()
		if !expecting && (back-pe.streamBack.Load())*4 < sent {
			oneWay = 1
		}
		relaxed.Store32(&pe.streamBack, back)
		if p.cfg.StreamAdaptive {
			p.timeStream(pe, n, sent, oneWay != 0)
		}
	} else if pe.streamT0.Load() != 0 {
		// The timed stream was a lone send: what follows it is not a
		// window's time (TestStreamAdaptiveLoneSends).
		pe.untimeStream()
	}
	relaxed.Store32(&pe.streamSent, 1)
	relaxed.Store32(&pe.oneWay, oneWay)
	return false
}

// timeStream (Config.StreamAdaptive) runs at the first send, of n bytes,
// after a stream of sent sends to pe. When that stream was a timed one
// (one-way, its messages in the stream band), its time from its first send
// to this one, over sent times its first message's size, is a measurement
// of the way its messages went (pathEst, by size class); a window's
// messages overlap, so only the whole window's time compares, and it
// includes whatever the program did between windows, which both ways pay
// alike. The first window that takes each way is not counted: in osu bw
// at 8 and 16 KiB it took 3.5-4x as long as the later ones (0.76-0.78
// ns/B against 0.19-0.22 carried), and would have kept the other way for
// pml_ob1_rget_explore. Then, when the new stream is one-way and n in the
// stream band (and the BTL can read: the other way is the read), it picks
// the new stream's way: carried (the pipeline; tried first) or read,
// whichever was faster in the last few windows of that size class that
// took it, the slower one tried again with one window once its timing is
// older than pml_ob1_rget_explore (or exploreWindows of that way's last
// window, pathEst.pick). In the pipeline band (limits.pipeable: larger
// messages, which a stream reads) the same choice is between the read,
// tried first, and the two-copy pipeline (the first chunk, then FRAGs
// after the receiver's ACK). The clock is read only around one-way
// streams.
func (p *PML) timeStream(pe *peer, n int, sent uint32, oneWay bool) {
	t0 := int64(pe.streamT0.Load())
	pipeable := pe.lim.pipeable(n)
	timed := oneWay && (pe.lim.streamable(n) && pe.lim.inBand(n) || pipeable)
	if t0 == 0 && !timed {
		return
	}
	now := p.streams.now()
	if t0 != 0 {
		n0 := int(pe.streamN0.Load())
		path := pathPipe
		if pe.streamRead.Load() != 0 {
			path = pathRead
		}
		p.streams.noteAt(path, n0, int(sent)*n0, time.Duration(now-t0), now)
	}
	if !timed {
		pe.untimeStream()
		return
	}
	// The stream band tries carrying first, the pipeline band the read
	// it would take untimed.
	first := pathPipe
	if pipeable {
		first = pathRead
	}
	var read uint32
	if p.streams.chooseAt(n, now, first) {
		read = 1
	}
	relaxed.Store32(&pe.streamRead, read)
	relaxed.Store64(&pe.streamN0, uint64(n))
	relaxed.Store64(&pe.streamT0, uint64(max(now, 1)))
}

// untimeStream ends the timing of pe's current stream without a
// measurement; its messages are carried again (streamRead is 0 whenever
// streamT0 is).
func (pe *peer) untimeStream() {
	relaxed.Store64(&pe.streamT0, 0)
	relaxed.Store32(&pe.streamRead, 0)
}

// takeCreditLocked takes n bytes of eager credit towards pe, with
// pe.sendMu held; false when there is not enough (then nothing is taken,
// and the caller warns with creditShort once it has released sendMu).
func (p *PML) takeCreditLocked(pe *peer, n int) bool {
	if p.creditLimit == 0 || n == 0 {
		return true
	}
	if pe.creditTaken+int64(n)-pe.creditBack.Load() > p.creditLimit {
		return false
	}
	pe.creditTaken += int64(n)
	return true
}

// takeCredit is takeCreditLocked for a caller without pe.sendMu.
func (p *PML) takeCredit(pe *peer, n int) bool {
	if p.creditLimit == 0 || n == 0 {
		return true
	}
	pe.sendMu.Lock()
	ok := p.takeCreditLocked(pe, n)
	pe.sendMu.Unlock()
	if !ok {
		p.creditShort(pe)
	}
	return ok
}

// creditShort warns, once, that the credit towards pe ran out.
func (p *PML) creditShort(pe *peer) {
	if p.creditWarned.CompareAndSwap(false, true) {
		dst := -1
		for i := range p.peers {
			if &p.peers[i] == pe {
				dst = i
			}
		}
		p.log.Warn(fmt.Sprintf("rank %d: eager credit towards rank %d used up: it holds %d bytes of our eager messages it has not matched yet "+
			"(its share of pml_ob1_unexpected_limit=%d); from now on a send to a rank without credit waits for that rank to match it (rendezvous), "+
			"even below the eager limit, and a program that relies on eager sends completing without the receiver can deadlock; "+
			"raise pml_ob1_unexpected_limit (0: no limit) if it must (warned once)",
			p.cfg.Rank, dst, p.creditLimit, p.cfg.UnexpectedLimit))
	}
}

// nextSeq numbers a message to world rank dest, whose peer is pe.
func (c *Comm) nextSeq(pe *peer, dest int) uint32 {
	pe.sendMu.Lock()
	s := c.seqLocked(dest)
	pe.sendMu.Unlock()
	return s
}

// seqLocked takes the next sequence number towards world rank dest, with
// that peer's sendMu held.
func (c *Comm) seqLocked(dest int) uint32 {
	s := c.sendSeq[dest]
	c.sendSeq[dest] = s + 1
	return s
}

// eagerNow starts an eager send (not synchronous) of buf to world rank
// dest, whose peer is pe: under the peer's send lock it takes the credit
// and the next sequence number and, with a btl.LockedSender, sends the
// message when the BTL can take it at once (sent): one locked
// instruction, the lock's, where the credit, the number and the BTL's
// lock were three. ok is false when the credit is short: then nothing is
// numbered or sent, and the caller plans the send again without credit.
// Not sent (ok), the message is numbered and credited: the caller sends
// it another way (TrySend, Send). With take (and ok) it also returns a
// zero Handle for the send, from the peer's slab (see handleSlab).
func (c *Comm) eagerNow(pe *peer, dest, tag int, buf []byte, take bool) (h *Handle, seq uint32, sent, ok bool) {
	p := c.p
	pe.sendMu.Lock()
	if !p.takeCreditLocked(pe, len(buf)) {
		pe.sendMu.Unlock()
		p.creditShort(pe)
		return nil, 0, false, false
	}
	seq = c.seqLocked(dest)
	if take {
		h = pe.hslab.take()
	}
	if ls := pe.locked; ls != nil {
		mh := matchHdr{ctx: c.ctx, tag: int32(tag), seq: seq}
		sent = ls.TrySendLocked(dest, btl.TagPMLMatch, mh.matchWords(), buf)
	}
	pe.sendMu.Unlock()
	return h, seq, sent, true
}

// onCtl handles flow-control messages.
func (p *PML) onCtl(src int, data []byte) {
	kind, arg, err := decodeCtl(data)
	if err != nil || src < 0 || src >= len(p.peers) {
		p.log.Error("dropping a malformed CTL fragment", "from", src, "error", err)
		return
	}
	switch kind {
	case ctlCredit:
		p.peers[src].creditBack.Add(int64(arg))
	default:
		p.log.Error("unknown CTL kind", "from", src, "kind", kind)
	}
}

// returnCreditLocked notes that n eager bytes from src were delivered and
// gives them back as credit once a quarter of the limit is owed. Called
// with p.mu held.
func (p *PML) returnCreditLocked(src, n int) {
	pe := &p.peers[src]
	if pe.owed += int64(n); pe.owed >= p.creditQuarter {
		p.sendCreditLocked(src, pe)
	}
}

// sendCreditLocked returns what pe owes us as credit (returnCreditLocked's
// rare part, apart so that the common one inlines).
func (p *PML) sendCreditLocked(src int, pe *peer) {
	if _, err := pe.m.Send(src, btl.TagPMLCtl, encodeCtl(p.hdrBuf[:], ctlCredit, uint32(pe.owed)), nil, nil); err != nil {
		p.log.Debug("CTL send failed", "to", src, "error", err)
		return
	}
	pe.owed = 0
}
