package btltest

import "unsafe"

// addr is the address of b's first byte, as the PML passes it to ReadFrom.
func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
