package gorun

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/gorun-mpi/gorun/coll"
	"github.com/gorun-mpi/gorun/coll/add"
	"github.com/gorun-mpi/gorun/pml"
)

// Collectives: package-level generic functions over a *Comm (see the coll
// package for the algorithms and the engine that runs them). All ranks of
// c call the same collectives in the same order; collectives never match
// point-to-point traffic (they travel on c's hidden context, each with a
// tag of its own). In place: send == nil means recv holds this rank's
// input and receives the result.

func elemSize[T Scalar]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// collReady reports why c cannot run a collective, or nil.
func (c *Comm) collReady() error {
	if c == nil {
		return fatalCheck(errNilComm)
	}
	return fatalCheck(c.c.Usable())
}

// collTag takes the tag of the next collective on c.
func (c *Comm) collTag() int {
	const span = pml.MaxTag - pml.FirstCollTag + 1
	return pml.FirstCollTag + int((c.collSeq.Add(1)-1)%span)
}

// start runs s on c and returns its request.
func (c *Comm) start(s coll.Schedule, elem int, send, recv []byte, red coll.ReduceFunc) *Request {
	r := new(Request)
	state.coll.Start(&r.h, c.c, c.collTag(), s, elem, send, recv, red)
	return r
}

// runPool holds the requests of blocking collectives: nobody sees them
// but the call, so each goes back once waited for.
var runPool = sync.Pool{New: func() any { return new(Request) }}

// run runs s on c to completion (a blocking collective).
func (c *Comm) run(s coll.Schedule, elem int, send, recv []byte, red coll.ReduceFunc) error {
	r := runPool.Get().(*Request)
	state.coll.Start(&r.h, c.c, c.collTag(), s, elem, send, recv, red)
	_, err := r.h.Wait(nil)
	*r = Request{}
	runPool.Put(r)
	return fatalCheck(err)
}

// launch runs s on c, blocking (the request is nil) or not.
func (c *Comm) launch(block bool, s coll.Schedule, elem int, send, recv []byte, red coll.ReduceFunc) (*Request, error) {
	if block {
		return nil, c.run(s, elem, send, recv, red)
	}
	return c.start(s, elem, send, recv, red), nil
}

// sched returns the schedule k names, built by build the first time.
func sched(k coll.Key, build func(cfg coll.Config) coll.Schedule) coll.Schedule {
	return state.coll.Schedule(k, func() coll.Schedule { return build(state.coll.Config()) })
}

func (c *Comm) checkRoot(root int) error {
	if root < 0 || root >= c.Size() {
		return fatalCheck(fmt.Errorf("gorun: root %d is outside 0..%d: %w", root, c.Size()-1, ErrInvalidRank))
	}
	return nil
}

func lenErr(call, what string, got, want int) error {
	return fatalCheck(fmt.Errorf("gorun: %s: %s has %d elements, want %d: %w", call, what, got, want, ErrInvalidArg))
}

// reducer turns op into the engine's byte-level reduction; ordered is true
// for a user Op (combined in rank order).
func reducer[T Scalar](call string, op Op[T]) (red coll.ReduceFunc, ordered bool, err error) {
	red, ordered, _, err = reduction(call, op)
	return red, ordered, err
}

// reduction is reducer that also reports whether op is LAnd, LOr or LXor
// (whose input truthCopy makes 1 or 0): the collectives ask for that copy
// only then (truthIf), so a call looks op up once.
func reduction[T Scalar](call string, op Op[T]) (red coll.ReduceFunc, ordered, logical bool, err error) {
	if op == nil {
		return nil, false, false, fatalCheck(fmt.Errorf("gorun: %s: nil Op: %w", call, ErrInvalidArg))
	}
	info, pc := infoOf(op)
	if info.red != nil {
		return info.red, false, info.logical, nil
	}
	size := elemSize[T]()
	red = func(acc, in []byte) {
		op(unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(acc))), len(acc)/size),
			unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(in))), len(in)/size))
	}
	if f := add.For(addKind[T]()); info.sum && f != nil {
		red = coll.ReduceFunc(f)
	}
	if info.builtin && !info.probed {
		info.red = red
		setInfo(pc, info)
	}
	return red, !info.builtin, info.logical, nil
}

// truthIf is truthCopy for a logical op, nil (without looking op up
// again) for the rest.
func truthIf[T Scalar](logical bool, op Op[T], send, recv []T) []T {
	if !logical {
		return nil
	}
	return truthCopy(op, send, recv)
}

// addKind names T for package add: "f32", "f64", "i32", "i64" (complex
// numbers by their parts), or "" for the rest.
func addKind[T Scalar]() string {
	switch k := reflect.TypeFor[T]().Kind(); k {
	case reflect.Float32, reflect.Complex64:
		return "f32"
	case reflect.Float64, reflect.Complex128:
		return "f64"
	case reflect.Int32, reflect.Uint32:
		return "i32"
	case reflect.Int64, reflect.Uint64:
		return "i64"
	case reflect.Int, reflect.Uint, reflect.Uintptr:
		if unsafe.Sizeof(uintptr(0)) == 8 {
			return "i64"
		}
		return "i32"
	}
	return ""
}

// Barrier returns once every rank of c has called it.
func (c *Comm) Barrier() error {
	if err := c.collReady(); err != nil {
		return err
	}
	if t := c.shmTeam(0); t != nil {
		return fatalCheck(t.Barrier())
	}
	_, err := ibarrier(c, true)
	return err
}

// Ibarrier starts a barrier; its request completes once every rank of c
// has started it.
func Ibarrier(c *Comm) (*Request, error) { return ibarrier(c, false) }

func ibarrier(c *Comm, block bool) (*Request, error) {
	if err := c.collReady(); err != nil {
		return nil, err
	}
	n, me := c.Size(), c.Rank()
	s := sched(coll.Key{Coll: coll.KBarrier, N: n, R: me}, func(cfg coll.Config) coll.Schedule { return cfg.BarrierSchedule(n, me) })
	return c.launch(block, s, 1, nil, nil, nil)
}

// Bcast sends root's buf to every rank's buf.
func Bcast[T Scalar](c *Comm, buf []T, root int) error {
	_, err := ibcast(c, buf, root, true)
	return err
}

// Ibcast is the nonblocking Bcast.
func Ibcast[T Scalar](c *Comm, buf []T, root int) (*Request, error) {
	return ibcast(c, buf, root, false)
}

func ibcast[T Scalar](c *Comm, buf []T, root int, block bool) (*Request, error) {
	if err := c.collReady(); err != nil {
		return nil, err
	}
	if err := c.checkRoot(root); err != nil {
		return nil, err
	}
	e, n, me, count := elemSize[T](), c.Size(), c.Rank(), len(buf)
	if t := c.shmTeamReadBcast(block, count*e); t != nil {
		return nil, fatalCheck(t.BcastRead(asBytes(buf), root))
	}
	if t := c.shmTeamBcast(block, count*e); t != nil {
		return nil, fatalCheck(t.Bcast(asBytes(buf), root))
	}
	s := sched(coll.Key{Coll: coll.KBcast, N: n, R: me, Root: root, Count: count, Elem: e},
		func(cfg coll.Config) coll.Schedule { return cfg.BcastSchedule(n, me, root, count, e) })
	return c.launch(block, s, e, nil, asBytes(buf), nil)
}

// Reduce combines every rank's send with op into root's recv (recv is used
// at root only; send == nil at root: in place).
func Reduce[T Scalar](c *Comm, send, recv []T, op Op[T], root int) error {
	_, err := ireduce(c, send, recv, op, root, true)
	return err
}

// Ireduce is the nonblocking Reduce.
func Ireduce[T Scalar](c *Comm, send, recv []T, op Op[T], root int) (*Request, error) {
	return ireduce(c, send, recv, op, root, false)
}

func ireduce[T Scalar](c *Comm, send, recv []T, op Op[T], root int, block bool) (*Request, error) {
	if err := c.collReady(); err != nil {
		return nil, err
	}
	if err := c.checkRoot(root); err != nil {
		return nil, err
	}
	red, ordered, logical, err := reduction("Reduce", op)
	if err != nil {
		return nil, err
	}
	count := len(send)
	in := coll.Region{Buf: coll.BufSend, Len: count}
	if c.Rank() == root {
		if send == nil {
			count = len(recv)
			in = coll.Region{Buf: coll.BufRecv, Len: count}
		} else if len(recv) != len(send) {
			return nil, lenErr("Reduce", "the root's recv", len(recv), len(send))
		}
	} else {
		recv = nil
	}
	if t := truthIf(logical, op, send, recv); t != nil {
		send, in.Buf = t, coll.BufSend
	}
	e, n, me := elemSize[T](), c.Size(), c.Rank()
	if t := c.shmTeamRead(block, count*e); t != nil {
		in := send
		if in == nil {
			in = recv
		}
		return nil, fatalCheck(t.ReduceRead(asBytes(in), asBytes(recv), root, red, !ordered))
	}
	if t := c.shmTeamReduce(block, count*e, e); t != nil {
		in := send
		if in == nil {
			in = recv
		}
		return nil, fatalCheck(shmReduce(t, asBytes(in), asBytes(recv), root, e, red))
	}
	s := sched(coll.Key{Coll: coll.KReduce, N: n, R: me, Root: root, Count: count, Elem: e, In: in, Flag: ordered},
		func(cfg coll.Config) coll.Schedule { return cfg.ReduceSchedule(n, me, root, count, e, in, ordered) })
	return c.launch(block, s, e, asBytes(send), asBytes(recv), red)
}

// Allreduce combines every rank's send with op into every rank's recv;
// every rank gets the same bits.
func Allreduce[T Scalar](c *Comm, send, recv []T, op Op[T]) error {
	_, err := iallreduce(c, send, recv, op, true)
	return err
}

// Iallreduce is the nonblocking Allreduce.
func Iallreduce[T Scalar](c *Comm, send, recv []T, op Op[T]) (*Request, error) {
	return iallreduce(c, send, recv, op, false)
}

func iallreduce[T Scalar](c *Comm, send, recv []T, op Op[T], block bool) (*Request, error) {
	if err := c.collReady(); err != nil {
		return nil, err
	}
	red, ordered, logical, err := reduction("Allreduce", op)
	if err != nil {
		return nil, err
	}
	if send != nil {
		if len(recv) != len(send) {
			return nil, lenErr("Allreduce", "recv", len(recv), len(send))
		}
		if len(send) > 0 && !logical && &send[0] != &recv[0] {
			if t := c.shmTeamRead(block, len(send)*elemSize[T]()); t != nil {
				return nil, fatalCheck(t.AllreduceRead(asBytes(send), asBytes(recv), red))
			}
			if t := c.shmTeamSplitRead(block, len(send)*elemSize[T]()); t != nil {
				return nil, fatalCheck(t.AllreduceSplitRead(asBytes(send), asBytes(recv), elemSize[T](), red))
			}
		}
		coll.CopyBytes(asBytes(recv), asBytes(send))
	}
	if t := truthIf(logical, op, nil, recv); t != nil {
		copy(recv, t)
	}
	e, n, me, count := elemSize[T](), c.Size(), c.Rank(), len(recv)
	if t := c.shmTeamAllreduce(block, count*e); t != nil {
		return nil, fatalCheck(t.Allreduce(asBytes(recv), red))
	}
	s := sched(coll.Key{Coll: coll.KAllreduce, N: n, R: me, Count: count, Elem: e, Flag: ordered},
		func(cfg coll.Config) coll.Schedule { return cfg.AllreduceSchedule(n, me, count, e, ordered) })
	return c.launch(block, s, e, nil, asBytes(recv), red)
}

// Scan puts the reduction of ranks 0..Rank()'s send into recv (inclusive
// prefix, in rank order).
func Scan[T Scalar](c *Comm, send, recv []T, op Op[T]) error {
	return scan(c, send, recv, op, false)
}

// Exscan puts the reduction of ranks 0..Rank()-1's send into recv; rank
// 0's recv is untouched.
func Exscan[T Scalar](c *Comm, send, recv []T, op Op[T]) error {
	return scan(c, send, recv, op, true)
}

func scan[T Scalar](c *Comm, send, recv []T, op Op[T], exclusive bool) error {
	call := "Scan"
	if exclusive {
		call = "Exscan"
	}
	if err := c.collReady(); err != nil {
		return err
	}
	red, _, logical, err := reduction(call, op)
	if err != nil {
		return err
	}
	in := coll.Region{Buf: coll.BufRecv, Len: len(recv)}
	if send != nil {
		if len(recv) != len(send) {
			return lenErr(call, "recv", len(recv), len(send))
		}
		in.Buf = coll.BufSend
	}
	if t := truthIf(logical, op, send, recv); t != nil {
		send, in.Buf = t, coll.BufSend
	}
	n, me, count := c.Size(), c.Rank(), len(recv)
	s := sched(coll.Key{Coll: coll.KScan, N: n, R: me, Count: count, In: in, Flag: exclusive},
		func(coll.Config) coll.Schedule { return coll.ScanRecursiveDoubling(n, me, count, in, exclusive) })
	return c.run(s, elemSize[T](), asBytes(send), asBytes(recv), red)
}

// ReduceScatterBlock reduces every rank's send (Size() blocks of
// len(recv)) and gives rank i block i of the result.
func ReduceScatterBlock[T Scalar](c *Comm, send, recv []T, op Op[T]) error {
	if err := c.collReady(); err != nil {
		return err
	}
	red, ordered, logical, err := reduction("ReduceScatterBlock", op)
	if err != nil {
		return err
	}
	if len(send) != c.Size()*len(recv) {
		return lenErr("ReduceScatterBlock", "send", len(send), c.Size()*len(recv))
	}
	if t := truthIf(logical, op, send, nil); t != nil {
		send = t
	}
	n, me, rcount := c.Size(), c.Rank(), len(recv)
	s := sched(coll.Key{Coll: coll.KReduceScatterBlock, N: n, R: me, Count: rcount, Flag: ordered},
		func(cfg coll.Config) coll.Schedule { return cfg.ReduceScatterBlockSchedule(n, me, rcount, ordered) })
	return c.run(s, elemSize[T](), asBytes(send), asBytes(recv), red)
}

// Gather puts every rank's send, in rank order, into root's recv
// (len(recv) == Size()*len(send)); send == nil at root: its block is
// already in place.
func Gather[T Scalar](c *Comm, send, recv []T, root int) error {
	if err := c.collReady(); err != nil {
		return err
	}
	if err := c.checkRoot(root); err != nil {
		return err
	}
	n, me := c.Size(), c.Rank()
	count := len(send)
	in := coll.Region{Buf: coll.BufSend, Len: count}
	if me == root {
		if send == nil {
			if len(recv)%n != 0 {
				return fatalCheck(fmt.Errorf("gorun: Gather: in place, recv's %d elements are not %d equal blocks: %w", len(recv), n, ErrInvalidArg))
			}
			count = len(recv) / n
			in = coll.Region{Buf: coll.BufRecv, Off: root * count, Len: count}
		} else if len(recv) != n*count {
			return lenErr("Gather", "the root's recv", len(recv), n*count)
		}
	} else {
		recv = nil
	}
	e := elemSize[T]()
	s := sched(coll.Key{Coll: coll.KGather, N: n, R: me, Root: root, Count: count, Elem: e, In: in},
		func(cfg coll.Config) coll.Schedule { return cfg.GatherSchedule(n, me, root, count, e, in) })
	return c.run(s, e, asBytes(send), asBytes(recv), nil)
}

// Scatter gives rank i block i of root's send (len(send) ==
// Size()*len(recv)).
func Scatter[T Scalar](c *Comm, send, recv []T, root int) error {
	if err := c.collReady(); err != nil {
		return err
	}
	if err := c.checkRoot(root); err != nil {
		return err
	}
	n, me := c.Size(), c.Rank()
	if me == root {
		if len(send) != n*len(recv) {
			return lenErr("Scatter", "the root's send", len(send), n*len(recv))
		}
	} else {
		send = nil
	}
	e, count := elemSize[T](), len(recv)
	s := sched(coll.Key{Coll: coll.KScatter, N: n, R: me, Root: root, Count: count, Elem: e},
		func(cfg coll.Config) coll.Schedule { return cfg.ScatterSchedule(n, me, root, count, e) })
	return c.run(s, e, asBytes(send), asBytes(recv), nil)
}

// Allgather puts every rank's send, in rank order, into every rank's recv
// (len(recv) == Size()*len(send)); send == nil: this rank's block is
// already in place.
func Allgather[T Scalar](c *Comm, send, recv []T) error {
	_, err := iallgather(c, send, recv, true)
	return err
}

// Iallgather is the nonblocking Allgather.
func Iallgather[T Scalar](c *Comm, send, recv []T) (*Request, error) {
	return iallgather(c, send, recv, false)
}

func iallgather[T Scalar](c *Comm, send, recv []T, block bool) (*Request, error) {
	if err := c.collReady(); err != nil {
		return nil, err
	}
	n, me := c.Size(), c.Rank()
	var count int
	if send == nil {
		if len(recv)%n != 0 {
			return nil, fatalCheck(fmt.Errorf("gorun: Allgather: in place, recv's %d elements are not %d equal blocks: %w", len(recv), n, ErrInvalidArg))
		}
		count = len(recv) / n
	} else {
		count = len(send)
		if len(recv) != n*count {
			return nil, lenErr("Allgather", "recv", len(recv), n*count)
		}
		if t := c.shmTeamReadAllgather(block, count*elemSize[T]()); t != nil {
			return nil, fatalCheck(t.AllgatherRead(asBytes(send), asBytes(recv)))
		}
		coll.CopyBytes(asBytes(recv[me*count:]), asBytes(send))
	}
	e := elemSize[T]()
	if t := c.shmTeamReadAllgather(block, count*e); t != nil && send == nil {
		return nil, fatalCheck(t.AllgatherRead(asBytes(recv[me*count:(me+1)*count]), asBytes(recv)))
	}
	if t := c.shmTeamIf(block, count*e); t != nil {
		return nil, fatalCheck(t.Allgather(asBytes(recv)))
	}
	s := sched(coll.Key{Coll: coll.KAllgather, N: n, R: me, Count: count, Elem: e},
		func(cfg coll.Config) coll.Schedule { return cfg.AllgatherSchedule(n, me, count, e) })
	return c.launch(block, s, e, nil, asBytes(recv), nil)
}

// Alltoall sends block i of send (blocks of len(send)/Size()) to rank i,
// which puts it at block Rank() of its recv; send == nil: in place.
func Alltoall[T Scalar](c *Comm, send, recv []T) error {
	_, err := ialltoall(c, send, recv, true)
	return err
}

// Ialltoall is the nonblocking Alltoall.
func Ialltoall[T Scalar](c *Comm, send, recv []T) (*Request, error) {
	return ialltoall(c, send, recv, false)
}

func ialltoall[T Scalar](c *Comm, send, recv []T, block bool) (*Request, error) {
	if err := c.collReady(); err != nil {
		return nil, err
	}
	n, me := c.Size(), c.Rank()
	in := send
	if in == nil {
		in = recv
	}
	if len(in)%n != 0 {
		return nil, fatalCheck(fmt.Errorf("gorun: Alltoall: %d elements are not %d equal blocks: %w", len(in), n, ErrInvalidArg))
	}
	if len(recv) != len(in) {
		return nil, lenErr("Alltoall", "recv", len(recv), len(in))
	}
	e, count, inPlace := elemSize[T](), len(in)/n, send == nil
	if !inPlace && count > 0 && &send[0] != &recv[0] {
		if t := c.shmTeamReadAlltoall(block, n*count*e, count*e); t != nil {
			return nil, fatalCheck(t.AlltoallRead(asBytes(send), asBytes(recv)))
		}
	}
	if t := c.shmTeamAlltoall(block, n*count*e, count*e); t != nil {
		return nil, fatalCheck(t.Alltoall(asBytes(in), asBytes(recv)))
	}
	over := block && c.shmOver()
	s := sched(coll.Key{Coll: coll.KAlltoall, N: n, R: me, Count: count, Elem: e, Flag: inPlace, Over: over},
		func(cfg coll.Config) coll.Schedule { return cfg.AlltoallScheduleOver(n, me, count, e, inPlace, over) })
	return c.launch(block, s, e, asBytes(send), asBytes(recv), nil)
}

// checkV checks counts and displacements for n blocks in a buffer of size
// elements; with disjoint, blocks must not overlap (a receive side).
func checkV(call, what string, counts, displs []int, n, size int, disjoint bool) error {
	if len(counts) != n || len(displs) != n {
		return fatalCheck(fmt.Errorf("gorun: %s: %d %s counts and %d displacements, want %d of each: %w", call, len(counts), what, len(displs), n, ErrInvalidArg))
	}
	for i := 0; i < n; i++ {
		if counts[i] < 0 || displs[i] < 0 || displs[i]+counts[i] > size {
			return fatalCheck(fmt.Errorf("gorun: %s: %s block %d (count %d at displacement %d) is outside the buffer of %d elements: %w",
				call, what, i, counts[i], displs[i], size, ErrInvalidArg))
		}
	}
	if disjoint {
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				if counts[i] > 0 && counts[j] > 0 && displs[i] < displs[j]+counts[j] && displs[j] < displs[i]+counts[i] {
					return fatalCheck(fmt.Errorf("gorun: %s: %s blocks %d and %d overlap: %w", call, what, i, j, ErrInvalidArg))
				}
			}
		}
	}
	return nil
}

// Gatherv puts rank i's send at root's recv[displs[i]:displs[i]+counts[i]]
// (counts and displs are used at root only; send == nil at root: in place).
func Gatherv[T Scalar](c *Comm, send, recv []T, counts, displs []int, root int) error {
	if err := c.collReady(); err != nil {
		return err
	}
	if err := c.checkRoot(root); err != nil {
		return err
	}
	n, me := c.Size(), c.Rank()
	in := coll.Region{Buf: coll.BufSend, Len: len(send)}
	if me == root {
		if err := checkV("Gatherv", "recv", counts, displs, n, len(recv), true); err != nil {
			return err
		}
		if send == nil {
			in = coll.Region{Buf: coll.BufRecv, Off: displs[me], Len: counts[me]}
		} else if len(send) != counts[me] {
			return lenErr("Gatherv", "the root's send", len(send), counts[me])
		}
	} else {
		recv, counts, displs = nil, nil, nil
	}
	s := coll.GathervLinear(n, me, root, in, counts, displs)
	s.Coll = coll.KGatherv
	return c.run(s, elemSize[T](), asBytes(send), asBytes(recv), nil)
}

// Scatterv gives rank i root's send[displs[i]:displs[i]+counts[i]] in its
// recv (counts and displs are used at root only).
func Scatterv[T Scalar](c *Comm, send []T, counts, displs []int, recv []T, root int) error {
	if err := c.collReady(); err != nil {
		return err
	}
	if err := c.checkRoot(root); err != nil {
		return err
	}
	n, me := c.Size(), c.Rank()
	if me == root {
		if err := checkV("Scatterv", "send", counts, displs, n, len(send), false); err != nil {
			return err
		}
		if counts[me] != len(recv) {
			return lenErr("Scatterv", "the root's recv", len(recv), counts[me])
		}
	} else {
		send, counts, displs = nil, nil, nil
	}
	s := coll.ScattervLinear(n, me, root, counts, displs, len(recv))
	s.Coll = coll.KScatterv
	return c.run(s, elemSize[T](), asBytes(send), asBytes(recv), nil)
}

// Allgatherv puts rank i's send at every rank's
// recv[displs[i]:displs[i]+counts[i]]; send == nil: in place.
func Allgatherv[T Scalar](c *Comm, send, recv []T, counts, displs []int) error {
	if err := c.collReady(); err != nil {
		return err
	}
	n, me := c.Size(), c.Rank()
	if err := checkV("Allgatherv", "recv", counts, displs, n, len(recv), true); err != nil {
		return err
	}
	if send != nil {
		if len(send) != counts[me] {
			return lenErr("Allgatherv", "send", len(send), counts[me])
		}
		coll.CopyBytes(asBytes(recv[displs[me]:]), asBytes(send))
	}
	s := coll.AllgathervRing(n, me, counts, displs)
	s.Coll = coll.KAllgatherv
	return c.run(s, elemSize[T](), nil, asBytes(recv), nil)
}

// Alltoallv sends send[sendDispls[i]:+sendCounts[i]] to rank i, which puts
// it at recv[recvDispls[me]:+recvCounts[me]].
func Alltoallv[T Scalar](c *Comm, send []T, sendCounts, sendDispls []int,
	recv []T, recvCounts, recvDispls []int) error {
	if err := c.collReady(); err != nil {
		return err
	}
	n, me := c.Size(), c.Rank()
	if err := checkV("Alltoallv", "send", sendCounts, sendDispls, n, len(send), false); err != nil {
		return err
	}
	if err := checkV("Alltoallv", "recv", recvCounts, recvDispls, n, len(recv), true); err != nil {
		return err
	}
	s := coll.AlltoallvPairwise(n, me, sendCounts, sendDispls, recvCounts, recvDispls, false)
	s.Coll = coll.KAlltoallv
	return c.run(s, elemSize[T](), asBytes(send), asBytes(recv), nil)
}
