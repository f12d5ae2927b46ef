package add

import "unsafe"

// Func adds in to acc element-wise; len(acc) is a multiple of the element
// size and in is at least as long.
type Func func(acc, in []byte)

// For returns the adder for elements of the given kind: "f32", "f64",
// "i32" or "i64" (integers of either signedness wrap the same way); nil
// for any other.
func For(kind string) Func {
	switch kind {
	case "f32":
		return F32
	case "f64":
		return F64
	case "i32":
		return I32
	case "i64":
		return I64
	}
	return nil
}

// F32 adds float32s.
func F32(acc, in []byte) { run(acc, in, 4, f32) }

// F64 adds float64s.
func F64(acc, in []byte) { run(acc, in, 8, f64) }

// I32 adds 32-bit integers.
func I32(acc, in []byte) { run(acc, in, 4, i32) }

// I64 adds 64-bit integers.
func I64(acc, in []byte) { run(acc, in, 8, i64) }

func run(acc, in []byte, size int, f func(acc, in *byte, n int)) {
	n := len(acc) &^ (size - 1)
	if n == 0 {
		return
	}
	_ = in[n-1] // in is long enough
	f(unsafe.SliceData(acc), unsafe.SliceData(in), n)
}
