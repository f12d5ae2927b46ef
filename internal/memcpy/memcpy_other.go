//go:build !amd64

package memcpy

import "unsafe"

// Copy is copy() on architectures without a special path.
func Copy(dst, src []byte) int { return copy(dst, src) }

// PrefetchW does nothing here.
func PrefetchW(p unsafe.Pointer) {}

// Tiny is copy() here (see the amd64 Tiny for its contract).
func Tiny(dst, src []byte) { copy(dst, src) }
