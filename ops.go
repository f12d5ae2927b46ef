package gorun

// Op combines in into acc element-wise: acc[i] = acc[i] ⊕ in[i]. It must be
// associative. A user's Op need not be commutative: collectives combine it
// in rank order, r0 ⊕ r1 ⊕ ... ⊕ r(n-1). The built-in ops below are
// commutative, and gorun may combine them in any order that keeps the
// determinism rule (the same bits on every rank and in every run).
type Op[T Scalar] func(acc, in []T)

// Ordered is every Scalar but the complex ones.
type Ordered interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 |
		~uintptr | ~float32 | ~float64
}

// Integer is the integer Scalars.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// The built-in ops are plain loops, instantiated per element type (no call
// per element, no allocation). in is resliced to acc's length first so the
// compiler drops the bounds checks inside the loops.

// Sum: acc[i] += in[i].
func Sum[T Scalar](acc, in []T) {
	in = in[:len(acc)]
	for i := range acc {
		acc[i] += in[i]
	}
}

// Prod: acc[i] *= in[i].
func Prod[T Scalar](acc, in []T) {
	in = in[:len(acc)]
	for i := range acc {
		acc[i] *= in[i]
	}
}

// Min: acc[i] = min(acc[i], in[i]).
func Min[T Ordered](acc, in []T) {
	in = in[:len(acc)]
	for i := range acc {
		if in[i] < acc[i] {
			acc[i] = in[i]
		}
	}
}

// Max: acc[i] = max(acc[i], in[i]).
func Max[T Ordered](acc, in []T) {
	in = in[:len(acc)]
	for i := range acc {
		if in[i] > acc[i] {
			acc[i] = in[i]
		}
	}
}

// BAnd: acc[i] &= in[i].
func BAnd[T Integer](acc, in []T) {
	in = in[:len(acc)]
	for i := range acc {
		acc[i] &= in[i]
	}
}

// BOr: acc[i] |= in[i].
func BOr[T Integer](acc, in []T) {
	in = in[:len(acc)]
	for i := range acc {
		acc[i] |= in[i]
	}
}

// BXor: acc[i] ^= in[i].
func BXor[T Integer](acc, in []T) {
	in = in[:len(acc)]
	for i := range acc {
		acc[i] ^= in[i]
	}
}

// LAnd: acc[i] = acc[i] && in[i], non-zero being true; results are 1 or 0.
func LAnd[T Integer](acc, in []T) {
	in = in[:len(acc)]
	for i := range acc {
		acc[i] = truth[T](acc[i] != 0 && in[i] != 0)
	}
}

// LOr: acc[i] = acc[i] || in[i] (1 or 0).
func LOr[T Integer](acc, in []T) {
	in = in[:len(acc)]
	for i := range acc {
		acc[i] = truth[T](acc[i] != 0 || in[i] != 0)
	}
}

// LXor: acc[i] = acc[i] != in[i] as truth values (1 or 0).
func LXor[T Integer](acc, in []T) {
	in = in[:len(acc)]
	for i := range acc {
		acc[i] = truth[T]((acc[i] != 0) != (in[i] != 0))
	}
}

func truth[T Integer](b bool) T {
	if b {
		return 1
	}
	return 0
}
