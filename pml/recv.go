package pml

import (
	"fmt"
	"time"
	"unsafe"

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

// onMatch returns the handler of eager MATCH fragments, the RecvFunc the
// PML registers for btl.TagPMLMatch. It is a closure with the handler's
// body rather than the method value p.onMatch, which the BTL's call would
// reach through a wrapper (16 instructions per message). Not inlined: in
// New, a big function, the closure's own calls would not be inlined
// (plainMatch: 23 instructions more per message).
//
//go:noinline
func (p *PML) onMatch() btl.RecvFunc {
	return func(src int, data []byte) {
		var h matchHdr
		var payload []byte
		if h.plainMatch(data) {
			payload = data[matchHdrLen:]
		} else {
			var err error
			if payload, err = decodeMatch(data, &h); err != nil {
				p.log.Error("dropping a malformed fragment", "from", src, "error", err)
				return
			}
		}
		if uint(src) >= uint(len(p.peers)) {
			p.arrive(src, &h, false, payload) // logs it
			return
		}
		p.lockDelivery()
		// The common case, an eager message in its turn whose receive is
		// posted: matched without a Msg (no record to take, queue and
		// free, no pair list), and without Check, which passes every
		// message in its turn (src is in range, decodeMatch refused a
		// negative tag).
		if rv := p.eng.TakeInTurn(h.ctx, src, int(h.tag), h.seq); rv != nil {
			p.deliverEagerLocked(rv.Data.(*Request), src, &h, payload)
			p.arrived++
			if !p.streaming {
				p.endDelivery()
			}
			return
		}
		p.arriveLocked(src, &h, false, payload)
	}
}

// onRndv handles a RNDV fragment.
func (p *PML) onRndv(src int, data []byte) {
	var h matchHdr
	chunk, err := decodeRndv(data, &h)
	if err != nil {
		p.log.Error("dropping a malformed fragment", "from", src, "error", err)
		return
	}
	if uint(src) >= uint(len(p.peers)) {
		p.arrive(src, &h, true, chunk) // logs it
		return
	}
	p.lockDelivery()
	// As onMatch: a RNDV in its turn whose receive is posted (a
	// ping-pong's) is matched without a Msg, a pair list and a job list.
	if rv := p.eng.TakeInTurn(h.ctx, src, int(h.tag), h.seq); rv != nil {
		j := p.deliverLocked(rv.Data.(*Request), src, &h, true, chunk)
		j.inPoll = true
		p.arrived++
		p.endDelivery()
		p.runRndv(&j)
		return
	}
	p.arriveLocked(src, &h, true, chunk)
}

// Batch delivery. A BTL poll hands over a run of consecutive messages (a
// fast box's records, FIFO slots), one callback each. The first arrive of
// the run takes mu and leaves it held (p.delivering), the next ones find it
// held, and the pass drops it when the BTL's Progress returns
// (progressLocked): one lock round trip per poll instead of one per
// message. Whatever must run without mu ends the batch first: a
// rendezvous job (its copy and read), and every other entry from a poll
// that takes mu (onAck, onFin, onFrag, placeFrag, fragLanded, onPeerLost,
// a failed SendDone): mu is not reentrant, so one that forgets deadlocks
// the poll on its own lock (TestBatchThenOtherCallbacks, TestPlaceEndsBatch).
// Messages are still matched one by one in arrival order; only the lock
// is shared. Other goroutines (Irecv, Cancel, probes) wait for mu at most
// one poll (boxPollMsgs records of each of a few boxes, a FIFO lap).
//
// Only while messages come in runs: a poll that delivers one message (a
// ping-pong) gains nothing from holding mu to its end, and there the
// unlock comes after the BTL's stores that the sender reads (the box's
// read position), waits for them to reach the other core, and cost 8-128
// B ping-pongs ~0.02 us (10%). So a pass keeps mu only when the module's
// last pass that delivered anything delivered more than one message
// (p.streaming, set by progressLocked through endPass); otherwise each
// arrive unlocks as it ends, as before.

// lockDelivery takes mu for a delivery unless this pass holds it already
// (progMu held: only a BTL callback calls it).
func (p *PML) lockDelivery() {
	if !p.delivering {
		p.mu.Lock()
		p.delivering = true
	}
}

// endDelivery releases mu if this pass holds it for deliveries (progMu held).
func (p *PML) endDelivery() {
	if p.delivering {
		p.delivering = false
		p.mu.Unlock()
	}
}

// endPass ends a module's Progress pass: it releases mu and decides
// whether the next pass batches (progMu held).
func (p *PML) endPass() {
	p.endDelivery()
	if len(p.reads) > 0 {
		p.flushReads()
	}
	if p.arrived > 0 { // a pass that delivered nothing (an idle poll, another module's) leaves it
		p.streaming = p.arrived > 1
		p.arrived = 0
	}
}

// arrive matches one arrived message and delivers every pair that follows.
// It leaves mu held for the next delivery of the poll (see lockDelivery)
// unless it has rendezvous jobs to run. (The MATCH handler, onMatch,
// delivers an eager message that a posted receive takes in its turn
// itself, and calls arriveLocked for the others.)
func (p *PML) arrive(src int, h *matchHdr, rndv bool, payload []byte) {
	if src < 0 || src >= len(p.peers) {
		p.log.Error("fragment from an unknown rank", "from", src)
		return
	}
	p.lockDelivery()
	p.arriveLocked(src, h, rndv, payload)
}

// arriveLocked is arrive with mu held for the delivery (lockDelivery) and
// src in range.
func (p *PML) arriveLocked(src int, h *matchHdr, rndv bool, payload []byte) {
	env := match.Envelope{Ctx: h.ctx, Src: src, Tag: int(h.tag), Seq: h.seq}
	if err := p.eng.Check(&env); err != nil {
		// A duplicate, stale or malformed envelope: matching it would
		// break the order of everything after it. Drop it.
		p.endDelivery()
		p.log.Error("dropping a fragment the matching engine refuses", "from", src, "error", err)
		return
	}
	m := p.newMsgLocked()
	m.Envelope = env
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
	jobs := p.jobs[:0]
	for i, pr := range pairs {
		r := pr.Recv.Data.(*Request)
		switch {
		case pr.Msg == m && !rndv:
			p.deliverEagerLocked(r, src, h, payload) // no rndvJob to build and return
		case pr.Msg == m:
			j := p.deliverLocked(r, src, h, rndv, payload)
			j.inPoll = true
			jobs = append(jobs, j)
		default:
			if j := p.deliverUnexpLocked(r, pr.Msg); j.r != nil {
				j.inPoll = true
				jobs = append(jobs, j)
			}
		}
		p.freeMsgLocked(pr.Msg)
		pairs[i] = match.Pair{}
	}
	p.pairs = pairs[:0]
	p.arrived++
	if len(jobs) == 0 && p.streaming {
		return // mu stays held for the poll's next delivery
	}
	p.endDelivery()
	for i := range jobs {
		p.runRndv(&jobs[i])
		jobs[i] = rndvJob{}
	}
	p.jobs = jobs[:0]
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
// unexpPoolBytes bounds all the buffers the free list keeps: a burst of
// unexpected messages (1024 of 16 KiB would be 16 MiB) does not stay pinned
// for the rank's lifetime; records beyond it are kept without their buffer.
const (
	maxPooledPayload = 16 << 10
	unexpPoolBytes   = 1 << 20
)

// newUnexpLocked takes an unexpected record from the free list, its
// payload emptied but its buffer kept (p.mu held). Recycling both keeps the
// unexpected-eager path, the common case whenever the sender is ahead, free
// of allocations.
func (p *PML) newUnexpLocked(rndv bool, h *matchHdr) *unexp {
	var u *unexp
	if n := len(p.unexpFree); n > 0 {
		u = p.unexpFree[n-1]
		p.unexpFree = p.unexpFree[:n-1]
		p.unexpPooled -= cap(u.payload)
	} else {
		u = new(unexp)
	}
	u.rndv, u.h, u.payload = rndv, *h, u.payload[:0]
	return u
}

// freeMsgLocked returns a Msg the engine no longer holds, and its
// unexpected record, which the caller has delivered (p.mu held).
func (p *PML) freeMsgLocked(m *match.Msg) {
	if u, ok := m.Data.(*unexp); ok && len(p.unexpFree) < 1024 {
		if c := cap(u.payload); c > maxPooledPayload || p.unexpPooled+c > unexpPoolBytes {
			u.payload = nil
		}
		p.unexpPooled += cap(u.payload)
		p.unexpFree = append(p.unexpFree, u)
	}
	*m = match.Msg{}
	if len(p.msgFree) < 1024 {
		p.msgFree = append(p.msgFree, m)
	}
}

// deliverUnexpLocked delivers a stored message to r.
func (p *PML) deliverUnexpLocked(r *Request, m *match.Msg) rndvJob {
	u := m.Data.(*unexp)
	p.unexpBytes -= int64(len(u.payload))
	return p.deliverLocked(r, m.Src, &u.h, u.rndv, u.payload)
}

// rndvJob is the part of delivering a matched RNDV that runs with mu
// released (runRndv): copying its first chunk, reading the rest (single
// copy), answering the sender. Until it has run, r is in no table (matched,
// so neither posted nor cancelable; not yet in recvs): no other goroutine
// can reach it.
type rndvJob struct {
	r      *Request
	src    int
	sreq   uint64
	addr   uint64 // the sender's buffer (rget)
	chunk  []byte // the first chunk; valid while the BTL callback runs
	plan   rndvPlan
	inPoll bool // run by a BTL callback, under progMu (splitRead needs it)
	direct bool // taken by a direct receive (takeRndv): no other goroutine can see r
	stream bool // the sender's flagStream: its read may be split from limits.splitStream
}

// deliverLocked hands a matched message to its receive r. An eager payload
// (at most the eager limit) is copied here, under mu; a rendezvous returns
// the job that copies and reads its bulk without mu, which the caller runs
// after unlocking. Otherwise the returned job is empty (j.r == nil).
func (p *PML) deliverLocked(r *Request, src int, h *matchHdr, rndv bool, payload []byte) rndvJob {
	if !rndv {
		p.deliverEagerLocked(r, src, h, payload)
		return rndvJob{}
	}
	r.peer = src
	r.tag = int(h.tag)
	p.returnCreditLocked(src, len(payload))
	r.size = int(h.size)
	plan := planRndv(r.size, len(payload), len(r.buf), false)
	if plan.frags && p.planReadLocked(r, src, h, plan.want-plan.copy) {
		plan = planRndv(r.size, len(payload), len(r.buf), true)
	}
	r.want = plan.want
	return rndvJob{r: r, src: src, sreq: h.sreq, addr: h.addr, chunk: payload, plan: plan, stream: h.flags&flagStream != 0}
}

// deliverEagerLocked is deliverLocked for an eager message: it copies the
// payload into r (under mu) and completes r.
func (p *PML) deliverEagerLocked(r *Request, src int, h *matchHdr, payload []byte) {
	r.peer = src
	r.tag = int(h.tag)
	p.returnCreditLocked(src, len(payload))
	var n int
	if len(payload) <= memcpy.SmallMax && len(payload) <= len(r.buf) {
		memcpy.Small(r.buf, payload)
		n = len(payload)
	} else {
		n = memcpy.Copy(r.buf, payload)
	}
	if h.flags&flagSync != 0 {
		p.sendAckLocked(src, h.sreq, 0, 0, 0)
	}
	// Just matched: no queue or table holds r, nothing else can finish it.
	st := Status{Source: r.source(src), Tag: r.tag, Count: n}
	var err error
	if len(payload) > len(r.buf) {
		err = truncErr(len(payload), len(r.buf), st.Source, r.tag)
	}
	if h := r.h; h != nil && err == nil && h.settleDirect(st) {
		p.recycleLocked(r) // h has the result and nobody holds r
		return
	}
	r.complete(st, err)
}

// reqFreeMax bounds PML.reqFree: a window of receives (osu's 64) is
// recycled and posted again without touching the request cache.
const reqFreeMax = 256

// recycleLocked keeps r, a receive that nothing can reach any more and
// that never had a waiter (settleDirect), for the next startRecv (p.mu
// held): a plain store into reqFree, where the request cache's put is a
// CAS.
//
// r was zero when startRecvH took it, and it is zero again but for the
// fields that every post sets before anything reads them: startRecvH's
// (p, kind, userTag, grp, h, and recv's Ctx, Src, Tag and Data; Post sets
// recv's seq, and MatchPosted or TakeInTurn left its links nil) and the
// ones a delivery sets (peer, tag). Only the caller's buffer is dropped,
// so that reqFree keeps none alive: clearing the rest was most of this
// function's instructions, about 5% of an osu mr receiver's at 8 B
// (TestRecycledReceiveIsZero checks what r keeps). One that reqFree has
// no room for goes to the cache or the pool zeroed.
func (p *PML) recycleLocked(r *Request) {
	r.buf = nil
	if p.nFree < reqFreeMax {
		p.reqFree[p.nFree] = r
		p.nFree++
		return
	}
	*r = Request{} // rare (a window of more than reqFreeMax receives): no field list to keep in step with startRecvH's
	if !p.reqs.put(r) {
		reqPool.Put(r)
	}
}

// runRndv carries out a matched RNDV's plan with mu released: the copy of
// the first chunk and the single-copy read are the bulk of a message, and
// a rank's other goroutines go on matching meanwhile. Only registering the
// receive for FRAGs and the ACK that names it take mu, together: once r is
// in recvs, a lost peer may fail it (and its owner recycle it), so nothing
// of r is touched after that section.
func (p *PML) runRndv(j *rndvJob) {
	r := j.r
	r.received = memcpy.Copy(r.buf[:j.plan.copy], j.chunk)
	if j.plan.read > 0 && j.inPoll && (p.splitRead(j) || p.queueRead(j)) {
		return
	}
	p.readRest(j)
}

// readRest is runRndv after the first chunk: the read (unless it is
// planned otherwise or fails), then the receive's completion and the
// sender's FIN, or the ACK that completes or continues the message.
func (p *PML) readRest(j *rndvJob) {
	r, src := j.r, j.src
	m := p.peers[src].m
	if j.plan.read > 0 {
		var t0 int64
		if r.rg.timed { // only an adaptive read is timed: a clock read costs ~25 ns
			t0 = p.rget.now()
		}
		err := m.ReadFrom(src, uintptr(j.addr)+uintptr(r.received), r.buf[r.received:r.want])
		if err == nil {
			if r.rg.timed {
				p.rget.note(pathRead, r.want-r.received, time.Duration(p.rget.now()-t0))
			}
			p.readDone(j)
			return
		}
		p.log.Debug("single-copy read failed; using the copy pipeline", "from", src, "error", err)
		j.plan.frags = true
	}
	if !j.plan.frags {
		if pe := &p.peers[src]; pe.locked != nil {
			// As the FIN in readDone: the receive completes first, then the
			// ACK goes, from the peer's scratch under its send lock.
			sreq, want := j.sreq, uint64(r.want)
			p.endRecv(j)
			p.ackDone(src, pe, sreq, want)
			return
		}
		if _, err := m.Send(src, btl.TagPMLAck, encodeAck(r.hdr[:], j.sreq, 0, uint64(r.want), uint64(r.want)), nil, nil); err != nil {
			p.log.Debug("ACK send failed", "to", src, "error", err)
		}
		p.endRecv(j)
		return
	}
	p.mu.Lock()
	p.rget.startPipeLocked(r, len(p.recvs))
	p.registerRecvLocked(r)
	if p.peers[src].lost.Load() {
		// Lost before r was in recvs (a batched read made after the
		// poll reported the loss): onPeerLost did not see it. It sets
		// lost before it looks, under mu, so one of the two fails r.
		delete(p.recvs, r.id)
		p.mu.Unlock()
		r.finish(Status{}, peerLost(src))
		return
	}
	p.sendAckLocked(src, j.sreq, r.id, uint64(r.received), uint64(r.want))
	p.mu.Unlock()
}

// readDone completes the receive of j, whose rest has been read, and
// sends the FIN that completes its send.
func (p *PML) readDone(j *rndvJob) {
	r, src := j.r, j.src
	m := p.peers[src].m
	r.received = r.want
	if ts := p.peers[src].try; ts != nil {
		// The receive completes first, then the FIN goes, its header by
		// value (r may be recycled at once): a locked instruction after
		// the FIN's store into a line the sender polls (the
		// completion's) waits for that line to come over, on the
		// receive's way back to its caller.
		p.endRecv(j)
		sent, err := ts.TrySend(src, btl.TagPMLFin, finWords(j.sreq), nil)
		if err == nil && !sent {
			_, err = m.Send(src, btl.TagPMLFin, encodeFin(make([]byte, finHdrLen), j.sreq), nil, nil)
		}
		if err != nil {
			p.log.Debug("FIN send failed", "to", src, "error", err)
		}
		return
	}
	if _, err := m.Send(src, btl.TagPMLFin, encodeFin(r.hdr[:], j.sreq), nil, nil); err != nil {
		j.end(Status{}, err)
		return
	}
	p.endRecv(j)
}

// endRecv completes the receive of j, whose payload is all in.
func (p *PML) endRecv(j *rndvJob) { j.end(j.r.rndvResult()) }

// end completes j's receive with st and err: r.finish, or with plain
// stores when a direct receive took it (takeRndv), since no other
// goroutine can see its request (Done reads r.early), as the direct
// receive of an eager message completes.
func (j *rndvJob) end(st Status, err error) {
	r := j.r
	if !j.direct {
		r.finish(st, err)
		return
	}
	r.status, r.err, r.early = st, err, true
}

// Batched reads (Config.RgetBatchMax). A single-copy read's system call
// has a fixed cost, ~0.45 us here against ~0.5 us for copying 8 KiB, and
// process_vm_readv takes many regions at once. So while messages come in
// runs (p.streaming: a window of sends, both ways at once in osu bibw)
// the reads of the rendezvous messages a poll matches are queued
// (queueRead) and made when the poll ends (endPass, flushReads): one call
// per run of the same sender's, of up to 16 regions (btl.VecReader). A
// queued receive is in no table until then, as while runRndv runs; it
// completes, and its sender's FIN goes, once the batch is read. A ping-pong's
// read (a pass of one message), a timed read, a split one or a larger one
// is made as before, at once. A region the call could not read is read on
// its own (readRest), which names the error and falls back to the pipeline.

// readBatch bounds the reads one pass queues before it flushes them.
const readBatch = 16

// queueRead queues j's read for the end of the pass when the pass batches
// (see above); false: the caller reads it now (progMu held).
func (p *PML) queueRead(j *rndvJob) bool {
	if !p.streaming || j.r.rg.timed || j.r.want-j.r.received > p.cfg.RgetBatchMax || p.peers[j.src].vec == nil {
		return false
	}
	if len(p.reads) == readBatch {
		p.flushReads() // mu is not held: runRndv runs without it
	}
	p.reads = append(p.reads, *j)
	p.reads[len(p.reads)-1].chunk = nil // copied already; the BTL's after this callback
	return true
}

// flushReads makes the queued reads (see above), without mu (progMu held).
func (p *PML) flushReads() {
	jobs := p.reads
	addr, dst := p.readAddr[:0], p.readDst[:0]
	for i := range jobs {
		r := jobs[i].r
		addr = append(addr, uintptr(jobs[i].addr)+uintptr(r.received))
		dst = append(dst, r.buf[r.received:r.want])
	}
	for i := 0; i < len(jobs); {
		src := jobs[i].src
		end := i + 1
		for end < len(jobs) && jobs[end].src == src {
			end++
		}
		for i < end {
			n := p.peers[src].vec.ReadVec(src, addr[i:end], dst[i:end])
			if n == 0 {
				p.readRest(&jobs[i]) // alone: its error, and the pipeline
				n = 1
			} else {
				for k := i; k < i+n; k++ {
					p.readDone(&jobs[k])
				}
			}
			i += n
		}
	}
	clear(dst)
	clear(jobs)
	p.reads, p.readAddr, p.readDst = jobs[:0], addr[:0], dst[:0]
}

// ackDone sends src the ACK that completes its send sreq, whose want
// bytes a completed receive took whole from the RNDV (pe.locked set):
// through the peer's scratch and TrySendBytesLocked under its send lock,
// or, when the BTL declines, through Send from a buffer of its own.
func (p *PML) ackDone(src int, pe *peer, sreq, want uint64) {
	pe.sendMu.Lock()
	sent := pe.locked.TrySendBytesLocked(src, btl.TagPMLAck, encodeAck(pe.ackBuf[:], sreq, 0, want, want), nil, false)
	pe.sendMu.Unlock()
	if sent {
		return
	}
	if _, err := pe.m.Send(src, btl.TagPMLAck, encodeAck(make([]byte, ackHdrLen), sreq, 0, want, want), nil, nil); err != nil {
		p.log.Debug("ACK send failed", "to", src, "error", err)
	}
}

// registerRecvLocked gives r an id and puts it in recvs, where its FRAGs
// and wrote FINs find it and a loss of its peer fails it (mu held).
func (p *PML) registerRecvLocked(r *Request) {
	p.nextID++
	r.id = p.nextID
	p.recvs[r.id] = r
}

// splitRead is the single-copy read of a large rest shared by both ranks
// (pml_ob1_rget_split): we read its first half from the sender while the
// sender, asked by a split ACK, writes the second half into our buffer
// (btl.Writer), so that two cores copy instead of one; its wrote FIN, and
// our own read, each count their bytes into r (fragIn), which completes
// with the last. It reports false, having done nothing, when the rest is
// below the threshold or the BTL cannot write. It runs under progMu (a
// job of a BTL callback), so nothing else advances or fails r until our
// part is counted: the sender's answer and a loss of the sender are
// handled by later polls.
//
// Only while the sender is in a wait (it says so while it has such sends,
// see waitLook): the read is then done by two cores, where a sender that
// computes between its Isend and its Wait would leave the receive waiting
// for its next call, and the receiver reads it all instead, as Open MPI's
// vader does.
//
// Not while sends of ours are in flight: the other rank is then busy with
// our messages (osu bibw), and its part of ours would only wait for it
// (bibw 64-256 KiB 0.98-1.13 of Open MPI -> 0.81-1.05 with the split).
func (p *PML) splitRead(j *rndvJob) bool {
	r, src := j.r, j.src
	pe := &p.peers[src]
	rest := r.want - r.received
	if !pe.lim.splitsRead(rest, j.stream) || p.activeSends.Load() != 0 || r.rg.timed {
		return false // (a read that pml_ob1_rget_adaptive times is the receiver's alone)
	}
	if _, ok := pe.m.(btl.Writer); !ok {
		return false
	}
	if rn, ok := pe.m.(runner); !ok || !rn.PeerRunning(src) {
		return false // the sender computes: it would write its part only at its next call
	}
	mid := r.received + rest/2&^63 // our part a whole number of cache lines long
	if mid == r.received {
		return false // under 128 bytes (pml_ob1_rget_split set that low): not worth it
	}
	p.mu.Lock()
	p.registerRecvLocked(r)
	if _, err := pe.m.Send(src, btl.TagPMLAck, encodeAckSplit(p.hdrBuf[:], j.sreq, r.id, uint64(mid), uint64(r.want),
		uintptr(unsafe.Pointer(&r.buf[mid]))), nil, nil); err != nil {
		delete(p.recvs, r.id)
		p.mu.Unlock()
		r.finish(Status{}, err)
		return true
	}
	p.mu.Unlock()
	id, from := r.id, r.received
	if err := pe.m.ReadFrom(src, uintptr(j.addr)+uintptr(from), r.buf[from:mid]); err != nil {
		// Our part comes as FRAGs then; the sender takes this plain ACK
		// in place of the FIN.
		p.log.Debug("single-copy read failed; asking for the first half as FRAGs", "from", src, "error", err)
		p.mu.Lock()
		p.sendAckLocked(src, j.sreq, id, uint64(from), uint64(mid))
		p.mu.Unlock()
		return true
	}
	if _, err := pe.m.Send(src, btl.TagPMLFin, encodeFin(r.hdr[:], j.sreq), nil, nil); err != nil {
		p.log.Debug("FIN send failed", "to", src, "error", err)
	}
	p.fragIn(r, id, mid-from)
	return true
}

// onWrote counts the part of a split read that the sender wrote into our
// buffer (see splitRead).
func (p *PML) onWrote(src int, data []byte) {
	p.endDelivery() // a BTL callback that takes mu: the poll may hold it
	rreq, off, n, err := decodeWrote(data)
	if err != nil {
		p.log.Error("dropping a malformed fragment", "from", src, "error", err)
		return
	}
	r := p.fragRecv(src, rreq, off, int(n))
	if r == nil {
		p.log.Error("wrote FIN for an unknown receive or out of its bounds", "from", src, "rreq", rreq, "offset", off, "bytes", n)
		return
	}
	p.fragIn(r, rreq, int(n))
}

// finishRecv completes a receive whose bytes are all in.
func (p *PML) finishRecv(r *Request) { r.finish(r.rndvResult()) }

// rndvResult is the result of a rendezvous receive whose bytes are all in.
func (r *Request) rndvResult() (Status, error) {
	src := r.source(r.peer)
	return Status{Source: src, Tag: r.tag, Count: r.want}, truncErr(r.size, len(r.buf), src, r.tag)
}

func (p *PML) sendAckLocked(dest int, sreq, rreq, from, want uint64) {
	pe := &p.peers[dest]
	if _, err := pe.m.Send(dest, btl.TagPMLAck, encodeAck(p.hdrBuf[:], sreq, rreq, from, want), nil, nil); err != nil {
		p.log.Debug("ACK send failed", "to", dest, "error", err)
	}
}

// onFrag copies one rendezvous fragment into its receive.
func (p *PML) onFrag(src int, data []byte) {
	p.endDelivery()
	rreq, off, payload, err := decodeFrag(data)
	if err != nil {
		p.log.Error("dropping a malformed fragment", "from", src, "error", err)
		return
	}
	r := p.fragRecv(src, rreq, off, len(payload))
	if r == nil {
		p.log.Error("FRAG for an unknown receive or out of its bounds", "from", src, "rreq", rreq, "offset", off, "bytes", len(payload))
		return
	}
	// The copy runs with mu released. r stays valid meanwhile: a receive
	// in recvs is advanced (here) or failed (onPeerLost, Close) only by
	// BTL callbacks or under progMu, and this callback holds progMu.
	p.rget.fragArrived(r)
	p.fragIn(r, rreq, memcpy.Copy(r.buf[off:], payload))
}

// fragRecv is the pipelined receive a FRAG of n bytes at off names, or nil
// when there is none from src or the FRAG does not fit it.
func (p *PML) fragRecv(src int, rreq, off uint64, n int) *Request {
	p.mu.Lock()
	r := p.recvs[rreq]
	p.mu.Unlock()
	if r == nil || r.peer != src || !fragFits(off, n, r.want) {
		return nil
	}
	return r
}

// placeFrag is the PlaceFunc of FRAGs (btl.Placer): the part of the
// receive buffer a FRAG's payload goes to, or nil (the BTL then delivers
// it to onFrag, which logs it).
func (p *PML) placeFrag(src int, hdr []byte, n int) []byte {
	p.endDelivery() // a BTL callback that takes mu: the poll may hold it
	rreq, off, _, err := decodeFrag(hdr)
	if err != nil {
		return nil
	}
	r := p.fragRecv(src, rreq, off, n)
	if r == nil {
		return nil
	}
	// The BTL writes into it from now on: the pipeline has started.
	p.rget.fragArrived(r)
	return r.buf[off : off+uint64(n)]
}

// fragLanded is the LandedFunc of FRAGs: the n bytes placeFrag gave a
// place to are in it. r is still in recvs: only FRAGs from src complete
// it, and src's later fragments come after this call.
func (p *PML) fragLanded(src int, hdr []byte, n int) {
	p.endDelivery() // as placeFrag
	rreq, off, _, err := decodeFrag(hdr)
	var r *Request
	if err == nil {
		r = p.fragRecv(src, rreq, off, n)
	}
	if r == nil {
		p.log.Error("placed FRAG for an unknown receive or out of its bounds", "from", src, "bytes", n)
		return
	}
	p.fragIn(r, rreq, n)
}

// placeMsg is the PlaceFunc of MATCH (rndv false) and RNDV fragments
// (btl.Placer): the header of a message from src is in, its n bytes of
// payload (the eager payload, or the rendezvous's first chunk) are still
// coming. When the message is its source's next, a posted receive takes it
// (match.MatchPosted) and its payload fits that receive's buffer, the
// message is matched now and the part of the buffer it goes to returned:
// the module reads it there, not into its own buffer to be copied. A
// rendezvous is answered at once (the ACK asks for the rest from n), so
// the sender streams the rest while the first chunk is still on its way.
// Otherwise it returns nil and changes nothing: the fragment arrives whole
// through onMatch or onRndv. Until msgLanded, the receive is in recvs
// (a loss of src fails it) and peers[src].landing.
func (p *PML) placeMsg(src int, hdr []byte, n int, rndv bool) []byte {
	p.endDelivery() // a BTL callback that takes mu: the poll may hold it
	if src < 0 || src >= len(p.peers) || p.peers[src].landing != nil {
		return nil
	}
	var h matchHdr
	var err error
	if rndv {
		_, err = decodeRndv(hdr, &h)
	} else {
		_, err = decodeMatch(hdr, &h)
	}
	switch {
	case err != nil, n == 0:
		return nil
	case rndv && (uint64(n) > h.size || p.peers[src].lim.rget):
		return nil // malformed (onRndv logs it), or the single-copy read may be the plan
	}
	env := match.Envelope{Ctx: h.ctx, Src: src, Tag: int(h.tag), Seq: h.seq}
	p.mu.Lock()
	if p.eng.Check(&env) != nil {
		p.mu.Unlock()
		return nil // onMatch or onRndv drops and logs it
	}
	mr := p.eng.MatchPosted(&env, func(mr *match.Recv) bool { return n <= len(mr.Data.(*Request).buf) })
	if mr == nil {
		p.mu.Unlock()
		return nil
	}
	r := mr.Data.(*Request)
	r.peer, r.tag = src, int(h.tag)
	r.received = 0
	p.returnCreditLocked(src, n) // matched: it holds none of our memory
	if rndv {
		r.size = int(h.size)
		r.want = min(r.size, len(r.buf))
		p.rget.startPipeLocked(r, len(p.recvs)) // before r counts among them
	}
	p.registerRecvLocked(r)
	if rndv {
		if r.want > n {
			p.sendAckLocked(src, h.sreq, r.id, uint64(n), uint64(r.want))
		} else {
			p.sendAckLocked(src, h.sreq, 0, uint64(r.want), uint64(r.want))
		}
	} else {
		r.size, r.want = n, n
		if h.flags&flagSync != 0 {
			p.sendAckLocked(src, h.sreq, 0, 0, 0)
		}
	}
	p.mu.Unlock()
	p.peers[src].landing, p.peers[src].landingID = r, r.id
	return r.buf[:n]
}

// msgLanded is the LandedFunc of MATCH and RNDV fragments: the n bytes
// placeMsg gave a place to are in it. An eager message is complete; a
// rendezvous has its first chunk, its FRAGs (if it asked for more) come
// next.
func (p *PML) msgLanded(src int, hdr []byte, n int) {
	p.endDelivery() // as placeFrag
	if src < 0 || src >= len(p.peers) || p.peers[src].landing == nil {
		p.log.Error("a placed message landed that none was placed for", "from", src, "bytes", n)
		return
	}
	pe := &p.peers[src]
	r, id := pe.landing, pe.landingID
	pe.landing = nil
	p.fragIn(r, id, n)
}

// fragIn counts n bytes of FRAG payload into r and finishes r once it has
// all it wants.
func (p *PML) fragIn(r *Request, rreq uint64, n int) {
	r.received += n
	if r.received < r.want {
		return
	}
	p.mu.Lock()
	delete(p.recvs, rreq)
	timed := p.rget.endPipeLocked(r)
	p.mu.Unlock()
	if timed {
		p.rget.note(pathPipe, r.want-r.rg.from, time.Duration(p.rget.now()-r.rg.t0))
	}
	p.finishRecv(r)
}

// truncErr is nil unless a message of size bytes did not fit in n.
func truncErr(size, n, src, tag int) error {
	if size <= n {
		return nil
	}
	return &TruncateError{Size: size, Buf: n, Source: src, Tag: tag}
}

// TruncateError is a receive's ErrTruncate with its lengths, so that a
// layer above (the collectives, whose tags are internal) can say it in its
// own words. It unwraps to errs.ErrTruncate.
type TruncateError struct {
	Size, Buf   int // the message's length, the receive buffer's
	Source, Tag int // as the receive's Status gives them
}

func (e *TruncateError) Error() string {
	return fmt.Sprintf("gorun: message of %d bytes from rank %d with tag %d truncated to the receive buffer of %d bytes: %v",
		e.Size, e.Source, e.Tag, e.Buf, errs.ErrTruncate)
}

func (e *TruncateError) Unwrap() error { return errs.ErrTruncate }
