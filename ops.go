package gorun

import (
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gorun-mpi/gorun/coll"
)

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

// opInfo is what the collectives need to know of an op function, found
// once per code pointer from its name: whether it is a built-in
// (commutative) op, whether a logical one, and a built-in's byte-level
// reduction, made once (nil until then, and for user ops: a closure's code
// pointer is shared by closures over different state).
type opInfo struct {
	builtin, logical, sum bool
	red                   coll.ReduceFunc
}

// opInfos caches opInfo by code pointer (a map under a lock: a sync.Map
// would box the pointer, an allocation per collective call).
var opInfos struct {
	mu sync.RWMutex
	m  map[uintptr]opInfo
}

// builtinOps are the names of the commutative built-in ops.
var builtinOps = []string{"Sum", "Prod", "Min", "Max", "BAnd", "BOr", "BXor", "LAnd", "LOr", "LXor"}

// lastOp is the op infoOf found last (a program's reductions mostly use
// one op: one atomic load instead of the map under its lock).
var lastOp atomic.Pointer[pcInfo]

type pcInfo struct {
	pc uintptr
	in opInfo
}

// infoOf returns fn's opInfo, and its code pointer.
func infoOf(fn any) (opInfo, uintptr) {
	pc := reflect.ValueOf(fn).Pointer()
	if l := lastOp.Load(); l != nil && l.pc == pc {
		return l.in, pc
	}
	opInfos.mu.RLock()
	in, ok := opInfos.m[pc]
	opInfos.mu.RUnlock()
	if ok {
		lastOp.Store(&pcInfo{pc, in})
		return in, pc
	}
	if f := runtime.FuncForPC(pc); f != nil {
		if rest, ok := strings.CutPrefix(f.Name(), "github.com/gorun-mpi/gorun."); ok {
			for _, o := range builtinOps {
				if strings.HasPrefix(rest, o+"[") {
					in.builtin = true
					in.logical = o[0] == 'L'
					in.sum = o == "Sum"
				}
			}
		}
	}
	setInfo(pc, in)
	return in, pc
}

func setInfo(pc uintptr, in opInfo) {
	opInfos.mu.Lock()
	if opInfos.m == nil {
		opInfos.m = make(map[uintptr]opInfo)
	}
	opInfos.m[pc] = in
	opInfos.mu.Unlock()
	lastOp.Store(&pcInfo{pc, in})
}

// isBuiltin reports whether fn is one of the package's commutative ops.
func isBuiltin(fn any) bool { in, _ := infoOf(fn); return in.builtin }

// isLogical reports whether fn is one of the logical built-ins.
func isLogical(fn any) bool { in, _ := infoOf(fn); return in.logical }

// truthCopy is nil unless op is LAnd, LOr or LXor; then it is the call's
// input (send, or recv when send is nil: in place) with every element made
// 1 or 0. A reduction feeds it instead of its input, so
// that results are 1 or 0 where nothing is combined too (a single rank,
// rank 0's Scan, rank 1's Exscan) and the caller's input stays untouched.
func truthCopy[T Scalar](op Op[T], send, recv []T) []T {
	if !isLogical(op) {
		return nil
	}
	in := send
	if in == nil {
		in = recv
	}
	out := make([]T, len(in))
	for i, x := range in {
		if x != 0 {
			out[i] = 1
		}
	}
	return out
}
