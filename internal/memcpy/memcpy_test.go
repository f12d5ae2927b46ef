package memcpy

import (
	"bytes"
	"fmt"
	"testing"
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

// Tiny copies exactly len(src) bytes (0..TinyMax) at any alignment of
// either side, and writes nothing around them.
func TestTiny(t *testing.T) {
	src := make([]byte, 64)
	for i := range src {
		src[i] = byte(i*13 + 1)
	}
	for n := 0; n <= TinyMax; n++ {
		for _, so := range []int{0, 1, 5, 8} {
			for _, do := range []int{0, 3, 7} {
				dst := bytes.Repeat([]byte{0xee}, 48)
				want := bytes.Repeat([]byte{0xee}, 48)
				Tiny(dst[8+do:8+do+n+2], src[so:so+n])
				copy(want[8+do:], src[so:so+n])
				if !bytes.Equal(dst, want) {
					t.Fatalf("Tiny of %d bytes (src offset %d, dst offset %d):\n got %x\nwant %x", n, so, do, dst, want)
				}
			}
		}
	}
}
