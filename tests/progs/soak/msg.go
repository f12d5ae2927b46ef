package main

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
)

// hdrLen is the size of the header at the front of every message of at
// least hdrLen bytes. Shorter messages ("tiny") carry tinyPattern instead.
const hdrLen = 40

const (
	magic   = 0x534f414b // "SOAK"
	tinyTag = 9          // tag of every message shorter than hdrLen
	maxSize = 4 << 20    // largest message
	srMax   = 256 << 10  // largest Sendrecv message
)

// dataTags are the tags of headed messages.
var dataTags = []int{0, 1, 2, 3}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is the front of a message. Layout (little endian): magic u32, src
// u32, dst u32, comm u32, tag u32, round u32, length u32 (payload bytes
// after the header), crc u32 (CRC-32C of the payload), seq u64.
type header struct {
	src, dst, comm, tag, round, length, crc uint32
	seq                                     uint64
}

func (h header) put(b []byte) {
	le := binary.LittleEndian
	le.PutUint32(b[0:], magic)
	le.PutUint32(b[4:], h.src)
	le.PutUint32(b[8:], h.dst)
	le.PutUint32(b[12:], h.comm)
	le.PutUint32(b[16:], h.tag)
	le.PutUint32(b[20:], h.round)
	le.PutUint32(b[24:], h.length)
	le.PutUint32(b[28:], h.crc)
	le.PutUint64(b[32:], h.seq)
}

// parseHeader returns the header at the front of b (len(b) >= hdrLen) and
// whether its magic is right.
func parseHeader(b []byte) (header, bool) {
	le := binary.LittleEndian
	h := header{
		src: le.Uint32(b[4:]), dst: le.Uint32(b[8:]), comm: le.Uint32(b[12:]),
		tag: le.Uint32(b[16:]), round: le.Uint32(b[20:]), length: le.Uint32(b[24:]),
		crc: le.Uint32(b[28:]), seq: le.Uint64(b[32:]),
	}
	return h, le.Uint32(b[0:]) == magic
}

// tinyPattern is byte j of a tiny message of n bytes from src.
func tinyPattern(src, n, j int) byte { return byte(src*37 + n*11 + j*3 + 1) }

// msgSpec is one message a rank sends in a round.
type msgSpec struct {
	dst, size, tag int
	method         sendMethod
	off            int    // payload offset in the sender's noise
	seq            uint64 // headed messages only
}

type sendMethod int

const (
	mSend sendMethod = iota
	mSsend
	mIsend
	mIssend
	nMethods
)

var methodNames = [nMethods]string{"Send", "Ssend", "Isend", "Issend"}

// pickMethod: Isend 35 %, Ssend 25 %, Send 20 %, Issend 20 %.
func pickMethod(r *rand.Rand) sendMethod {
	switch x := r.IntN(100); {
	case x < 35:
		return mIsend
	case x < 60:
		return mSsend
	case x < 80:
		return mSend
	default:
		return mIssend
	}
}

// pickSize draws a message size (header included) of at most limit bytes:
// mostly small, many around the protocol boundaries (sm eager 4 KiB, self
// eager 16 KiB, sm fragment 32 KiB, self fragment 64 KiB, the 256 KiB
// single-copy limit of the rget run), a few up to 4 MiB.
func pickSize(r *rand.Rand, limit int) int {
	near := func(b int) int { return b - 8 + r.IntN(17) }
	var n int
	switch x := r.IntN(1000); {
	case x < 50:
		n = r.IntN(hdrLen) // tiny, 0 included
	case x < 500:
		n = hdrLen + r.IntN(1024-hdrLen+1)
	case x < 640:
		n = near(4096)
	case x < 690:
		n = near(16 << 10)
	case x < 770:
		n = near(32 << 10)
	case x < 800:
		n = near(64 << 10)
	case x < 820:
		n = near(256 << 10)
	case x < 910:
		n = 1025 + r.IntN(64<<10-1025)
	case x < 975:
		n = 64<<10 + r.IntN(448<<10)
	case x < 990:
		n = 512<<10 + r.IntN(maxSize-512<<10)
	default:
		n = maxSize
	}
	return min(n, limit)
}

// build returns the bytes of message m from src on comm in round, its
// payload taken from noise.
func build(m *msgSpec, src, comm, round int, noise []byte) []byte {
	b := make([]byte, m.size)
	if m.size < hdrLen {
		for j := range b {
			b[j] = tinyPattern(src, m.size, j)
		}
		return b
	}
	payload := b[hdrLen:]
	copy(payload, noise[m.off:])
	header{
		src: uint32(src), dst: uint32(m.dst), comm: uint32(comm), tag: uint32(m.tag),
		round: uint32(round), length: uint32(len(payload)),
		crc: crc32.Checksum(payload, castagnoli), seq: m.seq,
	}.put(b)
	return b
}
