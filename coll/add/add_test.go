package add

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

var le = binary.LittleEndian

// ref is the plain loop each Func must match bit for bit.
func ref(kind string, acc, in []byte) {
	switch kind {
	case "f32":
		for i := 0; i+4 <= len(acc); i += 4 {
			le.PutUint32(acc[i:], math.Float32bits(math.Float32frombits(le.Uint32(acc[i:]))+math.Float32frombits(le.Uint32(in[i:]))))
		}
	case "f64":
		for i := 0; i+8 <= len(acc); i += 8 {
			le.PutUint64(acc[i:], math.Float64bits(math.Float64frombits(le.Uint64(acc[i:]))+math.Float64frombits(le.Uint64(in[i:]))))
		}
	case "i32":
		for i := 0; i+4 <= len(acc); i += 4 {
			le.PutUint32(acc[i:], le.Uint32(acc[i:])+le.Uint32(in[i:]))
		}
	case "i64":
		for i := 0; i+8 <= len(acc); i += 8 {
			le.PutUint64(acc[i:], le.Uint64(acc[i:])+le.Uint64(in[i:]))
		}
	}
}

// special are float bit patterns where a wrong instruction would show:
// NaNs with payloads, infinities, signed zeros, subnormals, extremes.
var special32 = []uint32{0x7fc00001, 0xffc00000, 0x7f800001, 0x7f800000, 0xff800000, 0, 0x80000000, 1, 0x807fffff, 0x7f7fffff, 0x3f800000}
var special64 = []uint64{0x7ff8000000000001, 0xfff8000000000000, 0x7ff0000000000001, 0x7ff0000000000000, 0xfff0000000000000, 0, 1 << 63, 1, 0x800fffffffffffff, 0x7fefffffffffffff}

func fill(r *rand.Rand, kind string, b []byte) {
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	switch kind {
	case "f32":
		for i := 0; i+4 <= len(b); i += 4 {
			if r.IntN(3) == 0 {
				le.PutUint32(b[i:], special32[r.IntN(len(special32))])
			}
		}
	case "f64":
		for i := 0; i+8 <= len(b); i += 8 {
			if r.IntN(3) == 0 {
				le.PutUint64(b[i:], special64[r.IntN(len(special64))])
			}
		}
	}
}

// Every kind, every length up to 300 bytes (the vector steps and the
// tails), at every alignment of both buffers: the same bits as the plain
// loop, and nothing written past the end.
func TestMatchesLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, kind := range []string{"f32", "f64", "i32", "i64"} {
		f := For(kind)
		size := 4
		if kind[1:] == "64" {
			size = 8
		}
		for n := 0; n <= 300; n += size {
			for off := 0; off < 8; off++ {
				acc := make([]byte, off+n+16)
				in := make([]byte, 7-off+n)
				fill(r, kind, acc)
				fill(r, kind, in)
				want := bytes.Clone(acc)
				ref(kind, want[off:off+n], in[7-off:])
				f(acc[off:off+n], in[7-off:])
				if !bytes.Equal(acc, want) {
					t.Fatalf("%s: %d bytes at offsets %d/%d differ from the plain loop", kind, n, off, 7-off)
				}
			}
		}
	}
	if For("f16") != nil {
		t.Error("For(f16) is not nil")
	}
}

func FuzzMatchesLoop(f *testing.F) {
	f.Add(uint8(0), []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{8, 7, 6, 5, 4, 3, 2, 1})
	f.Fuzz(func(t *testing.T, k uint8, acc, in []byte) {
		kind := []string{"f32", "f64", "i32", "i64"}[k%4]
		n := min(len(acc), len(in))
		acc, in = acc[:n], in[:n]
		want := bytes.Clone(acc)
		ref(kind, want, in)
		For(kind)(acc, in)
		if !bytes.Equal(acc, want) {
			t.Fatalf("%s: differs from the plain loop", kind)
		}
	})
}

func BenchmarkF32(b *testing.B) {
	acc, in := make([]byte, 128<<10), make([]byte, 128<<10)
	b.SetBytes(int64(len(acc)))
	for b.Loop() {
		F32(acc, in)
	}
}
