package memcpy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// Copy matches copy() at every length around the thresholds, at odd
// alignments, and never writes past min(len(dst), len(src)).
func TestCopyMatchesBuiltin(t *testing.T) {
	src := make([]byte, 70000)
	for i := range src {
		src[i] = byte(i*7 + 3)
	}
	for _, n := range []int{0, 1, 7, 255, 1023, 1024, 1025, 2047, 2048, 2049, 4096, 32768 + 5, 65536} {
		for _, off := range []int{0, 1, 3} {
			dst := make([]byte, n+off+16)
			want := make([]byte, n+off+16)
			got := Copy(dst[off:off+n], src[off:])
			copy(want[off:off+n], src[off:])
			if got != n || !bytes.Equal(dst, want) {
				t.Fatalf("Copy of %d bytes at offset %d: returned %d, bytes differ: %v", n, off, got, !bytes.Equal(dst, want))
			}
		}
	}
	if got := Copy(make([]byte, 3000), src[:10]); got != 10 {
		t.Fatalf("Copy with a short source returned %d, want 10", got)
	}
}

func BenchmarkCopy(b *testing.B) {
	for _, n := range []int{4 << 10, 32 << 10, 256 << 10} {
		src, dst := make([]byte, n), make([]byte, n)
		b.Run(fmt.Sprint("memcpy/", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				Copy(dst, src)
			}
		})
		b.Run(fmt.Sprint("builtin/", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				copy(dst, src)
			}
		})
	}
}

// Small copies exactly len(src) bytes (0..SmallMax) at any alignment of
// either side, and writes nothing around them.
func TestSmall(t *testing.T) {
	src := make([]byte, 64)
	for i := range src {
		src[i] = byte(i*13 + 1)
	}
	for n := 0; n <= SmallMax; n++ {
		for _, so := range []int{0, 1, 5, 8} {
			for _, do := range []int{0, 3, 7} {
				dst := bytes.Repeat([]byte{0xee}, 64)
				want := bytes.Repeat([]byte{0xee}, 64)
				Small(dst[8+do:8+do+n+2], src[so:so+n])
				copy(want[8+do:], src[so:so+n])
				if !bytes.Equal(dst, want) {
					t.Fatalf("Small of %d bytes (src offset %d, dst offset %d):\n got %x\nwant %x", n, so, do, dst, want)
				}
			}
		}
	}
}

// TestWords16 checks Words16 against a reference at every length and at
// the edges of a page whose neighbours are not readable: the words hold
// src's bytes, little-endian, zero beyond them, and nothing outside src is
// read (a read past either end would fault).
func TestWords16(t *testing.T) {
	pg := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*pg, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[:pg], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[2*pg:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	page := mem[pg : 2*pg]
	for i := range page {
		page[i] = byte(i*13 + 5)
	}
	for n := 0; n <= TinyMax; n++ {
		for _, at := range []int{0, 1, 7, pg / 2, pg - n} {
			src := page[at : at+n : at+n]
			var want [16]byte
			copy(want[:], src)
			lo, hi := Words16(src)
			if lo != binary.LittleEndian.Uint64(want[:8]) || hi != binary.LittleEndian.Uint64(want[8:]) {
				t.Errorf("%d bytes at %d: got %#x %#x, want % x", n, at, lo, hi, want)
			}
		}
	}
}

// TestStores: Store16 and Store32 write their words little-endian at an
// unaligned p and nothing around them.
func TestStores(t *testing.T) {
	var buf [48]byte
	for i := range buf {
		buf[i] = 0xee
	}
	Store16(unsafe.Pointer(&buf[3]), 0x0706050403020100, 0x0f0e0d0c0b0a0908)
	Store32(unsafe.Pointer(&buf[19]), 0x1716151413121110, 0x1f1e1d1c1b1a1918, 0x2726252423222120, 0x2f2e2d2c2b2a2928)
	for i, b := range buf {
		want := byte(0xee)
		if i >= 3 && i < 19 {
			want = byte(i - 3)
		} else if i >= 19 && i < 51 {
			want = byte(i - 19 + 0x10)
		}
		if b != want {
			t.Fatalf("byte %d: %#x, want %#x (% x)", i, b, want, buf)
		}
	}
}
