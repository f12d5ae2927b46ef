package sm

import (
	"bytes"
	"errors"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// TestVMCopyChunks copies within this process (process_vm_readv and
// _writev on our own pid) with vmChunk below the length, so that a copy
// takes several raw calls: every byte lands where it should, each chunk
// continuing where the last one ended, and nothing past the end is touched.
func TestVMCopyChunks(t *testing.T) {
	old := vmChunk
	defer func() { vmChunk = old }()
	for _, tc := range []struct {
		name     string
		chunk, n int
		write    bool
	}{
		{"read one call", 1 << 20, 10000, false},
		{"read uneven chunks", 4093, 10000, false},
		{"read exact chunks", 1000, 10000, false},
		{"read one byte per call", 1, 300, false},
		{"write uneven chunks", 4093, 10000, true},
		{"write one call", 1 << 20, 70000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmChunk = tc.chunk
			src := make([]byte, tc.n)
			for i := range src {
				src[i] = byte(i*7 + i>>8)
			}
			dst := make([]byte, tc.n+8) // 8 guard bytes past the copy
			for i := range dst {
				dst[i] = 0xEE
			}
			var err error
			if tc.write { // into dst's address, out of src
				err = vmCopy(os.Getpid(), uintptr(unsafe.Pointer(&dst[0])), src, true)
			} else { // out of src's address, into dst
				err = vmCopy(os.Getpid(), uintptr(unsafe.Pointer(&src[0])), dst[:tc.n], false)
			}
			if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOSYS) {
				t.Skipf("process_vm_readv/writev not allowed here: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dst[:tc.n], src) {
				i := 0
				for dst[i] == src[i] {
					i++
				}
				t.Fatalf("byte %d is %#x, want %#x", i, dst[i], src[i])
			}
			if !bytes.Equal(dst[tc.n:], bytes.Repeat([]byte{0xEE}, 8)) {
				t.Fatalf("bytes past the copy changed: %x", dst[tc.n:])
			}
		})
	}
}

// TestVMCopyBadAddress: a copy from an address that is not mapped fails
// with the system call's error (EFAULT) instead of looping or copying
// garbage.
func TestVMCopyBadAddress(t *testing.T) {
	dst := make([]byte, 64)
	err := vmCopy(os.Getpid(), 8, dst, false) // page 0 is never mapped
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOSYS) {
		t.Skipf("process_vm_readv not allowed here: %v", err)
	}
	if !errors.Is(err, syscall.EFAULT) {
		t.Fatalf("read from address 8: %v, want EFAULT", err)
	}
}
