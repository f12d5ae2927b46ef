//go:build !amd64

package memcpy

// Copy is copy() on architectures without a special path.
func Copy(dst, src []byte) int { return copy(dst, src) }
