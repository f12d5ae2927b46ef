package memcpy

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// repMin is the size from which REP MOVSB pays for its start-up cost. At
// 1 KiB, a fast-box record copied so went faster (osu bw 1 KiB +27%, lat
// 1.07 -> 1.02 us, bibw +11%; 8 and 6 interleaved runs against 2048); at
// 512 B it made no difference.
const repMin = 1024

var hasERMS = cpu.X86.HasERMS

// repMovsb copies n bytes from src to dst with REP MOVSB. The ranges must
// not overlap.
//
//go:noescape
func repMovsb(dst, src *byte, n uintptr)

// Copy copies min(len(dst), len(src)) bytes and returns that count, like
// copy(). dst and src must not overlap. Its short case (copy()) inlines
// into the caller: a call of its own cost about 18 instructions.
func Copy(dst, src []byte) int {
	if len(src) < repMin || len(dst) < repMin || !hasERMS {
		return copy(dst, src)
	}
	return copyRep(dst, src)
}

// copyRep is Copy's REP MOVSB, for at least repMin bytes.
//
//go:noinline
func copyRep(dst, src []byte) int {
	n := min(len(dst), len(src))
	repMovsb(&dst[0], &src[0], uintptr(n))
	return n
}

//go:noescape
func prefetchW(p *byte)

// PrefetchW asks for the cache line at p in a writable state, ahead of a
// store to it.
func PrefetchW(p unsafe.Pointer) { prefetchW((*byte)(p)) }

// Tiny copies src into dst with two overlapping word loads and stores
// (unaligned, which amd64 allows), or three single bytes: no memmove call,
// whose dispatch and the spills around it were about a third of a
// fast-box record's write. The caller guarantees len(src) ≤ TinyMax and
// len(dst) ≥ len(src): Tiny checks neither, so that it stays a leaf
// without a frame (a check's panic call gave it one, +10 instructions).
func Tiny(dst, src []byte) {
	n := uintptr(len(src))
	d, s := unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src))
	switch {
	case n >= 8:
		a, b := *(*uint64)(s), *(*uint64)(unsafe.Add(s, n-8))
		*(*uint64)(d), *(*uint64)(unsafe.Add(d, n-8)) = a, b
	case n >= 4:
		a, b := *(*uint32)(s), *(*uint32)(unsafe.Add(s, n-4))
		*(*uint32)(d), *(*uint32)(unsafe.Add(d, n-4)) = a, b
	case n > 0:
		a, b, c := *(*byte)(s), *(*byte)(unsafe.Add(s, n/2)), *(*byte)(unsafe.Add(s, n-1))
		*(*byte)(d), *(*byte)(unsafe.Add(d, n/2)), *(*byte)(unsafe.Add(d, n-1)) = a, b, c
	}
}
