//go:build !amd64

package add

import "unsafe"

func f32(acc, in *byte, n int) { loop[float32](acc, in, n) }
func f64(acc, in *byte, n int) { loop[float64](acc, in, n) }
func i32(acc, in *byte, n int) { loop[int32](acc, in, n) }
func i64(acc, in *byte, n int) { loop[int64](acc, in, n) }

func loop[T float32 | float64 | int32 | int64](acc, in *byte, n int) {
	var z T
	k := n / int(unsafe.Sizeof(z))
	a := unsafe.Slice((*T)(unsafe.Pointer(acc)), k)
	b := unsafe.Slice((*T)(unsafe.Pointer(in)), k)
	for i := range a {
		a[i] += b[i]
	}
}
