// Package memcpy copies bytes into and out of the shared segment.
//
// Why not copy(): Go's memmove copies 256 B–1 MiB with AVX stores, which
// read every destination cache line before writing it (read for ownership).
// A fragment in the shared segment was last read by the other rank's core,
// so each of those reads is a cross-core transfer, and the copy runs at the
// rate of cross-core misses (~10 GB/s here). REP MOVSB with ERMS writes
// whole lines without reading them first, which is what glibc's memcpy does
// in that size range, and what Open MPI's fragments get.
//
// Copy falls back to copy() for short copies, on CPUs without ERMS and on
// other architectures. Small copies at most SmallMax bytes without a call
// to memmove (small messages' headers and payloads), and Words16 loads as
// many as two words, for word stores straight from registers.
package memcpy

// TinyMax is the most bytes Words16 loads: a payload that travels in
// registers (sm's putMatch).
const TinyMax = 16

// SmallMax is the most bytes Small copies.
const SmallMax = 32
