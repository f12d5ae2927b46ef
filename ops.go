package gorun

import (
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

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
	if len(acc) == 0 {
		probed(acc, in, opSum)
		return
	}
	in = in[:len(acc)]
	for i := range acc {
		acc[i] += in[i]
	}
}

// Prod: acc[i] *= in[i].
func Prod[T Scalar](acc, in []T) {
	if len(acc) == 0 {
		probed(acc, in, opProd)
		return
	}
	in = in[:len(acc)]
	for i := range acc {
		acc[i] *= in[i]
	}
}

// Min: acc[i] = min(acc[i], in[i]).
func Min[T Ordered](acc, in []T) {
	if len(acc) == 0 {
		probed(acc, in, opMin)
		return
	}
	in = in[:len(acc)]
	for i := range acc {
		if in[i] < acc[i] {
			acc[i] = in[i]
		}
	}
}

// Max: acc[i] = max(acc[i], in[i]).
func Max[T Ordered](acc, in []T) {
	if len(acc) == 0 {
		probed(acc, in, opMax)
		return
	}
	in = in[:len(acc)]
	for i := range acc {
		if in[i] > acc[i] {
			acc[i] = in[i]
		}
	}
}

// BAnd: acc[i] &= in[i].
func BAnd[T Integer](acc, in []T) {
	if len(acc) == 0 {
		probed(acc, in, opBAnd)
		return
	}
	in = in[:len(acc)]
	for i := range acc {
		acc[i] &= in[i]
	}
}

// BOr: acc[i] |= in[i].
func BOr[T Integer](acc, in []T) {
	if len(acc) == 0 {
		probed(acc, in, opBOr)
		return
	}
	in = in[:len(acc)]
	for i := range acc {
		acc[i] |= in[i]
	}
}

// BXor: acc[i] ^= in[i].
func BXor[T Integer](acc, in []T) {
	if len(acc) == 0 {
		probed(acc, in, opBXor)
		return
	}
	in = in[:len(acc)]
	for i := range acc {
		acc[i] ^= in[i]
	}
}

// LAnd: acc[i] = acc[i] && in[i], non-zero being true; results are 1 or 0.
func LAnd[T Integer](acc, in []T) {
	if len(acc) == 0 {
		probed(acc, in, opLAnd)
		return
	}
	in = in[:len(acc)]
	for i := range acc {
		acc[i] = truth[T](acc[i] != 0 && in[i] != 0)
	}
}

// LOr: acc[i] = acc[i] || in[i] (1 or 0).
func LOr[T Integer](acc, in []T) {
	if len(acc) == 0 {
		probed(acc, in, opLOr)
		return
	}
	in = in[:len(acc)]
	for i := range acc {
		acc[i] = truth[T](acc[i] != 0 || in[i] != 0)
	}
}

// LXor: acc[i] = acc[i] != in[i] as truth values (1 or 0).
func LXor[T Integer](acc, in []T) {
	if len(acc) == 0 {
		probed(acc, in, opLXor)
		return
	}
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
	// probed: a closure made in a generic function, recognized by a probe
	// (below). Its code pointer is shared by every closure of that literal,
	// whatever each captured (a literal wrapping a captured Op is Sum in one
	// call and a user op in the next), so only that it needs a probe is
	// cached, never its kind or its reduction: every call probes it again.
	probed bool
}

// opInfos caches opInfo by code pointer (a map under a lock: a sync.Map
// would box the pointer, an allocation per collective call).
var opInfos struct {
	mu sync.RWMutex
	m  map[uintptr]opInfo
}

// builtinOps are the names of the commutative built-in ops; op codes
// (opSum...) are their index + 1.
var builtinOps = []string{"Sum", "Prod", "Min", "Max", "BAnd", "BOr", "BXor", "LAnd", "LOr", "LXor"}

const (
	opSum byte = iota + 1
	opProd
	opMin
	opMax
	opBAnd
	opBOr
	opBXor
	opLAnd
	opLOr
	opLXor
)

// Recognizing a built-in inside a generic function: there, Sum[T] (T a
// type parameter) is a closure the compiler makes around Sum's shape
// instantiation, named after the caller ("pkg.f[...].func1"), not Sum. A
// probe calls such a closure once with an empty acc (capacity 1) and an
// empty in that starts at probeIn; a built-in seeing that writes its code
// into acc's first byte (probed). The code is then checked on a small
// table (a closure that calls a built-in and then changes the result is not
// that built-in); a panic means a user op. The one thing it cannot tell is
// a literal in a generic function that only calls one built-in and has no
// other effect on the result: it counts as that built-in. Such closures
// are probed at every collective call (opInfo.probed), so a user op written
// as a literal in a generic function is called with empty slices there once
// more than the reduction needs.

// probeIn is where a probe's in starts (16 bytes: room for a complex128).
var probeIn [2]uint64

// probed is the built-ins' answer to a probe (see above).
func probed[T Scalar](acc, in []T, code byte) {
	if cap(acc) > 0 && cap(in) > 0 && unsafe.Pointer(unsafe.SliceData(in)) == unsafe.Pointer(&probeIn) {
		*(*byte)(unsafe.Pointer(unsafe.SliceData(acc))) = code
	}
}

// probeOp returns the code of the built-in op is, or 0 for a user op.
func probeOp[T Scalar](op Op[T]) (code byte) {
	defer func() {
		if recover() != nil {
			code = 0
		}
	}()
	buf := make([]T, 1)
	op(buf[:0], unsafe.Slice((*T)(unsafe.Pointer(&probeIn)), 1)[:0])
	code = *(*byte)(unsafe.Pointer(&buf[0]))
	acc := []T{1, 2, 0}
	op(acc, []T{3, 1, 2})
	var want []T
	switch code {
	case opSum:
		want = []T{4, 3, 2}
	case opProd:
		want = []T{3, 2, 0}
	case opMin, opLAnd:
		want = []T{1, 1, 0}
	case opMax:
		want = []T{3, 2, 2}
	case opBAnd:
		want = []T{1, 0, 0}
	case opBOr:
		want = []T{3, 3, 2}
	case opBXor:
		want = []T{2, 3, 2}
	case opLOr:
		want = []T{1, 1, 1}
	case opLXor:
		want = []T{0, 0, 1}
	}
	if want == nil || !slices.Equal(acc, want) {
		return 0
	}
	return code
}

// lastOp is the op infoOf found last (a program's reductions mostly use
// one op: one atomic load instead of the map under its lock).
var lastOp atomic.Pointer[pcInfo]

type pcInfo struct {
	pc uintptr
	in opInfo
}

// infoOf returns fn's opInfo, and its code pointer.
func infoOf[T Scalar](fn Op[T]) (opInfo, uintptr) {
	pc := reflect.ValueOf(fn).Pointer()
	in, ok := cachedInfo(pc)
	if !ok {
		in = nameInfo(pc)
		setInfo(pc, in)
	}
	if in.probed {
		in = infoFor(probeOp(fn))
		in.probed = true
	}
	return in, pc
}

// cachedInfo is the opInfo setInfo stored for pc, if any.
func cachedInfo(pc uintptr) (opInfo, bool) {
	if l := lastOp.Load(); l != nil && l.pc == pc {
		return l.in, true
	}
	opInfos.mu.RLock()
	in, ok := opInfos.m[pc]
	opInfos.mu.RUnlock()
	if ok {
		lastOp.Store(&pcInfo{pc, in})
	}
	return in, ok
}

// nameInfo is what the name of the function at pc tells: a built-in, a
// closure of a generic function to be probed at every call, or a user op.
func nameInfo(pc uintptr) opInfo {
	f := runtime.FuncForPC(pc)
	if f == nil {
		return opInfo{}
	}
	name := f.Name()
	if rest, ok := strings.CutPrefix(name, "github.com/gorun-mpi/gorun."); ok {
		for i, o := range builtinOps {
			if strings.HasPrefix(rest, o+"[") {
				return infoFor(byte(i + 1))
			}
		}
	}
	return opInfo{probed: strings.Contains(name, "[...].func")}
}

// infoFor is the opInfo of op code code (0: a user op).
func infoFor(code byte) opInfo {
	if code == 0 {
		return opInfo{}
	}
	return opInfo{builtin: true, logical: code >= opLAnd, sum: code == opSum}
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
func isBuiltin[T Scalar](fn Op[T]) bool { in, _ := infoOf(fn); return in.builtin }

// isLogical reports whether fn is one of the logical built-ins.
func isLogical[T Scalar](fn Op[T]) bool { in, _ := infoOf(fn); return in.logical }

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
