package sm

import (
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/memcpy"
)

// Fast boxes (Open MPI vader's per-peer "fbox"), the design and its
// ordering invariant are in doc.go. This file holds the ring itself: its
// record format, the sender's append and the receiver's poll.
//
// A box is boxCtlSize bytes of control (the receiver's read position, on a
// line pair of its own) followed by a ring of size bytes (a power of two) in
// the receiver's region. Positions are byte counters that only grow; the
// ring offset is the counter modulo size. A record is an 8-byte header word
// followed by hdr+payload, padded to boxAlign bytes; it never wraps around the end
// of the ring (a wrap record fills the rest of the lap instead).
//
// The sentinel rule: before it publishes a record's header, the sender
// stores 0 in the word right after the record (where the next header will
// go). So the word at the receiver's read position is always either 0
// (empty) or a header stored by the sender, never stale payload of an
// earlier lap: a nonzero header is a message, with no lap bit needed. The
// space check keeps room for that sentinel word.

const (
	boxCtlSize = 128 // the receiver's read position, alone on a cache line pair
	boxHdrSize = 8
	// boxAlign aligns records to half a cache line: a record of up to 32
	// bytes (a PML match header and up to 8 bytes of payload) never
	// straddles two lines, so it crosses to the receiver's core as one.
	boxAlign = 32

	boxKindData     = 1 // hdr+payload of a message
	boxKindWrap     = 2 // nothing more in this lap: continue at offset 0
	boxKindDataLine = 3 // boxKindData to the end of a cache line (a ping-pong's: recordKind)

	boxPollBoxes = 4  // boxes one Progress call looks at (round robin)
	boxPollMsgs  = 32 // messages it takes from one box at most
)

// boxCtl is the control part of a box.
type boxCtl struct {
	rd    atomic.Uint64 // bytes the receiver has consumed (published lazily); receiver only
	_     [56]byte
	owner atomic.Uint64 // 1 + the rank that took the box, stored once before it announces it
	_     [boxCtlSize - 72]byte
}

var _ [boxCtlSize - unsafe.Sizeof(boxCtl{})]byte

// boxHeader packs a record header word; it is never 0 (kind is 1 or 2).
func boxHeader(kind uint8, seq uint32, n int, tag btl.Tag) uint64 {
	return uint64(seq) | uint64(n)<<32 | uint64(tag)<<48 | uint64(kind)<<56
}

// boxRecord is one parsed record header. Three fields (the header's
// small ones grouped): the compiler keeps a struct of at most four fields
// in registers, where a fifth made pollBox copy the returned record through
// its stack frame with a wide load of narrow stores, a store-forwarding
// stall per message (~5% of a window's time in BenchmarkWindowOneGoroutine).
type boxRecord struct {
	boxID
	n    int    // bytes of hdr+payload (data records)
	size uint64 // bytes the record takes in the ring
}

// boxID is a record's kind, tag and pair sequence number.
type boxID struct {
	kind uint8
	tag  btl.Tag
	seq  uint32
}

// parseBoxHeader checks header word w found at ring offset off of a ring of
// size bytes whose records carry at most maxMsg bytes. It reports false for
// a word no honest sender writes (unknown kind, bad tag, a length above
// maxMsg, a record that runs past the end of the ring): the box is then
// corrupt. w must not be 0 (an empty position).
func parseBoxHeader(w, off, size uint64, maxMsg int) (boxRecord, bool) {
	r := recordOf(w)
	switch r.kind {
	case boxKindWrap:
		if off == 0 || w != boxHeader(boxKindWrap, 0, 0, 0) {
			return r, false
		}
		r.size = size - off
		return r, true
	case boxKindData, boxKindDataLine:
		var ok bool
		r.size, ok = dataRecord(w, off, size, maxMsg)
		return r, ok
	}
	return r, false
}

// recordOf unpacks header word w (boxHeader's inverse), without its size.
func recordOf(w uint64) boxRecord {
	return boxRecord{boxID: boxID{kind: uint8(w >> 56), tag: btl.Tag(w >> 48), seq: uint32(w)}, n: int(w >> 32 & 0xffff)}
}

// dataRecord checks the header w of a data record at ring offset off (as
// parseBoxHeader) and returns the ring space the record takes. It inlines
// into pollBox, whose loop takes data records without parseBoxHeader's
// call.
func dataRecord(w, off, size uint64, maxMsg int) (uint64, bool) {
	n := w >> 32 & 0xffff
	rs := recordSpace(off, n, w>>56 == boxKindDataLine)
	// w>>56|2 == 3: boxKindData (1) or boxKindDataLine (3), in a form
	// cheap enough for this function to inline.
	return rs, w>>56|2 == 3 && btl.Tag(w>>48) < btl.NumTags && n <= uint64(maxMsg) && off+rs <= size
}

// recordSpace is the ring space a data record of n bytes (hdr+payload) at
// ring offset off takes: a whole number of boxAlign bytes, or with line
// (boxKindDataLine) up to the end of the cache line its last byte is on,
// so that the next record starts a line (the ring starts one). One
// formula for both, so that dataRecord, which calls it, still inlines.
func recordSpace(off, n uint64, line bool) uint64 {
	start, mask := uint64(0), uint64(boxAlign-1)
	if line {
		start, mask = off, 63
	}
	return (start+boxHdrSize+n+mask)&^mask - start
}

// recordKind is the kind and ring space of a data record of n bytes at
// ring offset off: in a ping-pong (line), to the end of a cache line, so
// that each message and the sentinel after it start lines of their own.
// With half-line records a ping-pong's 0-8 B messages took ~25 ns longer
// one way in the near placement (osu lat 0-8 B 0.90-0.93x with line
// records), while a stream's records lose nothing by sharing lines and
// carry two messages per line crossing, where a crossing costs hundreds
// of ns (osu mr 1-8 B 0.70-0.77x far with every record a whole line).
func recordKind(off uint64, n int, line bool) (uint8, uint64) {
	kind := uint8(boxKindData)
	if line {
		kind = boxKindDataLine
	}
	return kind, recordSpace(off, uint64(n), line)
}

// nextSeq is the pair sequence number after s; it skips 0, which marks a
// FIFO slot sent before the pair had a box.
func nextSeq(s uint32) uint32 {
	if s++; s == 0 {
		s = 1
	}
	return s
}

// boxRing is the part of a box both sides address.
type boxRing struct {
	ctl  *boxCtl
	ring []byte // size bytes, 8-aligned
	size uint64 // len(ring), a power of two
}

func newBoxRing(ctl, ring unsafe.Pointer, size int) boxRing {
	return boxRing{ctl: (*boxCtl)(ctl), ring: unsafe.Slice((*byte)(ring), size), size: uint64(size)}
}

// word is the header word at ring offset off (a multiple of 8).
func (b *boxRing) word(off uint64) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&b.ring[off]))
}

func (b *boxRing) bytes(off uint64, n int) []byte {
	return b.ring[off : off+uint64(n) : off+uint64(n)]
}

// record is the n bytes after the header of the record at ring offset
// off, addressed from the ring's base without bytes's bounds checks: the
// caller has checked that off+boxHdrSize+n fits (reserve, dataRecord).
func (b *boxRing) record(off uint64, n int) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b.ring)), off+boxHdrSize)), n)
}

// boxOut is the sender's side of a box, guarded by the peer's mu.
type boxOut struct {
	boxRing
	w  uint64 // bytes written
	rd uint64 // our last view of ctl.rd (a lower bound)
}

// put appends hdr+payload as a record with pair sequence number seq, or
// reports false when the ring has no room for it (then the caller uses the
// FIFO, which seq keeps in order). The receiver's read position is read
// only when the cached one says the ring is full. join is for a message
// the receiver is waiting for, not in a burst: it copies a small message
// into the ring in one piece (putJoined), where in a burst the stack copy
// costs more than it saves (osu bw 1-4 B -8%), and the record ends a
// cache line (recordKind).
func (b *boxOut) put(tag btl.Tag, seq uint32, hdr, payload []byte, join bool) bool {
	if len(hdr) == 16 && len(payload) <= memcpy.TinyMax {
		// The PML's MATCH header and a few bytes (a send that did not
		// come through TrySend): as TrySend's, from registers.
		return b.putMatch(tag, seq, btl.Header16Of(hdr), payload, join)
	}
	n := len(hdr) + len(payload)
	off := b.w & (b.size - 1)
	kind, rec := recordKind(off, n, join)
	if !b.fits(off, rec) {
		var ok bool
		if off, rec, ok = b.reserve(off, rec, n, join); !ok {
			return false
		}
	}
	d := b.record(off, n) // off+rec <= size (reserve)
	if join {
		putJoined(d, hdr, payload)
	} else if len(hdr) == 16 && len(payload) <= memcpy.SmallMax {
		// A burst's MATCH and up to 32 bytes: no memmove calls.
		memcpy.Small(d, hdr)
		memcpy.Small(d[16:], payload)
	} else {
		// memcpy.Copy: from 1 KiB, stores that do not first read each of
		// the ring's lines back from the receiver's core (osu lat 2-4 KiB
		// -10-15%, bw +15-20%).
		memcpy.Copy(d[copy(d, hdr):], payload)
	}
	b.commit(off, rec, boxHeader(kind, seq, n, tag))
	return true
}

// putMatch is put for a 16-byte header that comes as two words
// (btl.Header16: TrySend, the PML's eager sends) and at most
// memcpy.TinyMax bytes of payload, burst or not: header and payload go
// into the ring from registers (the payload zero-padded to whole words,
// inside the record), in one or two 16-byte stores and at most one 8-byte
// one (memcpy.Store16 says why not more). Through put, the header went
// through the stack as bytes, and its 16-byte load, of bytes stored as two
// words an instant before, could not be forwarded from the store buffer:
// perf put a third of TrySend's samples in osu bw at 8 B on that stall,
// about 4% of the sender's time.
func (b *boxOut) putMatch(tag btl.Tag, seq uint32, h btl.Header16, payload []byte, line bool) bool {
	n := 16 + len(payload)
	off := b.w & (b.size - 1)
	kind, rec := recordKind(off, n, line)
	if !b.fits(off, rec) {
		var ok bool
		if off, rec, ok = b.reserve(off, rec, n, line); !ok {
			return false
		}
	}
	d := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b.ring)), off+boxHdrSize)
	// Two 16-byte stores at most: recordSpace keeps the record a
	// multiple of boxAlign, so the padded words fit in it (n <= 24: a
	// 32-byte record, of which the header and two words are the last 24).
	switch lo, hi := memcpy.Words16(payload); {
	case len(payload) == 0:
		memcpy.Store16(d, h.Lo, h.Hi)
	case len(payload) <= 8:
		memcpy.Store16(d, h.Lo, h.Hi)
		*(*uint64)(unsafe.Add(d, 16)) = lo
	default:
		memcpy.Store32(d, h.Lo, h.Hi, lo, hi)
	}
	b.commit(off, rec, boxHeader(kind, seq, n, tag))
	return true
}

// reserve finds room for a record of rec bytes at ring offset off, the
// write position's, when there is none there by our last view of the
// receiver's read position, or the record would run past the ring's end:
// it looks at the read position again, and fills the rest of the lap with
// a wrap record first if need be. It returns the record's offset and the
// ring space it takes there (recordKind for n bytes and line: a line
// record's depends on its offset); false when the ring is full. (put and
// putMatch test the common case inline, with fits: a helper for the whole
// placement does not inline, and its call cost 16 instructions per window
// message and 15 per ping-pong message, callgrind.)
func (b *boxOut) reserve(off, rec uint64, n int, line bool) (uint64, uint64, bool) {
	var skip uint64
	if off+rec > b.size {
		skip = b.size - off
		_, rec = recordKind(0, n, line) // the record's space at 0
	}
	if b.w+skip+rec+boxHdrSize-b.rd > b.size {
		b.rd = b.ctl.rd.Load()
		if b.w+skip+rec+boxHdrSize-b.rd > b.size {
			return 0, 0, false
		}
	}
	if skip != 0 {
		storeSeq(b.word(0), 0) // the sentinel after the wrap record
		b.publish(off, boxHeader(boxKindWrap, 0, 0, 0))
		b.w += skip
		off = 0
	}
	return off, rec, true
}

// fits says whether a record of rec bytes fits at ring offset off, the
// write position's, by our last view of the receiver's read position.
func (b *boxOut) fits(off, rec uint64) bool {
	return off+rec <= b.size && b.w+rec+boxHdrSize-b.rd <= b.size
}

// commit publishes the record of rec bytes at ring offset off, whose
// bytes are written, with header word w: first the sentinel after it, then
// the header.
func (b *boxOut) commit(off, rec, w uint64) {
	base := unsafe.Pointer(unsafe.SliceData(b.ring))
	storeSeq((*atomic.Uint64)(unsafe.Add(base, (off+rec)&(b.size-1))), 0)
	storeSeq((*atomic.Uint64)(unsafe.Add(base, off)), w) // publish
	b.w += rec
}

// boxPrefetch is how far ahead of its write position a sender in a burst
// asks for the ring's line (PREFETCHW), so that the line is ours by the
// time the record lands there: a record's stores otherwise wait for the
// line to come over from the receiver's core, and the sender's next locked
// instruction (the peer's mutex) waits for them. Not in a ping-pong (see
// publish in send.go), where the receiver polls that line.
const boxPrefetch = 256

// prefetch asks for the line boxPrefetch bytes ahead of the write position.
func (b *boxOut) prefetch() {
	memcpy.PrefetchW(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b.ring)), (b.w+boxPrefetch)&(b.size-1)))
}

// publish stores a header word with release order only (storeSeq: a
// plain store on amd64), so that a burst of records streams through the
// store buffer instead of waiting, record by record, for the ring's lines
// to come over from the receiver's core: an atomic store (XCHG) here was
// 23% of osu bw's samples at 8 B, all of them on that one instruction.
//
// The sleep protocol's pairing is then not Dekker's: the sender's load of
// the receiver's armed flag after the store may be served before the store
// is visible, and a receiver that arms and checks its boxes in between
// would sleep on a record it did not see. A store leaves the store buffer
// within nanoseconds, though, so Sleep looks at the boxes once more after
// boxRecheck (sleep.go): a wake lost so costs at most that, and only
// when the receiver went to sleep in the same instant. (A membarrier by
// the receiver before it sleeps, the exact fix, cost 13 us per Sleep here
// whenever another rank ran on the other vCPU: an IPI, a VM exit.)
func (b *boxOut) publish(off, w uint64) {
	storeSeq(b.word(off), w)
}

// boxIn is the receiver's side of a box; Progress owns it (progMu), except
// for the fields Sleep reads, which never change (boxRing) or are atomic.
type boxIn struct {
	boxRing
	src      int
	r        uint64 // bytes consumed
	released uint64 // value last stored in ctl.rd
	exp      uint32 // the pair sequence number the next message must carry
	dead     bool   // a corrupt record was found: no longer polled
	hot      bool   // our last poll of the box delivered (see pollBoxes)
}

// release publishes the read position r to the sender (ctl.rd), whose
// records up to it may then be overwritten.
func (b *boxIn) release() {
	storeSeq(&b.ctl.rd, b.r)
	b.released = b.r
}

// ready reports whether a record waits at the published read position (a
// lower bound of r: a "yes" may be stale, which costs one more poll; a
// Progress that found the box empty published the true position).
func (b *boxIn) ready() bool {
	return b.word(b.ctl.rd.Load()&(b.size-1)).Load() != 0
}

// pollBox delivers up to max messages from b, in order: it stops at an
// empty position and at a message whose sequence number is not the next
// one (an earlier message of the pair is still in the FIFO). With
// lineEnd set it also stops after a message whose successor's position is
// on another cache line, without looking there (see pollBoxes).
func (m *Module) pollBox(b *boxIn, max int, lineEnd bool) int {
	k := 0
	for k < max && !b.dead {
		off := b.r & (b.size - 1)
		w := b.word(off).Load()
		if w == 0 {
			break
		}
		var rec boxRecord
		ok := false
		if rs, data := dataRecord(w, off, b.size, m.boxSerMax); data {
			rec, ok = recordOf(w), true
			rec.size = rs
		} else {
			rec, ok = parseBoxHeader(w, off, b.size, m.boxSerMax)
		}
		if !ok {
			m.log.Error("fast box corrupt: no longer polled", "src", b.src, "offset", off, "header", w)
			b.dead = true
			break
		}
		if rec.kind == boxKindWrap {
			b.r += rec.size
			continue
		}
		if rec.seq != b.exp {
			break
		}
		m.raceRecv(b.src)
		if f := m.recv[rec.tag]; f != nil {
			f(b.src, b.record(off, rec.n)) // off+rec.size <= b.size (checked)
		}
		b.r += rec.size
		b.exp = nextSeq(b.exp)
		k++
		if lineEnd && (off+rec.size)&^63 != off&^63 {
			return k // the read position is published by the next poll
		}
	}
	// Release the space in batches while busy, and at once when the box
	// runs dry (so a sleeping receiver's check and the sender's view are
	// current).
	if b.r != b.released && (b.r-b.released >= b.size/2 || b.word(b.r&(b.size-1)).Load() == 0) {
		b.release()
	}
	return k
}

// pollBoxes polls up to boxPollBoxes of our boxes, round robin.
//
// A box whose last poll found nothing is polled in ping-pong style: the
// poll ends after the first message whose successor's position is on
// another cache line. The sender stored that position's sentinel (put)
// just before the message, so that line is still in the sender's cache:
// loading it now, to look for a next message or to decide whether to
// publish the read position, would wait for it to come over, between the
// message's arrival and the receive's return, on the ping-pong's path.
// The next poll loads it instead (typically while the reply travels). A
// box whose last poll delivered (the sender is ahead: a burst) is drained
// up to boxPollMsgs at once.
func (m *Module) pollBoxes() int {
	nb := len(m.prog.boxes)
	if nb == 0 {
		return 0
	}
	n := 0
	for i := 0; i < min(nb, boxPollBoxes); i++ {
		if m.prog.nextBox >= nb {
			m.prog.nextBox = 0
		}
		n += m.pollIn(m.prog.boxes[m.prog.nextBox])
		m.prog.nextBox++
	}
	if n > 0 {
		storeSeq(&m.recvEpoch, m.recvEpoch.Load()+1) // a burst's end (inBurst); only a poll under progMu writes it
	}
	return n
}

// pollIn polls box b as pollBoxes describes: ping-pong style after a poll
// that found nothing, a burst's worth after one that delivered.
func (m *Module) pollIn(b *boxIn) int {
	k := m.pollBox(b, boxPollMsgs, !b.hot)
	b.hot = k > 0
	return k
}

// catchUp is called for a FIFO data slot from src carrying pair sequence
// number seq: the messages src put in its box before it (seq's
// predecessors) are delivered first. Sequence numbers that do not line up
// are logged and the FIFO's order is followed.
func (m *Module) catchUp(src int, seq uint32) {
	b := m.peers[src].in
	if b == nil {
		m.log.Error("FIFO slot carries a fast-box sequence number but the sender has no box", "src", src, "seq", seq)
		return
	}
	if b.exp != seq {
		m.pollBox(b, int(b.size), false)
		if b.exp != seq {
			m.log.Error("fast box and FIFO out of step", "src", src, "fifo_seq", seq, "box_seq", b.exp)
		}
	}
	b.exp = nextSeq(seq)
}

// addBox takes a kindBox slot: src has taken box idx of our region.
func (m *Module) addBox(src int, idx uint64) {
	if src >= len(m.peers) || src == m.rank {
		m.log.Error("dropping fast-box announcement from a bad sender", "src", src)
		return
	}
	p := &m.peers[src]
	if idx >= uint64(m.nboxes) || m.prog.boxOwner[idx] != 0 || p.in != nil ||
		m.boxAt(m.rank, idx).ctl.owner.Load() != uint64(src)+1 {
		m.log.Error("dropping fast-box announcement for a box out of range, taken or not the sender's", "src", src, "box", idx, "boxes", m.nboxes)
		return
	}
	m.prog.boxOwner[idx] = src + 1
	m.populateBox(m.rank, idx, unix.MADV_POPULATE_READ)
	b := &boxIn{boxRing: m.boxAt(m.rank, idx), src: src, exp: 1}
	p.in = b
	p.inPub.Store(b)
	m.prog.boxes = append(m.prog.boxes, b)
	m.boxList[len(m.prog.boxes)-1] = b
	m.nBoxIn.Store(int32(len(m.prog.boxes))) // after the list entry: Sleep reads the entries below it
}

// boxAt addresses box idx of rank's region.
func (m *Module) boxAt(rank int, idx uint64) boxRing {
	off := m.boxOffset(rank, idx)
	return newBoxRing(m.seg.At(off), m.seg.At(off+boxCtlSize), m.boxSize)
}

// boxOffset is the segment offset of box idx of rank's region.
func (m *Module) boxOffset(rank int, idx uint64) int64 {
	return m.peers[rank].region.Box + int64(idx)*(boxCtlSize+int64(m.boxSize))
}

// populateBox maps the pages of box idx of rank's region into this process
// as the pair starts using it (advice: MADV_POPULATE_WRITE for the sender,
// MADV_POPULATE_READ for the receiver). Otherwise the box's first lap
// takes a page fault per 4 KiB page in each process, on the messages a
// program times first: with 256 KiB boxes (Config.BoxSize) osu lat's first
// size, 0 B, ran 0.03-0.04 us slower than 1 B, with ~100 more faults per
// rank. The advice only maps pages, never changes their bytes; before
// Linux 5.14 it fails, and the faults come as before.
func (m *Module) populateBox(rank int, idx uint64, advice int) {
	page := int64(os.Getpagesize())
	off := m.boxOffset(rank, idx)
	mem := m.seg.Bytes()
	lo, hi := off&^(page-1), min((off+boxCtlSize+int64(m.boxSize)+page-1)&^(page-1), int64(len(mem)))
	_ = unix.Madvise(mem[lo:hi], advice)
}

// boxReady reports whether one of our boxes has a record waiting. Called
// by Sleep after arming (see boxOut.publish for the pairing).
func (m *Module) boxReady() bool {
	for _, b := range m.boxList[:m.nBoxIn.Load()] {
		if b.ready() {
			return true
		}
	}
	return false
}

// setupBox gives p a box once we have sent it btl_sm_fbox_threshold
// messages: it takes the next free box of p's region (one atomic add on
// p's control block, once per pair) and announces it in p's FIFO. From the
// announcement on, every data message to p carries the pair's sequence
// number. Called with p.mu held and p's pending queue empty.
func (m *Module) setupBox(p *peer) {
	if p.boxIdx == 0 {
		if m.nboxes == 0 {
			p.noBox = true
			return
		}
		idx := p.ctl.boxNext.Add(1) - 1
		if idx >= uint64(m.nboxes) {
			p.noBox = true
			return
		}
		p.boxIdx = idx + 1
	}
	e, h, ok := p.claim(m.mask + 1)
	if !ok {
		return // the FIFO is full: announce with a later send
	}
	m.populateBox(p.rank, p.boxIdx-1, unix.MADV_POPULATE_WRITE)
	b := m.boxAt(p.rank, p.boxIdx-1)
	b.ctl.owner.Store(uint64(m.rank) + 1) // the receiver checks it: a forged announcement names a box nobody took
	e.setHeader(m.rank, kindBox, 0, 0, int64(p.boxIdx-1), 0)
	m.publish(p, e, h)
	p.out = &boxOut{boxRing: b}
}
