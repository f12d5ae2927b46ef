package main

import (
	"os"
	"testing"
	"unsafe"
)

func TestAlignedBuf(t *testing.T) {
	page := uintptr(os.Getpagesize())
	for _, n := range []int{0, 1, 4095, 4096, 1 << 20} {
		b := alignedBuf(n, 'a')
		if len(b) != n || cap(b) != n {
			t.Fatalf("alignedBuf(%d): len %d cap %d, want %d", n, len(b), cap(b), n)
		}
		if n == 0 {
			continue
		}
		if p := uintptr(unsafe.Pointer(&b[0])); p%page != 0 {
			t.Errorf("alignedBuf(%d) starts at %#x, not on a %d-byte page", n, p, page)
		}
		for i, c := range b {
			if c != 'a' {
				t.Fatalf("alignedBuf(%d)[%d] = %q, want 'a' (touched)", n, i, c)
			}
		}
	}
}
