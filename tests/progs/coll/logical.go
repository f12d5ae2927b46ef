package main

import (
	"fmt"
	"slices"

	"github.com/gorun-mpi/gorun"
	"github.com/gorun-mpi/gorun/tests/progs/internal/rankprog"
)

func init() { modes["logical"] = logical }

// logical: LAnd, LOr and LXor give 1 or 0 from every reduction, also where
// nothing is combined (one rank, rank 0's Scan, rank 1's Exscan), and leave
// the caller's send untouched (and rank 0's recv of an in-place Exscan).
func logical() {
	n, me := world.Size(), world.Rank()
	// rank r's element i is 0 when (r+i)%3 == 0, else 5*(r+1)+i.
	input := func(r int) []int32 {
		v := make([]int32, 6)
		for i := range v {
			if (r+i)%3 != 0 {
				v[i] = int32(5*(r+1) + i)
			}
		}
		return v
	}
	ops := []struct {
		name string
		op   gorun.Op[int32]
		f    func(a, b bool) bool
	}{
		{"LAnd", gorun.LAnd[int32], func(a, b bool) bool { return a && b }},
		{"LOr", gorun.LOr[int32], func(a, b bool) bool { return a || b }},
		{"LXor", gorun.LXor[int32], func(a, b bool) bool { return a != b }},
	}
	// want is the reduction of ranks lo..hi-1 (1 or 0 per element).
	for _, o := range ops {
		want := func(lo, hi int) []int32 {
			out := make([]int32, 6)
			for i := range out {
				t := input(lo)[i] != 0
				for r := lo + 1; r < hi; r++ {
					t = o.f(t, input(r)[i] != 0)
				}
				if t {
					out[i] = 1
				}
			}
			return out
		}
		what := func(call string) string { return fmt.Sprintf("%s %s on rank %d of %d", call, o.name, me, n) }
		send := input(me)
		recv := make([]int32, 6)
		rankprog.Check(gorun.Allreduce(world, send, recv, o.op), "Allreduce")
		same(what("Allreduce"), recv, want(0, n))
		same(what("Allreduce's send"), send, input(me))
		recv = input(me)
		rankprog.Check(gorun.Allreduce(world, nil, recv, o.op), "Allreduce")
		same(what("Allreduce in place"), recv, want(0, n))
		root := n - 1
		recv = make([]int32, 6)
		rankprog.Check(gorun.Reduce(world, send, recv, o.op, root), "Reduce")
		if me == root {
			same(what("Reduce"), recv, want(0, n))
			recv = input(me)
			rankprog.Check(gorun.Reduce(world, nil, recv, o.op, root), "Reduce")
			same(what("Reduce in place"), recv, want(0, n))
		} else {
			rankprog.Check(gorun.Reduce(world, send, nil, o.op, root), "Reduce")
		}
		recv = make([]int32, 6)
		rankprog.Check(gorun.Scan(world, send, recv, o.op), "Scan")
		same(what("Scan"), recv, want(0, me+1))
		recv = input(me)
		rankprog.Check(gorun.Scan(world, nil, recv, o.op), "Scan")
		same(what("Scan in place"), recv, want(0, me+1))
		recv = input(me)
		rankprog.Check(gorun.Exscan(world, nil, recv, o.op), "Exscan")
		if me == 0 {
			same(what("Exscan in place (untouched)"), recv, input(me))
		} else {
			same(what("Exscan in place"), recv, want(0, me))
		}
		same(what("Scan's send"), send, input(me))
		blocks := slices.Repeat(send, n)
		recv = make([]int32, 6)
		rankprog.Check(gorun.ReduceScatterBlock(world, blocks, recv, o.op), "ReduceScatterBlock")
		same(what("ReduceScatterBlock"), recv, want(0, n))
		same(what("ReduceScatterBlock's send"), blocks, slices.Repeat(input(me), n))
	}
}
