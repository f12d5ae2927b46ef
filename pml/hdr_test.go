package pml

import (
	"bytes"
	"testing"

	"github.com/gorun-mpi/gorun/btl"
)

// Headers round-trip through encode and decode.
func TestHeaderRoundTrip(t *testing.T) {
	var b [64]byte
	h := matchHdr{ctx: 7, tag: 12345, seq: 1<<32 - 1, flags: flagSync, sreq: 99}
	payload := []byte("abc")
	frag := append(h.encodeMatch(b[:]), payload...)
	var g matchHdr
	got, err := decodeMatch(frag, &g)
	if err != nil || string(got) != "abc" || g.ctx != 7 || g.tag != 12345 || g.seq != 1<<32-1 || g.sreq != 99 {
		t.Fatalf("MATCH: %+v %q %v", g, got, err)
	}
	h = matchHdr{ctx: 1, tag: 0, seq: 3, flags: flagRget, sreq: 5, size: 1 << 20, addr: 0xdeadbeef}
	frag = h.encodeRndv(b[:])
	if _, err := decodeRndv(frag, &g); err != nil || g != h {
		t.Fatalf("RNDV: %+v %v, want %+v", g, err, h)
	}
	s, r, f, w, a, err := decodeAck(encodeAck(b[:], 1, 2, 3, 4))
	if err != nil || s != 1 || r != 2 || f != 3 || w != 4 || a != 0 {
		t.Fatalf("ACK: %d %d %d %d %#x %v", s, r, f, w, a, err)
	}
	if _, _, _, _, _, err := decodeAck(encodeAck(b[:], 1, 2, 5, 4)); err == nil {
		t.Error("ACK asking for a range that ends before it starts accepted")
	}
	s, r, f, w, a, err = decodeAck(encodeAckSplit(b[:], 1, 2, 3, 4, 0x7f0012345000))
	if err != nil || s != 1 || r != 2 || f != 3 || w != 4 || a != 0x7f0012345000 {
		t.Fatalf("split ACK: %d %d %d %d %#x %v", s, r, f, w, a, err)
	}
	for _, bad := range [][]byte{encodeAckSplit(b[:], 1, 2, 3, 4, 0), encodeAckSplit(b[:], 1, 2, 4, 4, 0x1000), encodeAckSplit(b[:], 1, 2, 5, 4, 0x1000)} {
		if _, _, _, _, _, err := decodeAck(bad); err == nil {
			t.Errorf("split ACK %x accepted: no address, or an empty or backward range", bad)
		}
	}
	if rr, off, n, err := decodeWrote(encodeWrote(b[:], 6, 7, 8)); err != nil || rr != 6 || off != 7 || n != 8 {
		t.Fatalf("wrote FIN: %d %d %d %v", rr, off, n, err)
	}
	if _, _, _, err := decodeWrote(encodeFin(b[:], 6)); err == nil {
		t.Error("an 8-byte FIN decoded as a wrote FIN")
	}
	// A FIN is 8 bytes (encodeFin) or 16 ending in a zero word (finWords,
	// as the BTL sends a btl.Header16).
	fw := finWords(1<<40 | 9).Bytes()
	for _, c := range []struct {
		b    []byte
		sreq uint64
		ok   bool
	}{
		{encodeFin(b[:], 1<<40|9), 1<<40 | 9, true},
		{fw[:], 1<<40 | 9, true},
		{append(fw[:8:8], 0, 0, 0, 0, 0, 0, 0, 1), 0, false},
		{fw[:12], 0, false},
		{fw[:7], 0, false},
		{append(fw[:], 0), 0, false},
	} {
		sreq, err := decodeFin(c.b)
		if (err == nil) != c.ok || c.ok && sreq != c.sreq {
			t.Errorf("FIN %x: sreq %#x, error %v; want %#x, ok %v", c.b, sreq, err, c.sreq, c.ok)
		}
	}
	rr, off, pl, err := decodeFrag(append(encodeFrag(b[:], 4, 5), 'x'))
	if err != nil || rr != 4 || off != 5 || string(pl) != "x" {
		t.Fatalf("FRAG: %d %d %q %v", rr, off, pl, err)
	}
}

// matchWords is encodeMatch's 16 bytes, word for word, and what the BTL
// turns back into bytes (Header16.Bytes) decodes to the same envelope.
func TestMatchWords(t *testing.T) {
	for _, h := range []matchHdr{
		{},
		{ctx: 1, tag: 2, seq: 3},
		{ctx: 1<<32 - 1, tag: 1<<31 - 1, seq: 1<<32 - 1},
		{ctx: 0x01020304, tag: 0x05060708, seq: 0x090a0b0c, flags: flagRget},
	} {
		var b [matchHdrLen]byte
		enc := h.encodeMatch(b[:])
		w := h.matchWords()
		if got := btl.Header16Of(enc); got != w {
			t.Errorf("%+v: matchWords %#x, encodeMatch's bytes %#x", h, w, got)
		}
		hb := w.Bytes()
		if !bytes.Equal(hb[:], enc) {
			t.Errorf("%+v: Header16.Bytes %x, encodeMatch %x", h, hb, enc)
		}
		var g matchHdr
		g.getEnvelope(hb[:])
		if g.ctx != h.ctx || g.tag != h.tag || g.seq != h.seq || g.flags != h.flags {
			t.Errorf("%+v: decoded %+v", h, g)
		}
	}
}

// Malformed headers are errors, never panics, and never claim more payload
// than the fragment holds.
func TestHeaderRejects(t *testing.T) {
	var h matchHdr
	bad := [][]byte{nil, make([]byte, 15), append(make([]byte, 12), 1, 0, 0, 0)} // short; sync flag without sreq
	for i, b := range bad {
		if _, err := decodeMatch(b, &h); err == nil {
			t.Errorf("MATCH case %d accepted", i)
		}
	}
	var b [64]byte
	r := matchHdr{size: 2}
	frag := append(r.encodeRndv(b[:]), 1, 2, 3) // chunk longer than the message
	if _, err := decodeRndv(frag, &h); err == nil {
		t.Error("RNDV with a chunk longer than its message accepted")
	}
	neg := matchHdr{tag: -5}
	if _, err := decodeMatch(neg.encodeMatch(b[:]), &h); err == nil {
		t.Error("MATCH with a negative tag accepted")
	}
}

// FuzzDecodeHeader: no input makes a decoder panic, and what decodes is
// consistent with the bytes it came from.
func FuzzDecodeHeader(f *testing.F) {
	var b [64]byte
	h := matchHdr{ctx: 1, tag: 2, seq: 3, flags: flagSync, sreq: 4}
	f.Add(h.encodeMatch(b[:]))
	h = matchHdr{ctx: 1, tag: 2, seq: 3, sreq: 4, size: 10}
	f.Add(append(h.encodeRndv(b[:]), 1, 2))
	f.Add(encodeAck(b[:], 1, 2, 3, 4))
	f.Add(encodeFrag(b[:], 1, 2))
	fw := finWords(3).Bytes()
	f.Add(fw[:])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var h matchHdr
		if p, err := decodeMatch(data, &h); err == nil {
			if len(p) > len(data) || h.tag < 0 || int(h.size) != len(p) {
				t.Fatalf("MATCH decoded inconsistently: %+v payload %d of %d", h, len(p), len(data))
			}
		}
		if c, err := decodeRndv(data, &h); err == nil && uint64(len(c)) > h.size {
			t.Fatalf("RNDV chunk %d beyond message %d", len(c), h.size)
		}
		decodeAck(data)
		decodeFrag(data)
		decodeFin(data)
		decodeWrote(data)
		decodeCtl(data)
	})
}
