//go:build !amd64

package memcpy

import (
	"encoding/binary"
	"unsafe"
)

// Copy is copy() on architectures without a special path.
func Copy(dst, src []byte) int { return copy(dst, src) }

// PrefetchW does nothing here.
func PrefetchW(p unsafe.Pointer) {}

// Small is copy() here (see the amd64 Small for its contract).
func Small(dst, src []byte) { copy(dst, src) }

// Words16 is the amd64 Words16 (see there) with a copy.
func Words16(src []byte) (lo, hi uint64) {
	var b [TinyMax]byte
	copy(b[:], src)
	return binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])
}

// Store16 stores a and b at p (see the amd64 Store16).
func Store16(p unsafe.Pointer, a, b uint64) {
	binary.LittleEndian.PutUint64(unsafe.Slice((*byte)(p), 16), a)
	binary.LittleEndian.PutUint64(unsafe.Slice((*byte)(unsafe.Add(p, 8)), 8), b)
}

// Store32 stores a, b, c, d at p (see the amd64 Store16).
func Store32(p unsafe.Pointer, a, b, c, d uint64) {
	Store16(p, a, b)
	Store16(unsafe.Add(p, 16), c, d)
}
