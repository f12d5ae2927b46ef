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

// Small copies src (at most SmallMax bytes) into dst with overlapping
// word loads and stores (unaligned, which amd64 allows): from 17 bytes the
// first and last 16 as two words each, from 8 the first and last word, or
// three single bytes: no memmove call, whose dispatch and the spills
// around it were about a third of a fast-box record's write. The caller
// guarantees len(src) ≤ SmallMax and len(dst) ≥ len(src): Small checks
// neither, so that it stays a leaf without a frame (a check's panic call
// gave it one, +10 instructions). Up to 32 bytes rather than 16: a
// 32-byte message's payload went through memmove on its way into a
// burst's box record and out to the receive buffer, and osu mr and bw
// near moved ~10% fewer messages/s at 32 B than at 16 B, where Open
// MPI's were level.
func Small(dst, src []byte) {
	n := uintptr(len(src))
	d, s := unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src))
	switch {
	case n > 16:
		a, b := *(*uint64)(s), *(*uint64)(unsafe.Add(s, 8))
		c, e := *(*uint64)(unsafe.Add(s, n-16)), *(*uint64)(unsafe.Add(s, n-8))
		*(*uint64)(d), *(*uint64)(unsafe.Add(d, 8)) = a, b
		*(*uint64)(unsafe.Add(d, n-16)), *(*uint64)(unsafe.Add(d, n-8)) = c, e
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

// Words16 loads src (at most TinyMax bytes, unchecked as in Small) as two
// little-endian words, zero beyond len(src): a small payload that goes into
// shared memory with word stores straight from registers. Loads of
// overlapping halves, as Small's, never read outside src.
func Words16(src []byte) (lo, hi uint64) {
	n := uintptr(len(src))
	s := unsafe.Pointer(unsafe.SliceData(src))
	switch {
	case n >= 8:
		// Bytes n-8..n-1, shifted down to put byte 8 first (n == 8: none).
		return *(*uint64)(s), *(*uint64)(unsafe.Add(s, n-8)) >> ((16 - n) * 8)
	case n >= 4:
		return uint64(*(*uint32)(s)) | uint64(*(*uint32)(unsafe.Add(s, n-4)))<<((n-4)*8), 0
	case n > 0:
		return uint64(*(*byte)(s)) | uint64(*(*byte)(unsafe.Add(s, n/2)))<<(n/2*8) | uint64(*(*byte)(unsafe.Add(s, n-1)))<<((n-1)*8), 0
	}
	return 0, 0
}

// Store16 stores words a and b (little-endian) at p with one 16-byte
// store, and Store32 a, b, c, d at p with two. They take the words in
// registers: through Go, two words become 16 bytes by way of the stack,
// and a 16-byte load of what two 8-byte stores wrote an instant before
// waits for both to leave the store buffer (a failed store forward).
// Fewer, wider stores matter where they go: the line a receiver polls,
// which it takes back between two of the sender's stores (osu lat 1-16 B
// +10-25% with a MATCH header and its payload as three or four 8-byte
// stores instead of two 16-byte ones).
func Store16(p unsafe.Pointer, a, b uint64) { store16((*byte)(p), a, b) }

// Store32: see Store16.
func Store32(p unsafe.Pointer, a, b, c, d uint64) { store32((*byte)(p), a, b, c, d) }

//go:noescape
func store16(p *byte, a, b uint64)

//go:noescape
func store32(p *byte, a, b, c, d uint64)
