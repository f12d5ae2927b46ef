package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/gorun-mpi/gorun"
	"github.com/gorun-mpi/gorun/tests/progs/internal/rankprog"
)

func init() {
	modes["all"] = all
	modes["args"] = args
	modes["truncate"] = truncate
	modes["nonblocking"] = nonblocking
	modes["goroutines"] = goroutines
	modes["stress"] = stress
	modes["determinism"] = determinism
}

// val is rank r's element i of a test vector.
func val(r, i int) int64 { return int64(r*1000 + i*7 + 1) }

func vec(r, n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = val(r, i)
	}
	return v
}

func same[T comparable](what string, got, want []T) {
	if !slices.Equal(got, want) {
		rankprog.Fail("%s: got %v, want %v", what, got, want)
	}
}

// affine elements (a, b) = x -> a*x + b, composed in order: associative,
// not commutative, so a wrong combination order shows.
func compose(acc, in []int64) {
	for i := 0; i+1 < len(acc); i += 2 {
		a1, b1, a2, b2 := acc[i], acc[i+1], in[i], in[i+1]
		acc[i], acc[i+1] = a1*a2, a2*b1+b2
	}
}

// all: every collective of the contract on the world and on a split, for
// several counts and every root, in place where allowed, checked against
// values computed locally.
func all() {
	comms := []*gorun.Comm{world}
	if world.Size() > 2 {
		s, err := world.Split(world.Rank()%2, -world.Rank())
		rankprog.Check(err, "Split")
		comms = append(comms, s)
	}
	for _, c := range comms {
		for _, count := range []int{0, 1, 5, 1000, 40000} {
			allOn(c, count)
		}
		// Blocks of 80 KiB: on more than 4 ranks sharing cores, coll/sm's
		// slots take them (shmTeamAlltoall), on up to 4 its reads.
		newCase(c, 10000).alltoalls()
	}
}

// allOn runs every collective on c with count elements per block and
// checks the results: the rooted ones for every root, then the others.
func allOn(c *gorun.Comm, count int) {
	t := newCase(c, count)
	rankprog.Check(c.Barrier(), "Barrier")
	for root := 0; root < t.n; root++ {
		t.rooted(root)
		t.rootedV(root)
	}
	t.reductions()
	t.allgathers()
	t.alltoalls()
}

// collCase is one communicator and block size under test.
type collCase struct {
	c     *gorun.Comm
	count int
	n, me int
}

func newCase(c *gorun.Comm, count int) *collCase {
	return &collCase{c: c, count: count, n: c.Size(), me: c.Rank()}
}

// what names a check with the case's size and count.
func (t *collCase) what(s string) string {
	return fmt.Sprintf("%s (size %d, count %d)", s, t.n, t.count)
}

// sum is the element-wise sum of vec(r, count) over ranks lo..hi-1.
func (t *collCase) sum(lo, hi int) []int64 {
	s := make([]int64, t.count)
	for r := lo; r < hi; r++ {
		for i := range s {
			s[i] += val(r, i)
		}
	}
	return s
}

// rankOrder is compose folded over ranks 0..n-1 of the pairs
// (r+2, 3r+1): what a user op in rank order must give.
func (t *collCase) rankOrder() []int64 {
	want := []int64{2, 1}
	for r := 1; r < t.n; r++ {
		compose(want, []int64{int64(r + 2), int64(r*3 + 1)})
	}
	return want
}

// rooted: Bcast, Reduce (in place and with a user op), Gather (in place)
// and Scatter from root.
func (t *collCase) rooted(root int) {
	c, count, n, me, what := t.c, t.count, t.n, t.me, t.what
	// Bcast.
	buf := make([]int64, count)
	if me == root {
		buf = vec(root, count)
	}
	rankprog.Check(gorun.Bcast(c, buf, root), what("Bcast"))
	same(what("Bcast"), buf, vec(root, count))
	// Reduce, and in place at the root.
	recv := make([]int64, count)
	rankprog.Check(gorun.Reduce(c, vec(me, count), recv, gorun.Sum[int64], root), what("Reduce"))
	if me == root {
		same(what("Reduce"), recv, t.sum(0, n))
		recv = vec(me, count)
		rankprog.Check(gorun.Reduce(c, nil, recv, gorun.Sum[int64], root), what("Reduce in place"))
		same(what("Reduce in place"), recv, t.sum(0, n))
	} else {
		rankprog.Check(gorun.Reduce(c, vec(me, count), nil, gorun.Sum[int64], root), what("Reduce in place (non-root)"))
	}
	// Reduce with a user Op: rank order.
	aff := make([]int64, 2)
	aff[0], aff[1] = int64(me+2), int64(me*3+1)
	res := make([]int64, 2)
	rankprog.Check(gorun.Reduce(c, aff, res, compose, root), what("Reduce user op"))
	if me == root {
		same(what("Reduce user op (rank order)"), res, t.rankOrder())
	}
	// Gather / Scatter.
	all := make([]int64, n*count)
	if me != root {
		all = nil
	}
	rankprog.Check(gorun.Gather(c, vec(me, count), all, root), what("Gather"))
	if me == root {
		for r := 0; r < n; r++ {
			same(what("Gather block"), all[r*count:(r+1)*count], vec(r, count))
		}
		// In place at root.
		clear(all)
		copy(all[root*count:], vec(root, count))
		rankprog.Check(gorun.Gather(c, nil, all, root), what("Gather in place"))
		for r := 0; r < n; r++ {
			same(what("Gather in place block"), all[r*count:(r+1)*count], vec(r, count))
		}
	} else {
		rankprog.Check(gorun.Gather(c, vec(me, count), nil, root), what("Gather in place (non-root)"))
	}
	part := make([]int64, count)
	rankprog.Check(gorun.Scatter(c, all, part, root), what("Scatter"))
	same(what("Scatter"), part, vec(me, count))
}

// rootedV: Gatherv and Scatterv from root, with zero counts and gaps.
func (t *collCase) rootedV(root int) {
	c, count, n, me, what := t.c, t.count, t.n, t.me, t.what
	// Gatherv / Scatterv with zero counts and gaps.
	counts, displs := make([]int, n), make([]int, n)
	off := 3
	for r := range counts {
		counts[r] = (r * 2) % 3 * count / 4
		displs[r] = off
		off += counts[r] + r%2
	}
	gv := make([]int64, off)
	rankprog.Check(gorun.Gatherv(c, vec(me, counts[me]), gv, counts, displs, root), what("Gatherv"))
	if me == root {
		for r := 0; r < n; r++ {
			same(what("Gatherv block"), gv[displs[r]:displs[r]+counts[r]], vec(r, counts[r]))
		}
	}
	sv := make([]int64, counts[me])
	rankprog.Check(gorun.Scatterv(c, gv, counts, displs, sv, root), what("Scatterv"))
	same(what("Scatterv"), sv, vec(me, counts[me]))
}

// reductions: Allreduce (in place, Max, a user op in rank order), Scan,
// Exscan and ReduceScatterBlock.
func (t *collCase) reductions() {
	c, count, n, me, what := t.c, t.count, t.n, t.me, t.what
	// Allreduce, in place too; a user op in rank order.
	recv := make([]int64, count)
	rankprog.Check(gorun.Allreduce(c, vec(me, count), recv, gorun.Sum[int64]), what("Allreduce"))
	same(what("Allreduce"), recv, t.sum(0, n))
	recv = vec(me, count)
	rankprog.Check(gorun.Allreduce(c, nil, recv, gorun.Sum[int64]), what("Allreduce in place"))
	same(what("Allreduce in place"), recv, t.sum(0, n))
	mx := []float64{float64(me), -float64(me)}
	rankprog.Check(gorun.Allreduce(c, nil, mx, gorun.Max[float64]), what("Allreduce Max"))
	same(what("Allreduce Max"), mx, []float64{float64(n - 1), 0})
	aff := []int64{int64(me + 2), int64(me*3 + 1)}
	rankprog.Check(gorun.Allreduce(c, nil, aff, compose), what("Allreduce user op"))
	same(what("Allreduce user op (rank order)"), aff, t.rankOrder())
	// Scan and Exscan.
	rankprog.Check(gorun.Scan(c, vec(me, count), recv, gorun.Sum[int64]), what("Scan"))
	same(what("Scan"), recv, t.sum(0, me+1))
	marker := make([]int64, count)
	for i := range marker {
		marker[i] = -7
	}
	ex := slices.Clone(marker)
	rankprog.Check(gorun.Exscan(c, vec(me, count), ex, gorun.Sum[int64]), what("Exscan"))
	if me == 0 {
		same(what("Exscan rank 0 untouched"), ex, marker)
	} else {
		same(what("Exscan"), ex, t.sum(0, me))
	}
	// ReduceScatterBlock.
	big := make([]int64, n*count)
	for i := range big {
		big[i] = val(me, i)
	}
	blk := make([]int64, count)
	rankprog.Check(gorun.ReduceScatterBlock(c, big, blk, gorun.Sum[int64]), what("ReduceScatterBlock"))
	for i := range blk {
		w := int64(0)
		for r := 0; r < n; r++ {
			w += val(r, me*count+i)
		}
		if blk[i] != w {
			rankprog.Fail("%s: element %d = %d, want %d", what("ReduceScatterBlock"), i, blk[i], w)
		}
	}
}

// allgathers: Allgather (in place too) and Allgatherv with gaps.
func (t *collCase) allgathers() {
	c, count, n, me, what := t.c, t.count, t.n, t.me, t.what
	// Allgather, in place too; Allgatherv.
	ag := make([]int64, n*count)
	rankprog.Check(gorun.Allgather(c, vec(me, count), ag), what("Allgather"))
	for r := 0; r < n; r++ {
		same(what("Allgather block"), ag[r*count:(r+1)*count], vec(r, count))
	}
	clear(ag)
	copy(ag[me*count:], vec(me, count))
	rankprog.Check(gorun.Allgather(c, nil, ag), what("Allgather in place"))
	for r := 0; r < n; r++ {
		same(what("Allgather in place block"), ag[r*count:(r+1)*count], vec(r, count))
	}
	counts, displs := make([]int, n), make([]int, n)
	off := 1
	for r := range counts {
		counts[r] = (r + 1) % 3 * count / 3
		displs[r] = off
		off += counts[r] + 2
	}
	agv := make([]int64, off)
	rankprog.Check(gorun.Allgatherv(c, vec(me, counts[me]), agv, counts, displs), what("Allgatherv"))
	for r := 0; r < n; r++ {
		same(what("Allgatherv block"), agv[displs[r]:displs[r]+counts[r]], vec(r, counts[r]))
	}
}

// alltoalls: Alltoall (in place too) and Alltoallv with gaps.
func (t *collCase) alltoalls() {
	c, count, n, me, what := t.c, t.count, t.n, t.me, t.what
	// Alltoall (block for d from me: vec(me*100+d)), in place too; Alltoallv.
	send := make([]int64, 0, n*count)
	for d := 0; d < n; d++ {
		send = append(send, vec(me*100+d, count)...)
	}
	a2a := make([]int64, n*count)
	rankprog.Check(gorun.Alltoall(c, send, a2a), what("Alltoall"))
	for s := 0; s < n; s++ {
		same(what("Alltoall block"), a2a[s*count:(s+1)*count], vec(s*100+me, count))
	}
	copy(a2a, send)
	rankprog.Check(gorun.Alltoall(c, nil, a2a), what("Alltoall in place"))
	for s := 0; s < n; s++ {
		same(what("Alltoall in place block"), a2a[s*count:(s+1)*count], vec(s*100+me, count))
	}
	sc := func(s, d int) int { return (s + d) % 3 * count / 5 }
	scs, sds, rcs, rds := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
	so, ro := 0, 4
	for d := 0; d < n; d++ {
		scs[d], sds[d] = sc(me, d), so
		so += scs[d] + 1
		rcs[d], rds[d] = sc(d, me), ro
		ro += rcs[d] + 3
	}
	sv := make([]int64, so)
	for d := 0; d < n; d++ {
		copy(sv[sds[d]:], vec(me*100+d, scs[d]))
	}
	rv := make([]int64, ro)
	rankprog.Check(gorun.Alltoallv(c, sv, scs, sds, rv, rcs, rds), what("Alltoallv"))
	for s := 0; s < n; s++ {
		same(what("Alltoallv block"), rv[rds[s]:rds[s]+rcs[s]], vec(s*100+me, rcs[s]))
	}
}

// args: argument errors are reported by the call, before anything is sent.
func args() {
	n := world.Size()
	buf := make([]int32, 4)
	isErr := func(err, want error, what string) {
		if !errors.Is(err, want) {
			rankprog.Fail("%s: got %v, want %v", what, err, want)
		}
	}
	isErr(gorun.Bcast(world, buf, n), gorun.ErrInvalidRank, "Bcast root n")
	isErr(gorun.Bcast(world, buf, -1), gorun.ErrInvalidRank, "Bcast root -1")
	if world.Rank() == 0 { // only the root can tell: the others do not call
		isErr(gorun.Reduce(world, buf, make([]int32, 3), gorun.Sum[int32], 0), gorun.ErrInvalidArg, "Reduce short recv")
		isErr(gorun.Gather(world, buf, make([]int32, 4*n-1), 0), gorun.ErrInvalidArg, "Gather short recv")
		isErr(gorun.Scatter(world, make([]int32, 4*n+1), buf, 0), gorun.ErrInvalidArg, "Scatter long send")
	}
	isErr(gorun.Allreduce(world, buf, make([]int32, 5), gorun.Sum[int32]), gorun.ErrInvalidArg, "Allreduce long recv")
	isErr(gorun.Allreduce(world, buf, buf, nil), gorun.ErrInvalidArg, "Allreduce nil op")
	isErr(gorun.Allgather(world, buf, make([]int32, 4*n+1)), gorun.ErrInvalidArg, "Allgather recv")
	isErr(gorun.Alltoall(world, make([]int32, n+1), make([]int32, n+1)), ifNot1(gorun.ErrInvalidArg), "Alltoall blocks")
	isErr(gorun.ReduceScatterBlock(world, buf, make([]int32, 4), gorun.Sum[int32]), ifNot1(gorun.ErrInvalidArg), "ReduceScatterBlock")
	counts, displs := make([]int, n), make([]int, n)
	for i := range counts {
		counts[i], displs[i] = 2, 0 // every block at 0: overlapping
	}
	if n > 1 {
		isErr(gorun.Allgatherv(world, make([]int32, 2), make([]int32, 2*n), counts, displs), gorun.ErrInvalidArg, "Allgatherv overlap")
	}
	isErr(gorun.Allgatherv(world, make([]int32, 2), make([]int32, 2*n), counts[:n-1], displs), gorun.ErrInvalidArg, "Allgatherv short counts")
	displs[0] = 2*n - 1
	if world.Rank() == 0 {
		isErr(gorun.Gatherv(world, make([]int32, 2), make([]int32, 2*n), counts, displs, 0), gorun.ErrInvalidArg, "Gatherv out of range")
	}
	var nilComm *gorun.Comm
	isErr(gorun.Bcast(nilComm, buf, 0), gorun.ErrInvalidComm, "Bcast on nil")
	isErr(nilComm.Barrier(), gorun.ErrInvalidComm, "Barrier on nil")
	isErr(nilComm.Send(nil, 0, 0), gorun.ErrInvalidComm, "Send on nil")
	_, err := nilComm.Recv(nil, 0, 0)
	isErr(err, gorun.ErrInvalidComm, "Recv on nil")
	_, err = nilComm.Isend(nil, 0, 0)
	isErr(err, gorun.ErrInvalidComm, "Isend on nil")
	_, err = nilComm.Irecv(nil, 0, 0)
	isErr(err, gorun.ErrInvalidComm, "Irecv on nil")
	_, _, err = nilComm.Iprobe(0, 0)
	isErr(err, gorun.ErrInvalidComm, "Iprobe on nil")
	_, _, _, err = nilComm.Improbe(0, 0)
	isErr(err, gorun.ErrInvalidComm, "Improbe on nil")
	_, err = nilComm.Sendrecv(nil, 0, 0, nil, 0, 0)
	isErr(err, gorun.ErrInvalidComm, "Sendrecv on nil")
	_, err = nilComm.Dup()
	isErr(err, gorun.ErrInvalidComm, "Dup of nil")
	isErr(nilComm.Free(), gorun.ErrInvalidComm, "Free of nil")
	d, err := world.Dup()
	rankprog.Check(err, "Dup")
	rankprog.Check(d.Free(), "Free")
	isErr(gorun.Allreduce(d, buf, make([]int32, 4), gorun.Sum[int32]), gorun.ErrInvalidComm, "Allreduce on freed")
	if _, err := gorun.Ibarrier(d); !errors.Is(err, gorun.ErrInvalidComm) {
		rankprog.Fail("Ibarrier on a freed comm: %v", err)
	}
	// Nothing was sent: a collective still works.
	v := []int32{1}
	rankprog.Check(gorun.Allreduce(world, nil, v, gorun.Sum[int32]), "Allreduce after errors")
	if int(v[0]) != n {
		rankprog.Fail("Allreduce after errors: %d, want %d", v[0], n)
	}
}

// truncate (2 ranks): a length mismatch only the receiving rank sees
// gives it ErrTruncate, in an error that names the collective and both
// lengths, not the internal tag its message travelled with; the sending
// rank's call succeeds.
func truncate() {
	if world.Size() != 2 {
		rankprog.Fail("truncate runs on 2 ranks, not %d", world.Size())
	}
	me := world.Rank()
	want := func(err error, what string, parts ...string) {
		if !errors.Is(err, gorun.ErrTruncate) {
			rankprog.Fail("%s: %v; want ErrTruncate", what, err)
		}
		for _, p := range parts {
			if !strings.Contains(err.Error(), p) {
				rankprog.Fail("%s: error %q does not say %q", what, err, p)
			}
		}
		if strings.Contains(err.Error(), "tag") {
			rankprog.Fail("%s: error %q names a tag, which is internal to collectives", what, err)
		}
	}
	// Gatherv: rank 1 sends 3 int32 where the root expects 2.
	err := gorun.Gatherv(world, make([]int32, 2+me), make([]int32, 4), []int{2, 2}, []int{0, 2}, 0)
	if me == 0 {
		want(err, "Gatherv at the root", "Gatherv: rank 1 sent 12 bytes", "holds 8")
	} else {
		rankprog.Check(err, "Gatherv from the longer sender")
	}
	// Ibcast: the root's buffer is 4 int64, rank 1's 2.
	r, err := gorun.Ibcast(world, make([]int64, 4-2*me), 0)
	rankprog.Check(err, "Ibcast")
	_, err = r.Wait()
	if me == 1 {
		want(err, "Ibcast's Wait at rank 1", "Bcast: rank 0 sent 32 bytes", "holds 16")
	} else {
		rankprog.Check(err, "Ibcast's Wait at the root")
	}
}

func ifNot1(err error) error {
	if world.Size() == 1 {
		return nil
	}
	return err
}

// nonblocking: several nonblocking collectives outstanding at once,
// completed in different orders on different ranks, while wildcard
// point-to-point receives are posted on the same communicator: neither
// takes the other's messages.
func nonblocking() {
	n, me := world.Size(), world.Rank()
	wbuf := make([]byte, 8)
	wild, err := world.Irecv(wbuf, gorun.AnySource, gorun.AnyTag)
	rankprog.Check(err, "wildcard Irecv")
	for iter := 0; iter < 20; iter++ {
		bar, err := gorun.Ibarrier(world)
		rankprog.Check(err, "Ibarrier")
		if err := bar.Cancel(); err == nil || !strings.Contains(err.Error(), "collective") {
			rankprog.Fail("Cancel of an Ibarrier returned %v; want an error naming the collective (it cannot be cancelled)", err)
		}
		bc := make([]float64, 300)
		if me == iter%n {
			for i := range bc {
				bc[i] = float64(iter + i)
			}
		}
		rb, err := gorun.Ibcast(world, bc, iter%n)
		rankprog.Check(err, "Ibcast")
		ar := []int64{int64(me), 1}
		ra, err := gorun.Iallreduce(world, nil, ar, gorun.Sum[int64])
		rankprog.Check(err, "Iallreduce")
		red := make([]int32, 2)
		rr, err := gorun.Ireduce(world, []int32{int32(me), 2}, red, gorun.Sum[int32], 0)
		rankprog.Check(err, "Ireduce")
		ag := make([]uint16, n)
		rg, err := gorun.Iallgather(world, []uint16{uint16(me)}, ag)
		rankprog.Check(err, "Iallgather")
		a2 := make([]int8, n)
		s2 := make([]int8, n)
		for d := range s2 {
			s2[d] = int8(me*10 + d)
		}
		rt, err := gorun.Ialltoall(world, s2, a2)
		rankprog.Check(err, "Ialltoall")
		reqs := []*gorun.Request{bar, rb, ra, rr, rg, rt}
		// Complete in an order that differs by rank and iteration.
		k := (me + iter) % len(reqs)
		order := append(slices.Clone(reqs[k:]), reqs[:k]...)
		if me%2 == 1 {
			slices.Reverse(order)
		}
		if iter%3 == 0 {
			for {
				i, _, err := gorun.WaitAny(reqs...)
				rankprog.Check(err, "WaitAny")
				if i < 0 {
					break
				}
			}
		} else {
			for _, r := range order {
				_, err := r.Wait()
				rankprog.Check(err, "Wait")
			}
		}
		for i := range bc {
			if bc[i] != float64(iter+i) {
				rankprog.Fail("Ibcast iteration %d: element %d = %v", iter, i, bc[i])
			}
		}
		same("Iallreduce", ar, []int64{int64(n * (n - 1) / 2), int64(n)})
		if me == 0 {
			same("Ireduce", red, []int32{int32(n * (n - 1) / 2), int32(2 * n)})
		}
		for r := 0; r < n; r++ {
			if ag[r] != uint16(r) || a2[r] != int8(r*10+me) {
				rankprog.Fail("Iallgather/Ialltoall iteration %d: %v %v", iter, ag, a2)
			}
		}
		if _, done, _ := wild.Test(); done {
			rankprog.Fail("the wildcard receive took a collective's message")
		}
	}
	rankprog.Check(world.Barrier(), "Barrier") // everyone has checked the wildcard
	rankprog.Check(world.Send([]byte("p2p"), (me+1)%n, 77), "send")
	st, err := wild.Wait()
	rankprog.Check(err, "wildcard Wait")
	if st.Tag != 77 || string(wbuf[:st.Count]) != "p2p" || st.Source != (me+n-1)%n {
		rankprog.Fail("wildcard got %+v %q", st, wbuf[:st.Count])
	}
}

// goroutines: collectives on several split communicators at once, one
// goroutine per communicator.
func goroutines() {
	n, me := world.Size(), world.Rank()
	var comms []*gorun.Comm
	for k := 0; k < 4; k++ {
		s, err := world.Split(me%(k+1), me)
		rankprog.Check(err, "Split")
		comms = append(comms, s)
	}
	var wg sync.WaitGroup
	for k, c := range comms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := 0; it < 100; it++ {
				v := []int64{int64(c.Rank()), int64(k)}
				rankprog.Check(gorun.Allreduce(c, nil, v, gorun.Sum[int64]), "Allreduce")
				m := c.Size()
				if v[0] != int64(m*(m-1)/2) || v[1] != int64(k*m) {
					rankprog.Fail("split %d iteration %d: %v", k, it, v)
				}
				b := []int32{int32(it)}
				rankprog.Check(gorun.Bcast(c, b, it%m), "Bcast")
				rankprog.Check(c.Barrier(), "Barrier")
			}
		}()
	}
	wg.Wait()
	_ = n
}

// stress: 2000 iterations of collectives with changing roots.
func stress() {
	n, me := world.Size(), world.Rank()
	for it := 0; it < 2000; it++ {
		root := (it * 7) % n
		count := 1 + it%37
		b := make([]int32, count)
		if me == root {
			for i := range b {
				b[i] = int32(it + i)
			}
		}
		rankprog.Check(gorun.Bcast(world, b, root), "Bcast")
		r := make([]int32, count)
		rankprog.Check(gorun.Reduce(world, b, r, gorun.Sum[int32], (root+1)%n), "Reduce")
		if me == (root+1)%n {
			for i := range r {
				if r[i] != int32(n*(it+i)) {
					rankprog.Fail("iteration %d: Reduce element %d = %d", it, i, r[i])
				}
			}
		}
		if it%10 == 0 {
			rankprog.Check(gorun.Allreduce(world, nil, r[:1], gorun.Max[int32]), "Allreduce")
		}
	}
}

// determinism: a float64 Allreduce whose result depends on the order of
// additions gives the same bits on every rank, for every algorithm
// (100000 elements: 800 KB per rank, which oversubscribed ranks fold a
// part each of, coll/shm's AllreduceSplitRead).
func determinism() {
	n, me := world.Size(), world.Rank()
	for _, count := range []int{3, 20000, 100000} {
		v := make([]float64, count)
		for i := range v {
			v[i] = math.Pow(10, float64((me*7+i)%17-8)) * (1 + float64(me)/3)
		}
		out := make([]float64, count)
		rankprog.Check(gorun.Allreduce(world, v, out, gorun.Sum[float64]), "Allreduce")
		bits := make([]uint64, count)
		for i := range out {
			bits[i] = math.Float64bits(out[i])
		}
		all := make([]uint64, n*count)
		rankprog.Check(gorun.Allgather(world, bits, all), "Allgather")
		for r := 0; r < n; r++ {
			same(fmt.Sprintf("Allreduce bits of rank %d vs rank %d (count %d)", r, me, count), all[r*count:(r+1)*count], bits)
		}
	}
}
