package coll

import (
	"bytes"
	"fmt"
	"testing"
)

var sizes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17}
var counts = []int{0, 1, 3, 17}

func newRanks(n int, f func(r int) (Schedule, [3][]byte)) []*simRank {
	rs := make([]*simRank, n)
	for r := range rs {
		s, b := f(r)
		rs[r] = &simRank{s: s, bufs: b}
	}
	return rs
}

func eq(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: got %x\nwant %x", what, got, want)
	}
}

func TestBarrier(t *testing.T) {
	for _, n := range sizes {
		rs := newRanks(n, func(r int) (Schedule, [3][]byte) { return BarrierDissemination(n, r), [3][]byte{} })
		simulate(t, rs, 1, nil)
	}
}

func TestBcast(t *testing.T) {
	algs := map[string]func(n, r, root, count int) Schedule{
		"binomial": BcastBinomial, "scatter_allgather": BcastScatterAllgather,
	}
	for name, alg := range algs {
		for _, n := range sizes {
			for root := 0; root < n; root++ {
				for _, count := range counts {
					t.Run(fmt.Sprint(name, "/n", n, "/root", root, "/count", count), func(t *testing.T) {
						want := input(99, count, 8)
						rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
							b := make([]byte, count*8)
							if r == root {
								copy(b, want)
							}
							return alg(n, r, root, count), [3][]byte{nil, b, nil}
						})
						simulate(t, rs, 8, nil)
						for r, x := range rs {
							eq(t, fmt.Sprint("rank ", r), x.bufs[BufRecv], want)
						}
					})
				}
			}
		}
	}
}

func TestReduce(t *testing.T) {
	for _, op := range opKinds {
		for _, n := range sizes {
			for root := 0; root < n; root++ {
				for _, count := range counts {
					for _, inPlace := range []bool{false, true} {
						inputs := make([][]byte, n)
						for r := range inputs {
							inputs[r] = input(r, count, op.elem)
						}
						rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
							recv := make([]byte, count*op.elem)
							in := reg(BufSend, 0, count)
							send := inputs[r]
							if inPlace && r == root {
								copy(recv, inputs[r])
								in, send = reg(BufRecv, 0, count), nil
							}
							return ReduceBinomial(n, r, root, count, in, op.ordered), [3][]byte{send, recv, nil}
						})
						simulate(t, rs, op.elem, op.red)
						eq(t, fmt.Sprint(op.name, " n", n, " root", root, " count", count, " inplace ", inPlace), rs[root].bufs[BufRecv], refReduce(op, inputs, 0, n))
						if op.ordered {
							continue
						}
						rs = newRanks(n, func(r int) (Schedule, [3][]byte) {
							recv := make([]byte, count*op.elem)
							in := reg(BufSend, 0, count)
							send := inputs[r]
							if inPlace && r == root {
								copy(recv, inputs[r])
								in, send = reg(BufRecv, 0, count), nil
							}
							return ReduceScatterGather(n, r, root, count, in), [3][]byte{send, recv, nil}
						})
						simulate(t, rs, op.elem, op.red)
						eq(t, fmt.Sprint("reduce_scatter_gather n", n, " root", root, " count", count, " inplace ", inPlace), rs[root].bufs[BufRecv], refReduce(op, inputs, 0, n))
						rs = newRanks(n, func(r int) (Schedule, [3][]byte) {
							recv := make([]byte, count*op.elem)
							in := reg(BufSend, 0, count)
							send := inputs[r]
							if inPlace && r == root {
								copy(recv, inputs[r])
								in, send = reg(BufRecv, 0, count), nil
							}
							return ReduceRabenseifner(n, r, root, count, in), [3][]byte{send, recv, nil}
						})
						simulate(t, rs, op.elem, op.red)
						eq(t, fmt.Sprint("rabenseifner n", n, " root", root, " count", count, " inplace ", inPlace), rs[root].bufs[BufRecv], refReduce(op, inputs, 0, n))
					}
				}
			}
		}
	}
}

func TestAllreduce(t *testing.T) {
	algs := map[string]func(n, r, count int) Schedule{
		"recursive_doubling": AllreduceRecursiveDoubling, "ring": AllreduceRing,
		"rabenseifner": AllreduceRabenseifner,
	}
	for name, alg := range algs {
		for _, op := range opKinds {
			if op.ordered && name != "recursive_doubling" {
				continue
			}
			for _, n := range sizes {
				for _, count := range counts {
					inputs := make([][]byte, n)
					for r := range inputs {
						inputs[r] = input(r, count, op.elem)
					}
					rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
						return alg(n, r, count), [3][]byte{nil, append([]byte(nil), inputs[r]...), nil}
					})
					simulate(t, rs, op.elem, op.red)
					want := refReduce(op, inputs, 0, n)
					for r, x := range rs {
						eq(t, fmt.Sprint(name, " ", op.name, " n", n, " count", count, " rank ", r), x.bufs[BufRecv], want)
					}
				}
			}
		}
	}
}

func TestScan(t *testing.T) {
	for _, op := range opKinds {
		for _, n := range sizes {
			for _, count := range counts {
				for _, excl := range []bool{false, true} {
					for _, inPlace := range []bool{false, true} {
						inputs := make([][]byte, n)
						for r := range inputs {
							inputs[r] = input(r, count, op.elem)
						}
						marker := bytes.Repeat([]byte{0xAB}, count*op.elem)
						rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
							recv := append([]byte(nil), marker...)
							in, send := reg(BufSend, 0, count), inputs[r]
							if inPlace {
								copy(recv, inputs[r])
								in, send = reg(BufRecv, 0, count), nil
							}
							return ScanRecursiveDoubling(n, r, count, in, excl), [3][]byte{send, recv, nil}
						})
						simulate(t, rs, op.elem, op.red)
						for r, x := range rs {
							what := fmt.Sprint(op.name, " n", n, " count", count, " excl ", excl, " inplace ", inPlace, " rank ", r)
							switch {
							case !excl:
								eq(t, what, x.bufs[BufRecv], refReduce(op, inputs, 0, r+1))
							case r == 0 && inPlace:
								eq(t, what, x.bufs[BufRecv], inputs[0])
							case r == 0:
								eq(t, what, x.bufs[BufRecv], marker)
							default:
								eq(t, what, x.bufs[BufRecv], refReduce(op, inputs, 0, r))
							}
						}
					}
				}
			}
		}
	}
}

func TestReduceScatterBlock(t *testing.T) {
	for _, op := range opKinds {
		for _, n := range sizes {
			for _, rcount := range counts {
				for _, alg := range []string{"ring", "recursive_doubling"} {
					if op.ordered && alg == "ring" {
						continue
					}
					inputs := make([][]byte, n)
					for r := range inputs {
						inputs[r] = input(r, n*rcount, op.elem)
					}
					rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
						s := Config{ReduceScatterBlock: alg}.ReduceScatterBlockSchedule(n, r, rcount, op.ordered)
						return s, [3][]byte{inputs[r], make([]byte, rcount*op.elem), nil}
					})
					simulate(t, rs, op.elem, op.red)
					all := refReduce(op, inputs, 0, n)
					bs := rcount * op.elem
					for r, x := range rs {
						eq(t, fmt.Sprint(op.name, " ", alg, " n", n, " rcount", rcount, " rank ", r), x.bufs[BufRecv], all[r*bs:(r+1)*bs])
					}
				}
			}
		}
	}
}

func TestGatherScatter(t *testing.T) {
	const elem = 8
	for _, binomial := range []bool{false, true} {
		testGatherScatter(t, binomial)
	}
}

func testGatherScatter(t *testing.T, binomial bool) {
	const elem = 8
	for _, n := range sizes {
		for root := 0; root < n; root++ {
			for _, count := range counts {
				inputs := make([][]byte, n)
				var all []byte
				for r := range inputs {
					inputs[r] = input(r, count, elem)
					all = append(all, inputs[r]...)
				}
				for _, inPlace := range []bool{false, true} {
					rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
						recv := make([]byte, n*count*elem)
						in, send := reg(BufSend, 0, count), inputs[r]
						if inPlace && r == root {
							copy(recv[r*count*elem:], inputs[r])
							in, send = reg(BufRecv, r*count, count), nil
						}
						if binomial {
							return GatherBinomial(n, r, root, count, in), [3][]byte{send, recv, nil}
						}
						return GatherLinear(n, r, root, count, in), [3][]byte{send, recv, nil}
					})
					simulate(t, rs, elem, nil)
					eq(t, fmt.Sprint("gather binomial ", binomial, " n", n, " root", root, " count", count), rs[root].bufs[BufRecv], all)
				}
				rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
					var send []byte
					if r == root {
						send = all
					}
					if binomial {
						return ScatterBinomial(n, r, root, count), [3][]byte{send, make([]byte, count*elem), nil}
					}
					return ScatterLinear(n, r, root, count), [3][]byte{send, make([]byte, count*elem), nil}
				})
				simulate(t, rs, elem, nil)
				for r, x := range rs {
					eq(t, fmt.Sprint("scatter binomial ", binomial, " n", n, " root", root, " count", count, " rank ", r), x.bufs[BufRecv], inputs[r])
				}
			}
		}
	}
}

func TestAllgather(t *testing.T) {
	const elem = 8
	algs := map[string]func(n, r, count int) Schedule{
		"ring": AllgatherRing, "bruck": AllgatherBruck, "recursive_doubling": AllgatherRecursiveDoubling,
	}
	for name, alg := range algs {
		for _, n := range sizes {
			if name == "recursive_doubling" && n&(n-1) != 0 {
				continue
			}
			for _, count := range counts {
				var all []byte
				for r := 0; r < n; r++ {
					all = append(all, input(r, count, elem)...)
				}
				rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
					recv := make([]byte, n*count*elem)
					copy(recv[r*count*elem:], input(r, count, elem))
					return alg(n, r, count), [3][]byte{nil, recv, nil}
				})
				simulate(t, rs, elem, nil)
				for r, x := range rs {
					eq(t, fmt.Sprint(name, " n", n, " count", count, " rank ", r), x.bufs[BufRecv], all)
				}
			}
		}
	}
}

func TestAlltoall(t *testing.T) {
	const elem = 8
	algs := map[string]func(n, r, count int, inPlace bool) Schedule{
		"pairwise": AlltoallPairwise, "linear": AlltoallLinear, "bruck": AlltoallBruck,
	}
	for name, alg := range algs {
		for _, n := range sizes {
			for _, count := range counts {
				for _, inPlace := range []bool{false, true} {
					// Rank r's block for rank d is input(r*100+d).
					blk := func(r, d int) []byte { return input(r*100+d, count, elem) }
					rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
						var send []byte
						for d := 0; d < n; d++ {
							send = append(send, blk(r, d)...)
						}
						recv := make([]byte, n*count*elem)
						if inPlace {
							copy(recv, send)
							send = nil
						}
						return alg(n, r, count, inPlace), [3][]byte{send, recv, nil}
					})
					simulate(t, rs, elem, nil)
					for r, x := range rs {
						var want []byte
						for s := 0; s < n; s++ {
							want = append(want, blk(s, r)...)
						}
						eq(t, fmt.Sprint(name, " n", n, " count", count, " inplace ", inPlace, " rank ", r), x.bufs[BufRecv], want)
					}
				}
			}
		}
	}
}

// The v-variants with zero counts and gaps between blocks.
func TestVariants(t *testing.T) {
	const elem = 8
	for _, n := range sizes {
		counts, displs := make([]int, n), make([]int, n)
		off := 1 // a gap before the first block too
		for i := range counts {
			counts[i] = (i * 3) % 4 // zeros among them
			displs[i] = off
			off += counts[i] + i%2 // gaps after odd ranks
		}
		total := off
		for root := 0; root < n; root++ {
			rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
				return GathervLinear(n, r, root, reg(BufSend, 0, counts[r]), counts, displs),
					[3][]byte{input(r, counts[r], elem), make([]byte, total*elem), nil}
			})
			simulate(t, rs, elem, nil)
			for i := 0; i < n; i++ {
				eq(t, fmt.Sprint("gatherv n", n, " block ", i), rs[root].bufs[BufRecv][displs[i]*elem:(displs[i]+counts[i])*elem], input(i, counts[i], elem))
			}
			full := input(1234, total, elem)
			rs = newRanks(n, func(r int) (Schedule, [3][]byte) {
				var send []byte
				if r == root {
					send = full
				}
				return ScattervLinear(n, r, root, counts, displs, counts[r]), [3][]byte{send, make([]byte, counts[r]*elem), nil}
			})
			simulate(t, rs, elem, nil)
			for r, x := range rs {
				eq(t, fmt.Sprint("scatterv n", n, " rank ", r), x.bufs[BufRecv], full[displs[r]*elem:(displs[r]+counts[r])*elem])
			}
		}
		rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
			recv := make([]byte, total*elem)
			copy(recv[displs[r]*elem:], input(r, counts[r], elem))
			return AllgathervRing(n, r, counts, displs), [3][]byte{nil, recv, nil}
		})
		simulate(t, rs, elem, nil)
		for r, x := range rs {
			for i := 0; i < n; i++ {
				eq(t, fmt.Sprint("allgatherv n", n, " rank ", r, " block ", i), x.bufs[BufRecv][displs[i]*elem:(displs[i]+counts[i])*elem], input(i, counts[i], elem))
			}
		}
		// Alltoallv: rank r sends (r+d)%3 elements to d.
		sc := func(r, d int) int { return (r + d) % 3 }
		rs = newRanks(n, func(r int) (Schedule, [3][]byte) {
			scs, sds, rcs, rds := make([]int, n), make([]int, n), make([]int, n), make([]int, n)
			so, ro := 0, 2
			for d := 0; d < n; d++ {
				scs[d], sds[d] = sc(r, d), so
				so += scs[d] + 1
				rcs[d], rds[d] = sc(d, r), ro
				ro += rcs[d]
			}
			send := make([]byte, so*elem)
			for d := 0; d < n; d++ {
				copy(send[sds[d]*elem:], input(r*100+d, scs[d], elem))
			}
			return AlltoallvPairwise(n, r, scs, sds, rcs, rds, false), [3][]byte{send, make([]byte, ro*elem), nil}
		})
		simulate(t, rs, elem, nil)
		for r, x := range rs {
			ro := 2
			for s := 0; s < n; s++ {
				c := sc(s, r)
				eq(t, fmt.Sprint("alltoallv n", n, " rank ", r, " from ", s), x.bufs[BufRecv][ro*elem:(ro+c)*elem], input(s*100+r, c, elem))
				ro += c
			}
		}
	}
}

// FuzzAllreduce checks the recursive-doubling, ring and Rabenseifner
// schedules (ring: even counts, Rabenseifner: odd ones) for any
// communicator size and count against the model.
func FuzzAllreduce(f *testing.F) {
	f.Add(uint8(5), uint8(3), false)
	f.Add(uint8(17), uint8(0), true)
	f.Add(uint8(1), uint8(40), false)
	f.Add(uint8(6), uint8(13), true)
	f.Fuzz(func(t *testing.T, n8, count8 uint8, ring bool) {
		n, count := int(n8%40)+1, int(count8)
		op := opKinds[0]
		inputs := make([][]byte, n)
		for r := range inputs {
			inputs[r] = input(r, count, op.elem)
		}
		rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
			s := AllreduceRecursiveDoubling(n, r, count)
			if ring {
				s = AllreduceRing(n, r, count)
				if count%2 == 1 { // odd counts take Rabenseifner's instead
					s = AllreduceRabenseifner(n, r, count)
				}
			}
			return s, [3][]byte{nil, append([]byte(nil), inputs[r]...), nil}
		})
		simulate(t, rs, op.elem, op.red)
		want := refReduce(op, inputs, 0, n)
		for r, x := range rs {
			eq(t, fmt.Sprint("rank ", r), x.bufs[BufRecv], want)
		}
	})
}

// FuzzSchedules runs a schedule chosen by alg for any communicator size,
// root and count against the model (seeds: odd sizes, zero counts, every
// algorithm).
func FuzzSchedules(f *testing.F) {
	for alg := uint8(0); alg < 11; alg++ {
		f.Add(alg, uint8(7), uint8(3), uint8(5))
		f.Add(alg, uint8(16), uint8(0), uint8(15))
	}
	f.Fuzz(func(t *testing.T, alg, n8, count8, root8 uint8) {
		n, count := int(n8%33)+1, int(count8%40)
		root := int(root8) % n
		const elem = 8
		inputs := make([][]byte, n)
		var all []byte
		for r := range inputs {
			inputs[r] = input(r, count, elem)
			all = append(all, inputs[r]...)
		}
		op := opKinds[0]
		switch alg % 11 {
		case 0, 1: // Bcast
			rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
				b := make([]byte, count*elem)
				if r == root {
					copy(b, inputs[root])
				}
				if alg%11 == 0 {
					return BcastBinomial(n, r, root, count), [3][]byte{nil, b, nil}
				}
				return BcastScatterAllgather(n, r, root, count), [3][]byte{nil, b, nil}
			})
			simulate(t, rs, elem, nil)
			for r, x := range rs {
				eq(t, fmt.Sprint("bcast rank ", r), x.bufs[BufRecv], inputs[root])
			}
		case 2, 3, 10: // Reduce
			rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
				in := reg(BufSend, 0, count)
				switch alg % 11 {
				case 2:
					return ReduceBinomial(n, r, root, count, in, false), [3][]byte{inputs[r], make([]byte, count*elem), nil}
				case 10:
					return ReduceRabenseifner(n, r, root, count, in), [3][]byte{inputs[r], make([]byte, count*elem), nil}
				}
				return ReduceScatterGather(n, r, root, count, in), [3][]byte{inputs[r], make([]byte, count*elem), nil}
			})
			simulate(t, rs, elem, op.red)
			eq(t, "reduce", rs[root].bufs[BufRecv], refReduce(op, inputs, 0, n))
		case 4, 5: // Gather, Scatter (binomial)
			rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
				return GatherBinomial(n, r, root, count, reg(BufSend, 0, count)), [3][]byte{inputs[r], make([]byte, n*count*elem), nil}
			})
			simulate(t, rs, elem, nil)
			eq(t, "gather", rs[root].bufs[BufRecv], all)
			rs = newRanks(n, func(r int) (Schedule, [3][]byte) {
				return ScatterBinomial(n, r, root, count), [3][]byte{all, make([]byte, count*elem), nil}
			})
			simulate(t, rs, elem, nil)
			for r, x := range rs {
				eq(t, fmt.Sprint("scatter rank ", r), x.bufs[BufRecv], inputs[r])
			}
		case 6, 7: // Allgather (Bruck, ring)
			rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
				recv := make([]byte, n*count*elem)
				copy(recv[r*count*elem:], inputs[r])
				if alg%11 == 6 {
					return AllgatherBruck(n, r, count), [3][]byte{nil, recv, nil}
				}
				return AllgatherRing(n, r, count), [3][]byte{nil, recv, nil}
			})
			simulate(t, rs, elem, nil)
			for r, x := range rs {
				eq(t, fmt.Sprint("allgather rank ", r), x.bufs[BufRecv], all)
			}
		case 8, 9: // Alltoall (Bruck, pairwise)
			blk := func(r, d int) []byte { return input(r*100+d, count, elem) }
			rs := newRanks(n, func(r int) (Schedule, [3][]byte) {
				var send []byte
				for d := 0; d < n; d++ {
					send = append(send, blk(r, d)...)
				}
				if alg%11 == 8 {
					return AlltoallBruck(n, r, count, false), [3][]byte{send, make([]byte, n*count*elem), nil}
				}
				return AlltoallPairwise(n, r, count, false), [3][]byte{send, make([]byte, n*count*elem), nil}
			})
			simulate(t, rs, elem, nil)
			for r, x := range rs {
				var want []byte
				for s := 0; s < n; s++ {
					want = append(want, blk(s, r)...)
				}
				eq(t, fmt.Sprint("alltoall rank ", r), x.bufs[BufRecv], want)
			}
		}
	})
}

// With flow control at 2 outstanding requests, the linear schedules still
// give the model's results, and no round posts more than 2 requests.
func TestFlowControl(t *testing.T) {
	saved := maxOutstanding
	maxOutstanding = 2
	defer func() { maxOutstanding = saved }()
	for _, n := range []int{1, 2, 3, 5, 8} {
		for r := 0; r < n; r++ {
			for _, s := range []Schedule{AlltoallLinear(n, r, 2, false), GatherLinear(n, r, 0, 2, reg(BufSend, 0, 2)), ScatterLinear(n, r, n-1, 2)} {
				for i, rd := range s.Rounds {
					k := 0
					for _, st := range rd {
						if st.Kind == Send || st.Kind == Recv {
							k++
						}
					}
					if k > 2 {
						t.Fatalf("n %d rank %d round %d posts %d requests, want at most 2", n, r, i, k)
					}
				}
			}
		}
	}
	TestVariants(t)
	TestAlltoall(t)
	TestGatherScatter(t)
}
