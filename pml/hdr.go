package pml

import (
	"encoding/binary"
	"fmt"

	"github.com/gorun-mpi/gorun/btl"
)

// Wire headers, little endian, fixed sizes. The BTL tag says which header a
// fragment starts with.
//
//	MATCH (btl.TagPMLMatch) 16 B: ctx u32 | tag u32 | seq u32 | flags u32 [| sreq u64 if flagSync]
//	RNDV  (btl.TagPMLRndv)  40 B: ctx u32 | tag u32 | seq u32 | flags u32 | sreq u64 | len u64 | addr u64
//	ACK   (btl.TagPMLAck)   32 B: sreq u64 | rreq u64 | from u64 | want u64
//	                        40 B: ... | addr u64 (split: write [from, want) at addr)
//	FRAG  (btl.TagPMLFrag)  16 B: rreq u64 | off u64
//	FIN   (btl.TagPMLFin)    8 B: sreq u64 (the receiver is done with the send's buffer)
//	                        24 B: rreq u64 | off u64 | n u64 (the sender wrote n bytes at off)
//	CTL   (btl.TagPMLCtl)    8 B: kind u32 | arg u32
const (
	matchHdrLen     = 16
	matchSyncHdrLen = 24
	rndvHdrLen      = 40
	ackHdrLen       = 32
	ackSplitHdrLen  = 40
	fragHdrLen      = 16
	finHdrLen       = 8
	wroteHdrLen     = 24
	ctlHdrLen       = 8
)

// Header flags (MATCH and RNDV).
const (
	flagSync   = 1 << iota // sender waits for the receiver's match ACK
	flagRget               // receiver may read the payload at addr (single copy)
	flagStream             // RNDV: the message is part of a one-way stream (its read may be split from limits.splitStream)
)

// CTL kinds.
const (
	ctlCredit = 1 // receiver → sender: arg more bytes of eager credit
)

// matchHdr is the envelope shared by MATCH and RNDV.
type matchHdr struct {
	ctx   uint32
	tag   int32
	seq   uint32
	flags uint32
	sreq  uint64 // MATCH+flagSync, RNDV
	size  uint64 // RNDV: full message length
	addr  uint64 // RNDV+flagRget: sender's buffer address
}

var le = binary.LittleEndian

func (h *matchHdr) encodeMatch(b []byte) []byte {
	b = b[:matchHdrLen]
	h.putEnvelope(b)
	if h.flags&flagSync != 0 {
		b = b[:matchSyncHdrLen]
		le.PutUint64(b[16:], h.sreq)
	}
	return b
}

// matchWords is encodeMatch's header, by value, for a plain MATCH (no
// flagSync: no sreq), as btl.TrySender takes it.
func (h *matchHdr) matchWords() btl.Header16 {
	return btl.Header16{
		Lo: uint64(h.ctx) | uint64(uint32(h.tag))<<32,
		Hi: uint64(h.seq) | uint64(h.flags)<<32,
	}
}

func (h *matchHdr) encodeRndv(b []byte) []byte {
	b = b[:rndvHdrLen]
	h.putEnvelope(b)
	le.PutUint64(b[16:], h.sreq)
	le.PutUint64(b[24:], h.size)
	le.PutUint64(b[32:], h.addr)
	return b
}

// putEnvelope and getEnvelope write and read the 16 bytes that MATCH and
// RNDV headers share: ctx, tag, seq, flags. b holds at least 16 bytes.
func (h *matchHdr) putEnvelope(b []byte) {
	le.PutUint32(b[0:], h.ctx)
	le.PutUint32(b[4:], uint32(h.tag))
	le.PutUint32(b[8:], h.seq)
	le.PutUint32(b[12:], h.flags)
}

func (h *matchHdr) getEnvelope(b []byte) {
	h.ctx = le.Uint32(b[0:])
	h.tag = int32(le.Uint32(b[4:]))
	h.seq = le.Uint32(b[8:])
	h.flags = le.Uint32(b[12:])
}

// plainMatch is decodeMatch's common case, which inlines (onMatch, the
// callback of every eager message, takes it first): it decodes b into h
// and reports true when b is a MATCH fragment without flags and with a
// valid tag, whose payload is then b[matchHdrLen:]. On false, h holds
// nothing to use.
func (h *matchHdr) plainMatch(b []byte) bool {
	if len(b) < matchHdrLen {
		return false
	}
	h.getEnvelope(b)
	h.sreq, h.size, h.addr = 0, uint64(len(b)-matchHdrLen), 0
	return h.flags == 0 && h.tag >= 0
}

// decodeMatch parses a MATCH fragment and returns the payload.
func decodeMatch(b []byte, h *matchHdr) ([]byte, error) {
	if h.plainMatch(b) {
		return b[matchHdrLen:], nil
	}
	if len(b) < matchHdrLen {
		return nil, fmt.Errorf("pml: MATCH fragment of %d bytes, want at least %d", len(b), matchHdrLen)
	}
	h.getEnvelope(b)
	h.sreq, h.size, h.addr = 0, 0, 0
	n := matchHdrLen
	if h.flags&flagSync != 0 {
		if len(b) < matchSyncHdrLen {
			return nil, fmt.Errorf("pml: sync MATCH fragment of %d bytes, want at least %d", len(b), matchSyncHdrLen)
		}
		h.sreq = le.Uint64(b[16:])
		n = matchSyncHdrLen
	}
	if h.tag < 0 || h.flags&^flagSync != 0 {
		return nil, fmt.Errorf("pml: MATCH header with tag %d flags %#x", h.tag, h.flags)
	}
	h.size = uint64(len(b) - n)
	return b[n:], nil
}

// decodeRndv parses a RNDV fragment and returns the first chunk.
func decodeRndv(b []byte, h *matchHdr) ([]byte, error) {
	if len(b) < rndvHdrLen {
		return nil, fmt.Errorf("pml: RNDV fragment of %d bytes, want at least %d", len(b), rndvHdrLen)
	}
	h.getEnvelope(b)
	h.sreq = le.Uint64(b[16:])
	h.size = le.Uint64(b[24:])
	h.addr = le.Uint64(b[32:])
	chunk := b[rndvHdrLen:]
	if h.tag < 0 || h.flags&^(flagSync|flagRget|flagStream) != 0 || uint64(len(chunk)) > h.size || h.size > 1<<47 {
		return nil, fmt.Errorf("pml: RNDV header with tag %d flags %#x length %d and a chunk of %d bytes", h.tag, h.flags, h.size, len(chunk))
	}
	return chunk, nil
}

// encodeAck: the receive rreq takes bytes [from, want) of send sreq as
// FRAGs (from == want: nothing more; the ACK only completes the send).
func encodeAck(b []byte, sreq, rreq, from, want uint64) []byte {
	b = b[:ackHdrLen]
	le.PutUint64(b[0:], sreq)
	le.PutUint64(b[8:], rreq)
	le.PutUint64(b[16:], from)
	le.PutUint64(b[24:], want)
	return b
}

// encodeAckSplit: the receive rreq reads bytes up to from of send sreq
// itself and asks the sender to write [from, want) into its buffer at
// addr (where byte from goes), then to say so with a wrote FIN.
func encodeAckSplit(b []byte, sreq, rreq, from, want uint64, addr uintptr) []byte {
	b = b[:ackSplitHdrLen]
	encodeAck(b, sreq, rreq, from, want)
	le.PutUint64(b[32:], uint64(addr))
	return b
}

// decodeAck parses an ACK; addr is 0 unless it is a split one.
func decodeAck(b []byte) (sreq, rreq, from, want, addr uint64, err error) {
	if len(b) != ackHdrLen && len(b) != ackSplitHdrLen {
		return 0, 0, 0, 0, 0, fmt.Errorf("pml: ACK fragment of %d bytes, want %d or %d", len(b), ackHdrLen, ackSplitHdrLen)
	}
	sreq, rreq, from, want = le.Uint64(b[0:]), le.Uint64(b[8:]), le.Uint64(b[16:]), le.Uint64(b[24:])
	if len(b) == ackSplitHdrLen {
		if addr = le.Uint64(b[32:]); addr == 0 || from == want {
			return 0, 0, 0, 0, 0, fmt.Errorf("pml: split ACK for bytes %d to %d at address %#x", from, want, addr)
		}
	}
	if from > want {
		return 0, 0, 0, 0, 0, fmt.Errorf("pml: ACK asks for bytes %d to %d", from, want)
	}
	return sreq, rreq, from, want, addr, nil
}

func encodeFrag(b []byte, rreq, off uint64) []byte {
	b = b[:fragHdrLen]
	le.PutUint64(b[0:], rreq)
	le.PutUint64(b[8:], off)
	return b
}

func decodeFrag(b []byte) (rreq, off uint64, payload []byte, err error) {
	if len(b) < fragHdrLen {
		return 0, 0, nil, fmt.Errorf("pml: FRAG fragment of %d bytes, want at least %d", len(b), fragHdrLen)
	}
	return le.Uint64(b[0:]), le.Uint64(b[8:]), b[fragHdrLen:], nil
}

func encodeFin(b []byte, sreq uint64) []byte {
	b = b[:finHdrLen]
	le.PutUint64(b[0:], sreq)
	return b
}

// finWords is a FIN as a btl.Header16, sent by btl.TrySender: sreq and a
// zero word (16 bytes, which decodeFin takes as well as encodeFin's 8).
func finWords(sreq uint64) btl.Header16 { return btl.Header16{Lo: sreq} }

func decodeFin(b []byte) (uint64, error) {
	if len(b) != finHdrLen && (len(b) != 16 || le.Uint64(b[8:]) != 0) {
		return 0, fmt.Errorf("pml: FIN fragment of %d bytes, want %d, or 16 ending in a zero word", len(b), finHdrLen)
	}
	return le.Uint64(b), nil
}

// encodeWrote: the sender has written n bytes at off of receive rreq's
// buffer (the answer to a split ACK).
func encodeWrote(b []byte, rreq, off, n uint64) []byte {
	b = b[:wroteHdrLen]
	le.PutUint64(b[0:], rreq)
	le.PutUint64(b[8:], off)
	le.PutUint64(b[16:], n)
	return b
}

func decodeWrote(b []byte) (rreq, off, n uint64, err error) {
	if len(b) != wroteHdrLen {
		return 0, 0, 0, fmt.Errorf("pml: wrote FIN fragment of %d bytes, want %d", len(b), wroteHdrLen)
	}
	return le.Uint64(b[0:]), le.Uint64(b[8:]), le.Uint64(b[16:]), nil
}

func encodeCtl(b []byte, kind, arg uint32) []byte {
	b = b[:ctlHdrLen]
	le.PutUint32(b[0:], kind)
	le.PutUint32(b[4:], arg)
	return b
}

func decodeCtl(b []byte) (kind, arg uint32, err error) {
	if len(b) != ctlHdrLen {
		return 0, 0, fmt.Errorf("pml: CTL fragment of %d bytes, want %d", len(b), ctlHdrLen)
	}
	return le.Uint32(b[0:]), le.Uint32(b[4:]), nil
}
