package tcp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/btltest"
)

// placeConfig: fragments of 8 MiB, more than loopback's socket buffers
// hold, so a frame's payload arrives in pieces after its header.
func placeConfig() Config {
	c := testConfig()
	c.EagerLimit, c.MaxSendSize = 64<<10, 8<<20
	return c
}

// placeHdr is the test's PML header: the payload's offset in the
// receiver's buffer, and whether the receiver should decline to place it.
func placeHdr(off int, decline bool) []byte {
	h := make([]byte, 9)
	binary.LittleEndian.PutUint64(h, uint64(off))
	if decline {
		h[8] = 1
	}
	return h
}

// placeBytes is a payload whose every byte depends on its position.
func placeBytes(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13 + i>>8 + seed)
	}
	return b
}

// TestPlace: FRAG payloads go straight into the place the receiver gives,
// arriving in pieces (short reads); a declined one reaches the RecvFunc
// whole; small frames sent between them are delivered in Send order
// around the landed calls.
func TestPlace(t *testing.T) {
	mods := mesh(t, 2, placeConfig(), NewSecret())
	big := 8 << 20
	dst := make([]byte, 3*big)
	var events []string
	var declined []byte
	mods[1].RegisterPlace(btl.TagPMLFrag, func(src int, hdr []byte, n int) []byte {
		if src != 0 || len(hdr) != 9 || hdr[8] == 1 {
			return nil
		}
		off := int(binary.LittleEndian.Uint64(hdr))
		return dst[off : off+n]
	}, func(src int, hdr []byte, n int) {
		events = append(events, fmt.Sprintf("landed %d+%d", binary.LittleEndian.Uint64(hdr), n))
	})
	mods[1].Register(btl.TagPMLFrag, func(src int, data []byte) {
		events = append(events, fmt.Sprintf("frag %d bytes", len(data)-9))
		if len(data)-9 == 8<<20 {
			declined = append([]byte(nil), data[9:]...)
		}
	})
	mods[1].Register(btl.TagPMLMatch, func(src int, data []byte) { events = append(events, "match "+string(data)) })
	sends := []struct {
		tag     btl.Tag
		hdr     []byte
		payload []byte
	}{
		{btl.TagPMLFrag, placeHdr(0, false), placeBytes(big, 1)},
		{btl.TagPMLMatch, []byte("a"), nil},
		{btl.TagPMLFrag, placeHdr(0, true), placeBytes(big, 2)},
		{btl.TagPMLFrag, placeHdr(big, false), placeBytes(big, 3)},
		{btl.TagPMLFrag, placeHdr(2*big, false), placeBytes(5<<10, 4)},
		{btl.TagPMLMatch, []byte("b"), nil},
	}
	done := make([]rec, len(sends))
	for i, s := range sends {
		if _, err := mods[0].Send(1, s.tag, s.hdr, s.payload, &done[i]); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"landed 0+8388608", "match a", "frag 8388608 bytes", "landed 8388608+8388608", "match b"}
	deadline := time.Now().Add(btltest.Timeout)
	for len(events) < len(want)+1 && time.Now().Before(deadline) {
		mods[0].Progress()
		mods[1].Progress()
	}
	// The 5 KiB frag may come whole (delivered to the RecvFunc) or in
	// pieces (placed): either is right.
	got := append([]string(nil), events...)
	for i, e := range got {
		if e == "landed 16777216+5120" || e == "frag 5120 bytes" {
			got = append(got[:i], got[i+1:]...)
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %q; want %q (and the 5 KiB frag's, before match b)", events, want)
	}
	if !bytes.Equal(dst[:big], placeBytes(big, 1)) || !bytes.Equal(dst[big:2*big], placeBytes(big, 3)) {
		t.Error("placed payloads differ from those sent")
	}
	if !bytes.Equal(declined, placeBytes(big, 2)) {
		t.Error("the declined payload differs from the one sent")
	}
}

// TestPlaceLost: a peer lost in the middle of a placed payload is reported
// once, landed is never called, and the module writes no more into the
// place.
func TestPlaceLost(t *testing.T) {
	mods := mesh(t, 2, placeConfig(), NewSecret())
	big := 8 << 20
	dst := make([]byte, big)
	landed := 0
	var lost []int
	mods[1].OnPeerLost(func(p int) { lost = append(lost, p) })
	mods[1].RegisterPlace(btl.TagPMLFrag, func(src int, hdr []byte, n int) []byte { return dst[:n] },
		func(src int, hdr []byte, n int) { landed++ })
	mods[1].Register(btl.TagPMLFrag, func(src int, data []byte) { t.Error("the frame was delivered whole") })
	var c rec
	if _, err := mods[0].Send(1, btl.TagPMLFrag, placeHdr(0, false), placeBytes(big, 1), &c); err != nil {
		t.Fatal(err)
	}
	p := &mods[1].peers[0]
	deadline := time.Now().Add(btltest.Timeout)
	for p.pl.got == 0 && time.Now().Before(deadline) {
		mods[1].Progress()
	}
	if p.pl.dst == nil || p.pl.got == 0 || p.pl.got >= big {
		t.Fatalf("placing state %d of %d bytes; want a payload in progress", p.pl.got, len(p.pl.dst))
	}
	mods[0].Close() // the rest of the payload never comes
	for len(lost) == 0 && time.Now().Before(deadline) {
		mods[1].Progress()
	}
	if len(lost) != 1 || lost[0] != 0 || landed != 0 {
		t.Fatalf("lost reports %v, landed calls %d; want [0] and 0", lost, landed)
	}
	if p.pl.dst != nil {
		t.Error("the place is still held after the loss was reported")
	}
	snap := append([]byte(nil), dst...)
	for i := 0; i < 10; i++ {
		mods[1].Progress()
	}
	if !bytes.Equal(snap, dst) || len(lost) != 1 {
		t.Error("the place changed, or the loss was reported again, after the report")
	}
}

// TestPlaceSplits drives the receiver's state between a frame's header and
// its payload byte by byte: a stream of FRAGs (placed or declined) and
// small frames between them is written raw into the connection in pieces
// (every byte alone, cut around each frame boundary, random cuts), the
// receiver polling after each piece. Whatever the cuts, every frame comes
// out once, in order (a FRAG placed or delivered whole, as its pieces
// fall), with its bytes.
func TestPlaceSplits(t *testing.T) {
	mods := mesh(t, 2, testConfig(), NewSecret())
	mods[1].placeMin = 4 << 10 // frames of a few KiB, so that cutting at every byte stays quick
	placeMin := mods[1].placeMin
	type frame struct {
		tag     btl.Tag
		hdr     []byte
		payload []byte
	}
	frames := []frame{
		{btl.TagPMLFrag, placeHdr(0, false), placeBytes(20000, 1)},
		{btl.TagPMLMatch, []byte("x"), nil},
		{btl.TagPMLFrag, placeHdr(20000, false), placeBytes(6000, 2)},
		{btl.TagPMLFrag, placeHdr(0, true), placeBytes(10000, 3)},
		{btl.TagPMLFrag, placeHdr(26000, false), placeBytes(placeMin+1, 4)},
		{btl.TagPMLMatch, []byte("y"), placeBytes(100, 5)},
		{btl.TagPMLFrag, placeHdr(26000+placeMin+1, false), placeBytes(30000, 6)},
	}
	var stream []byte
	var ends []int // where each frame ends in stream
	want := make([]byte, 26000+placeMin+1+30000)
	var wantEvents []string
	for _, f := range frames {
		var h [frameHdr]byte
		putFrameHdr(h[:], f.tag, len(f.hdr), len(f.payload))
		stream = append(append(append(stream, h[:]...), f.hdr...), f.payload...)
		ends = append(ends, len(stream))
		switch {
		case f.tag == btl.TagPMLMatch:
			wantEvents = append(wantEvents, "match "+string(f.hdr))
		case f.hdr[8] == 1:
			wantEvents = append(wantEvents, "declined")
		default:
			off := int(binary.LittleEndian.Uint64(f.hdr))
			copy(want[off:], f.payload)
			wantEvents = append(wantEvents, fmt.Sprint("frag ", off))
		}
	}
	dst := make([]byte, len(want))
	var events []string
	placed := 0
	mods[1].RegisterPlace(btl.TagPMLFrag, func(src int, hdr []byte, n int) []byte {
		if hdr[8] == 1 {
			return nil
		}
		off := int(binary.LittleEndian.Uint64(hdr))
		return dst[off : off+n]
	}, func(src int, hdr []byte, n int) {
		placed++
		events = append(events, fmt.Sprint("frag ", binary.LittleEndian.Uint64(hdr)))
	})
	mods[1].Register(btl.TagPMLFrag, func(src int, data []byte) {
		if data[8] == 1 {
			if !bytes.Equal(data[9:], frames[3].payload) {
				t.Error("the declined FRAG's payload differs from the one sent")
			}
			events = append(events, "declined")
			return
		}
		off := int(binary.LittleEndian.Uint64(data))
		copy(dst[off:], data[9:])
		events = append(events, fmt.Sprint("frag ", off))
	})
	mods[1].Register(btl.TagPMLMatch, func(src int, data []byte) {
		if string(data[1:]) != string(placeBytes(len(data)-1, 5)) {
			t.Error("a small frame's payload differs from the one sent")
		}
		events = append(events, "match "+string(data[:1]))
	})
	fd := mods[0].peers[1].mu.fd
	write := func(b []byte) {
		for len(b) > 0 {
			k, err := unix.Write(fd, b)
			if err == unix.EAGAIN {
				mods[1].Progress()
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			b = b[k:]
			mods[1].Progress()
		}
	}
	cutsNear := func(d int) []int { // around every frame boundary
		var c []int
		for _, e := range ends {
			for _, x := range []int{e - d, e + d} {
				if x > 0 && x < len(stream) {
					c = append(c, x)
				}
			}
		}
		return c
	}
	patterns := map[string][]int{"whole": nil}
	for _, d := range []int{1, frameHdr - 1, frameHdr, frameHdr + 1, frameHdr + 9, frameHdr + 10, 100, placeMin} {
		patterns[fmt.Sprint("boundary±", d)] = cutsNear(d)
	}
	every := make([]int, len(stream)-1)
	for i := range every {
		every[i] = i + 1
	}
	patterns["every byte"] = every
	rng := rand.New(rand.NewPCG(11, 12))
	for s := range 20 {
		var c []int
		for x := rng.IntN(9000) + 1; x < len(stream); x += rng.IntN(9000) + 1 {
			c = append(c, x)
		}
		patterns[fmt.Sprint("random ", s)] = c
	}
	for name, cuts := range patterns {
		clear(dst)
		events = events[:0]
		prev := 0
		for _, c := range append(slices.Sorted(slices.Values(cuts)), len(stream)) {
			if c > prev {
				write(stream[prev:c])
				prev = c
			}
		}
		deadline := time.Now().Add(btltest.Timeout)
		for len(events) < len(wantEvents) && time.Now().Before(deadline) {
			mods[1].Progress()
		}
		if fmt.Sprint(events) != fmt.Sprint(wantEvents) || !bytes.Equal(dst, want) {
			t.Fatalf("cuts %s: events %q (want %q), placed bytes right: %v", name, events, wantEvents, bytes.Equal(dst, want))
		}
	}
	if placed == 0 {
		t.Error("no FRAG was placed")
	}
	if p := &mods[1].peers[0]; p.pl.dst != nil || p.rlen != 0 || mods[1].peers[0].lost.Load() {
		t.Errorf("after the last frame: placing %d bytes, %d bytes buffered, lost %v", len(p.pl.dst), p.rlen, p.lost.Load())
	}
}
