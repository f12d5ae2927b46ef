package main

import (
	"os"
	"unsafe"
)

// alignedBuf returns n bytes starting on a page boundary, every byte set to
// fill, as OSU does (posix_memalign, then memset): a page-aligned buffer
// avoids measuring misaligned copies, and touching it faults its pages in
// before timing. Go's heap never moves objects, so the alignment lasts.
func alignedBuf(n int, fill byte) []byte {
	page := os.Getpagesize()
	raw := make([]byte, n+page)
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(raw))) % uintptr(page)); r != 0 {
		off = page - r
	}
	b := raw[off : off+n : off+n]
	for i := range b {
		b[i] = fill
	}
	return b
}
