package tcp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

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
