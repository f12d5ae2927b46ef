package gorun

import (
	"math"
	"slices"
	"testing"
)

// The built-in ops are recognized as commutative (any order allowed); a
// user's Op is combined in rank order.
func TestBuiltinOpsRecognized(t *testing.T) {
	builtins := []bool{isBuiltin(Sum[float64]), isBuiltin(Prod[int32]), isBuiltin(Min[uint8]), isBuiltin(Max[float32]),
		isBuiltin(BAnd[int]), isBuiltin(BOr[uint64]), isBuiltin(BXor[int16]), isBuiltin(LAnd[int8]), isBuiltin(LOr[uintptr]), isBuiltin(LXor[uint])}
	for i, ok := range builtins {
		if !ok {
			t.Errorf("built-in op %s not recognized", builtinOps[i])
		}
	}
	user := func(acc, in []float64) { Sum(acc, in) }
	if isBuiltin(Op[float64](user)) {
		t.Error("a user Op counted as built-in")
	}
}

// genericOps returns the built-ins as a generic function sees them: each a
// closure named after that function, not after the op.
func genericOps[T Integer]() []Op[T] {
	return []Op[T]{Sum[T], Prod[T], Min[T], Max[T], BAnd[T], BOr[T], BXor[T], LAnd[T], LOr[T], LXor[T]}
}

// genericUser returns user ops written in a generic function: one that
// calls Sum and then changes the result, one that panics on short slices,
// and one that is a plain loop.
func genericUser[T Scalar]() []Op[T] {
	return []Op[T]{
		func(acc, in []T) {
			Sum(acc, in)
			for i := range acc {
				acc[i] *= 2
			}
		},
		func(acc, in []T) { acc[0] += in[0] + in[1] },
		func(acc, in []T) {
			for i := range acc {
				acc[i] = acc[i]*2 + in[i]
			}
		},
	}
}

// genericWrap is a literal in a generic function around a captured op (not
// inlined: every call returns a closure of the one code pointer).
//
//go:noinline
func genericWrap[T Scalar](op Op[T]) Op[T] {
	return func(acc, in []T) { op(acc, in) }
}

// Inside a generic function the built-ins are recognized too (by a probe:
// their names there are the caller's), with the right kind; Sum on 4- and
// 8-byte types gets the SSE2 adder; user ops there stay user ops.
func TestBuiltinOpsRecognizedGeneric(t *testing.T) {
	for i, op := range genericOps[int64]() {
		in, _ := infoOf(op)
		want := infoFor(byte(i + 1))
		if in.builtin != want.builtin || in.logical != want.logical || in.sum != want.sum {
			t.Errorf("%s from a generic function: %+v, want %+v", builtinOps[i], in, want)
		}
	}
	if in, _ := infoOf(genericOps[int32]()[0]); !in.sum {
		t.Error("Sum[int32] from a generic function not recognized as Sum")
	}
	for i, op := range genericUser[float64]() {
		if isBuiltin(op) {
			t.Errorf("generic user op %d counted as built-in", i)
		}
	}
	// One literal wrapping a captured op: Sum in one call, a user op in the
	// next (the literal's code pointer is the same; nothing may be cached).
	for range 2 {
		if in, _ := infoOf(genericWrap[int64](Sum[int64])); !in.sum {
			t.Error("a generic literal wrapping Sum: not recognized as Sum")
		}
		user := genericUser[int64]()[0]
		if in, _ := infoOf(genericWrap[int64](user)); in.builtin {
			t.Error("the same generic literal wrapping a user op after Sum: counted as built-in")
		}
		red, ordered, _ := reducer("test", genericWrap[int64](user))
		acc := []int64{1, 2}
		red(asBytes(acc), asBytes([]int64{10, 20}))
		if !ordered || !slices.Equal(acc, []int64{22, 44}) { // user: Sum, then doubled
			t.Errorf("the generic literal wrapping a user op reduced to %v (ordered %v), want [22 44] (ordered)", acc, ordered)
		}
	}
	f := genericSum[float32]()
	red, ordered, err := reducer("test", f)
	if err != nil || ordered {
		t.Fatalf("reducer(generic Sum[float32]): ordered %v, err %v", ordered, err)
	}
	acc, in := []float32{1, 2, 3, 4, 5}, []float32{10, 20, 30, 40, 50}
	red(asBytes(acc), asBytes(in))
	if !slices.Equal(acc, []float32{11, 22, 33, 44, 55}) {
		t.Errorf("generic Sum reduced to %v", acc)
	}
}

func genericSum[T Scalar]() Op[T] { return Sum[T] }

// Each op on a small table (MPI's definitions; logical ops give 1 or 0).
func TestOps(t *testing.T) {
	acc := []int32{3, -2, 0, 5}
	in := []int32{4, 0, 0, -5}
	cases := []struct {
		name string
		op   Op[int32]
		want []int32
	}{
		{"Sum", Sum[int32], []int32{7, -2, 0, 0}},
		{"Prod", Prod[int32], []int32{12, 0, 0, -25}},
		{"Min", Min[int32], []int32{3, -2, 0, -5}},
		{"Max", Max[int32], []int32{4, 0, 0, 5}},
		{"BAnd", BAnd[int32], []int32{0, 0, 0, 5 & -5}},
		{"BOr", BOr[int32], []int32{7, -2, 0, 5 | -5}},
		{"BXor", BXor[int32], []int32{7, -2, 0, 5 ^ -5}},
		{"LAnd", LAnd[int32], []int32{1, 0, 0, 1}},
		{"LOr", LOr[int32], []int32{1, 1, 0, 1}},
		{"LXor", LXor[int32], []int32{0, 1, 0, 0}},
	}
	for _, c := range cases {
		a := append([]int32(nil), acc...)
		c.op(a, in)
		for i := range a {
			if a[i] != c.want[i] {
				t.Errorf("%s(%v, %v) = %v, want %v", c.name, acc, in, a, c.want)
				break
			}
		}
	}
	f := []float64{1, math.Inf(-1)}
	Max(f, []float64{2, 0})
	if f[0] != 2 || f[1] != 0 {
		t.Errorf("Max float64: %v", f)
	}
}

// The built-in ops allocate nothing.
func TestOpsAllocateNothing(t *testing.T) {
	a, b := make([]float64, 1024), make([]float64, 1024)
	if n := testing.AllocsPerRun(100, func() { Sum(a, b) }); n != 0 {
		t.Errorf("Sum allocates %v times per call", n)
	}
}

func BenchmarkSumFloat64(b *testing.B) {
	acc, in := make([]float64, 1<<16), make([]float64, 1<<16)
	b.SetBytes(8 << 16)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Sum(acc, in)
	}
}

// Only LAnd, LOr and LXor are logical; truthCopy makes their input 1 or 0
// in a copy (send, or recv in place) and is nil for any other op.
func TestTruthCopy(t *testing.T) {
	for i, op := range []Op[int16]{LAnd[int16], LOr[int16], LXor[int16]} {
		in := []int16{0, 5, -3, 1}
		got := truthCopy(op, nil, in)
		if want := []int16{0, 1, 1, 1}; !slices.Equal(got, want) || in[1] != 5 {
			t.Errorf("op %d: truthCopy = %v (input now %v); want %v and the input untouched", i, got, in, want)
		}
	}
	if got := truthCopy(LAnd[uint8], []uint8{2}, []uint8{0}); !slices.Equal(got, []uint8{1}) {
		t.Errorf("truthCopy with send and recv = %v; want send's truth [1]", got)
	}
	user := func(acc, in []int16) { LAnd(acc, in) }
	for i, op := range []Op[int16]{Sum[int16], BAnd[int16], Max[int16], user} {
		if got := truthCopy(op, []int16{5}, nil); got != nil {
			t.Errorf("op %d is not logical, truthCopy = %v; want nil", i, got)
		}
	}
}

// The collectives' reduction for the built-in Sum (package add's vector
// loops where one fits the type) gives the bits of Sum itself, for every
// element type, including the named ones, NaNs and wrap-around.
func TestSumReducerMatchesSum(t *testing.T) {
	type celsius float32
	testSumReducer(t, Sum[float32], []float32{1.5, float32(math.NaN()), float32(math.Inf(1)), -0.0, 3e38, 1e-45, 7, 8, 9}, []float32{2.25, 1, float32(math.Inf(-1)), 0, 3e38, 1e-45, -7, 8, 9})
	testSumReducer(t, Sum[float64], []float64{1.5, math.NaN(), math.Inf(1), 1e308, 5e-324}, []float64{2.25, 1, math.Inf(-1), 1e308, 5e-324})
	testSumReducer(t, Sum[int32], []int32{math.MaxInt32, -5, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, []int32{1, 5, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	testSumReducer(t, Sum[uint64], []uint64{math.MaxUint64, 3, 9, 9, 9, 9, 9, 9, 9}, []uint64{2, 4, 1, 2, 3, 4, 5, 6, 7})
	testSumReducer(t, Sum[int], []int{math.MaxInt, 3}, []int{1, 4})
	testSumReducer(t, Sum[complex64], []complex64{1 + 2i, 3 - 4i, 5}, []complex64{0.5i, 1, 2 + 2i})
	testSumReducer(t, Sum[complex128], []complex128{1 + 2i, 3 - 4i}, []complex128{0.5i, 1})
	testSumReducer(t, Sum[int8], []int8{127, 1}, []int8{1, 1})
	testSumReducer(t, Sum[celsius], []celsius{1.5, 2}, []celsius{1, 3e38})
}

// sum is passed in: Sum[T] named inside a generic function is a wrapper
// that infoOf does not recognize as the built-in.
func testSumReducer[T Scalar](t *testing.T, sum Op[T], acc, in []T) {
	t.Helper()
	red, ordered, err := reducer("test", sum)
	if err != nil || ordered {
		t.Fatalf("reducer(Sum[%T]): ordered %v, %v", acc[0], ordered, err)
	}
	want := slices.Clone(acc)
	Sum(want, in)
	got := slices.Clone(acc)
	red(asBytes(got), asBytes(in))
	if !slices.Equal(asBytes(got), asBytes(want)) {
		t.Errorf("Sum[%T]: the reducer gives %v, Sum gives %v", acc[0], got, want)
	}
}
