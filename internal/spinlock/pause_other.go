//go:build !amd64

package spinlock

// Pause does nothing here (see the amd64 Pause).
func Pause() {}
