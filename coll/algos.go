package coll

// The algorithms. Each returns rank r's schedule in a communicator of n
// ranks; counts and offsets are in elements.

// BarrierDissemination: in round k every rank sends to r+2^k and receives
// from r-2^k (zero-length messages); ceil(log2 n) rounds.
func BarrierDissemination(n, r int) Schedule {
	var b builder
	for k := 1; k < n; k <<= 1 {
		b.next()
		b.recv((r-k+n)%n, Region{Buf: BufTmp})
		b.send((r+k)%n, Region{Buf: BufTmp})
	}
	return b.done()
}

// BcastBinomial sends recv[0:count] from root down a binomial tree (on
// ranks relative to root): receive from the parent, then send to every
// child at once.
func BcastBinomial(n, r, root, count int) Schedule {
	var b builder
	buf := reg(BufRecv, 0, count)
	vr := (r - root + n) % n
	mask := 1
	for mask < n {
		if vr&mask != 0 {
			b.recv((vr-mask+root)%n, buf)
			break
		}
		mask <<= 1
	}
	b.next()
	for mask >>= 1; mask > 0; mask >>= 1 {
		if vr+mask < n {
			b.send((vr+mask+root)%n, buf)
		}
	}
	return b.done()
}

// BcastScatterAllgather (van de Geijn, for large messages): the root's
// buffer is scattered in n blocks down a binomial tree, then a ring
// allgather brings every block to every rank.
func BcastScatterAllgather(n, r, root, count int) Schedule {
	if n == 1 {
		return Schedule{}
	}
	var b builder
	off := blocks(count, n)
	vr := (r - root + n) % n
	blk := func(v, k int) Region { // blocks [v, v+k) relative to root
		hi := min(v+k, n)
		return reg(BufRecv, off[v], off[hi]-off[v])
	}
	// Binomial scatter: vr receives its subtree's blocks [vr, vr+mask).
	mask := 1
	for mask < n {
		if vr&mask != 0 {
			b.recv((vr-mask+root)%n, blk(vr, mask))
			break
		}
		mask <<= 1
	}
	b.next()
	for mask >>= 1; mask > 0; mask >>= 1 {
		if vr+mask < n {
			b.send((vr+mask+root)%n, blk(vr+mask, mask))
		}
	}
	// Ring allgather on relative ranks: in step s, send block vr-s, receive vr-s-1.
	next, prev := (r+1)%n, (r+n-1)%n
	for s := 0; s < n-1; s++ {
		b.next()
		sb, rb := (vr-s+n)%n, (vr-s-1+n)%n
		b.send(next, blk(sb, 1))
		b.recv(prev, blk(rb, 1))
	}
	return b.done()
}

// ReduceBinomial reduces count elements to root down a binomial tree. in is
// this rank's input (the send buffer, or recv at an in-place root). With
// ordered (a user Op, not commutative) the tree is on absolute ranks, so
// each node combines [r, r+mask) ⊕ [r+mask, r+2mask) in rank order, and
// rank 0 forwards the result to root; otherwise it is on ranks relative to
// root. Every child's part is received at once into its own scratch.
func ReduceBinomial(n, r, root, count int, in Region, ordered bool) Schedule {
	var b builder
	top := root
	if ordered {
		top = 0
	}
	vr := (r - top + n) % n
	var children []int
	parent := -1
	for mask := 1; mask < n; mask <<= 1 {
		if vr&mask != 0 {
			parent = (vr - mask + top) % n
			break
		}
		if vr+mask < n {
			children = append(children, (vr+mask+top)%n)
		}
	}
	acc := in
	if r == root {
		acc = reg(BufRecv, 0, count)
	} else if len(children) > 0 {
		acc = reg(BufTmp, b.tmp(count), count)
	}
	b.copy(acc, in)
	parts := make([]Region, len(children))
	for i, c := range children {
		parts[i] = reg(BufTmp, b.tmp(count), count)
		b.recv(c, parts[i])
	}
	b.next()
	for _, p := range parts {
		b.reduce(acc, p)
	}
	if parent >= 0 {
		b.send(parent, acc)
	}
	if ordered && root != 0 {
		if r == 0 {
			b.next()
			b.send(root, acc)
		} else if r == root {
			b.next()
			b.recv(0, acc)
		}
	}
	return b.done()
}

// rdFold maps r to its rank in the power-of-two group of recursive
// doubling: of the first 2*rem ranks only the odd ones take part (each
// first combines its even neighbour's input); -1 for the even ones.
func rdFold(n, r int) (newRank, rem, pof2 int) {
	pof2 = pof2Below(n)
	rem = n - pof2
	switch {
	case r < 2*rem && r%2 == 0:
		return -1, rem, pof2
	case r < 2*rem:
		return r / 2, rem, pof2
	}
	return r - rem, rem, pof2
}

func rdUnfold(newRank, rem int) int {
	if newRank < rem {
		return newRank*2 + 1
	}
	return newRank + rem
}

// AllreduceRecursiveDoubling combines recv[0:count] of every rank, in rank
// order, into every rank's recv: partners exchange their partial results
// and both compute lower ⊕ higher, so every rank computes bit-identical
// values. Non-power-of-two sizes fold the first 2*rem ranks in pairs first
// and send the result back at the end.
func AllreduceRecursiveDoubling(n, r, count int) Schedule {
	var b builder
	buf := reg(BufRecv, 0, count)
	tmp := reg(BufTmp, b.tmp(count), count)
	nr, rem, pof2 := rdFold(n, r)
	if r < 2*rem {
		if nr < 0 {
			b.send(r+1, buf)
			b.next()
			b.recv(r+1, buf)
			return b.done()
		}
		b.recv(r-1, tmp)
		b.next()
		b.reduceRev(buf, tmp)
	}
	for mask := 1; mask < pof2; mask <<= 1 {
		dst := rdUnfold(nr^mask, rem)
		b.send(dst, buf)
		b.recv(dst, tmp)
		b.next()
		if dst < r {
			b.reduceRev(buf, tmp)
		} else {
			b.reduce(buf, tmp)
		}
	}
	if r < 2*rem {
		b.send(r-1, buf)
	}
	return b.done()
}

// ringReduceScatter appends a ring reduce-scatter of w (count elements in
// n blocks, see blocks) to b: after it, rank r's block r of w holds the
// reduction of every rank's block r. Block b's partial sums travel from
// rank b+1 around to rank b. Only for commutative ops.
func ringReduceScatter(b *builder, n, r int, w Region, off []int) {
	next, prev := (r+1)%n, (r+n-1)%n
	maxBlk := off[1] - off[0]
	tmp := reg(BufTmp, b.tmp(maxBlk), maxBlk)
	blk := func(i int) Region { return reg(w.Buf, w.Off+off[i], off[i+1]-off[i]) }
	for s := 0; s < n-1; s++ {
		sb, rb := (r-s-1+2*n)%n, (r-s-2+2*n)%n
		t := tmp
		t.Len = blk(rb).Len
		b.send(next, blk(sb))
		b.recv(prev, t)
		b.next()
		b.reduce(blk(rb), t)
	}
}

// ringAllgather appends a ring allgather of w's blocks to b: rank r starts
// with block r and ends with all of them.
func ringAllgather(b *builder, n, r int, blk func(i int) Region) {
	next, prev := (r+1)%n, (r+n-1)%n
	for s := 0; s < n-1; s++ {
		b.send(next, blk((r-s+n)%n))
		b.recv(prev, blk((r-s-1+n)%n))
		b.next()
	}
}

// AllreduceRing is a ring reduce-scatter then a ring allgather of
// recv[0:count] (bandwidth-optimal for large counts; commutative ops only).
// Each block is reduced once, by a fixed chain, then copied: every rank
// gets the same bits.
func AllreduceRing(n, r, count int) Schedule {
	if n == 1 {
		return Schedule{}
	}
	var b builder
	off := blocks(count, n)
	w := reg(BufRecv, 0, count)
	ringReduceScatter(&b, n, r, w, off)
	ringAllgather(&b, n, r, func(i int) Region { return reg(BufRecv, off[i], off[i+1]-off[i]) })
	return b.done()
}

// ReduceScatterBlockRing: send holds n blocks of rcount; rank r's recv gets
// block r reduced over every rank (commutative ops).
func ReduceScatterBlockRing(n, r, rcount int) Schedule {
	var b builder
	w := reg(BufTmp, b.tmp(n*rcount), n*rcount)
	b.copy(w, reg(BufSend, 0, n*rcount))
	off := make([]int, n+1)
	for i := range off {
		off[i] = i * rcount
	}
	ringReduceScatter(&b, n, r, w, off)
	b.copy(reg(BufRecv, 0, rcount), reg(BufTmp, w.Off+r*rcount, rcount))
	return b.done()
}

// ReduceScatterBlockOrdered (user ops): recursive-doubling allreduce of the
// whole send buffer in scratch, in rank order, then block r is kept.
func ReduceScatterBlockOrdered(n, r, rcount int) Schedule {
	total := n * rcount
	s := AllreduceRecursiveDoubling(n, r, total)
	// Move the allreduce's buffer (recv) into scratch after its own.
	w := s.Tmp
	s.Tmp += total
	for i := range s.Rounds {
		for j := range s.Rounds[i] {
			st := &s.Rounds[i][j]
			if st.A.Buf == BufRecv {
				st.A = reg(BufTmp, w+st.A.Off, st.A.Len)
			}
			if st.B.Buf == BufRecv {
				st.B = reg(BufTmp, w+st.B.Off, st.B.Len)
			}
		}
	}
	first := []Step{{Kind: Copy, A: reg(BufTmp, w, total), B: reg(BufSend, 0, total)}}
	if len(s.Rounds) == 0 {
		s.Rounds = [][]Step{nil}
	}
	s.Rounds[0] = append(first, s.Rounds[0]...)
	s.Rounds = append(s.Rounds, []Step{{Kind: Copy, A: reg(BufRecv, 0, rcount), B: reg(BufTmp, w+r*rcount, rcount)}})
	return s
}

// ScanRecursiveDoubling (MPICH's algorithm): partial holds the reduction
// of this rank's current range, exchanged with r^mask; lower ranks'
// partials are combined on the left, so the result is in rank order.
// in is this rank's input; recv gets the inclusive (or, with exclusive,
// the exclusive) prefix; rank 0's recv is untouched by Exscan.
func ScanRecursiveDoubling(n, r, count int, in Region, exclusive bool) Schedule {
	var b builder
	res := reg(BufRecv, 0, count)
	partial := reg(BufTmp, b.tmp(count), count)
	tmp := reg(BufTmp, b.tmp(count), count)
	b.copy(partial, in)
	if !exclusive {
		b.copy(res, in)
	}
	have := !exclusive
	for mask := 1; mask < n; mask <<= 1 {
		dst := r ^ mask
		if dst >= n {
			continue
		}
		b.send(dst, partial)
		b.recv(dst, tmp)
		b.next()
		if dst < r {
			if have {
				b.reduceRev(res, tmp)
			} else {
				b.copy(res, tmp)
				have = true
			}
			b.reduceRev(partial, tmp)
		} else {
			b.reduce(partial, tmp)
		}
	}
	return b.done()
}

// GatherLinear: every rank sends its block to root, which receives them
// all at once into recv[i*count:]. The root's own block is copied from in
// (nothing when in is already that block: in place).
func GatherLinear(n, r, root, count int, in Region) Schedule {
	counts, displs := make([]int, n), make([]int, n)
	for i := range counts {
		counts[i], displs[i] = count, i*count
	}
	return GathervLinear(n, r, root, in, counts, displs)
}

// maxOutstanding bounds the requests the root of a linear schedule (and
// each rank of a linear Alltoall) has posted at once: flow control, so
// that a large communicator does not make one rank post a request per rank
// at once. Beyond it the steps go in rounds of maxOutstanding.
var maxOutstanding = 32

// GathervLinear: rank i's in (counts[i] elements) lands at root's
// recv[displs[i]:]; the root posts its receives maxOutstanding at a time.
func GathervLinear(n, r, root int, in Region, counts, displs []int) Schedule {
	var b builder
	if r != root {
		b.send(root, in)
		return b.done()
	}
	b.copy(reg(BufRecv, displs[r], counts[r]), in)
	k := 0
	for i := 0; i < n; i++ {
		if i != root {
			if k == maxOutstanding {
				b.next()
				k = 0
			}
			b.recv(i, reg(BufRecv, displs[i], counts[i]))
			k++
		}
	}
	return b.done()
}

// ScatterLinear and ScattervLinear are the reverse of the gathers: root
// sends send[displs[i]:+counts[i]] to rank i, which receives into recv.
func ScatterLinear(n, r, root, count int) Schedule {
	counts, displs := make([]int, n), make([]int, n)
	for i := range counts {
		counts[i], displs[i] = count, i*count
	}
	return ScattervLinear(n, r, root, counts, displs, count)
}

func ScattervLinear(n, r, root int, counts, displs []int, rcount int) Schedule {
	var b builder
	if r != root {
		b.recv(root, reg(BufRecv, 0, rcount))
		return b.done()
	}
	b.copy(reg(BufRecv, 0, counts[r]), reg(BufSend, displs[r], counts[r]))
	k := 0
	for i := 0; i < n; i++ {
		if i != root {
			if k == maxOutstanding {
				b.next()
				k = 0
			}
			b.send(i, reg(BufSend, displs[i], counts[i]))
			k++
		}
	}
	return b.done()
}

// AllgatherRing: recv holds n blocks of count, rank r's own already at
// block r; n-1 steps around the ring.
func AllgatherRing(n, r, count int) Schedule {
	var b builder
	ringAllgather(&b, n, r, func(i int) Region { return reg(BufRecv, i*count, count) })
	return b.done()
}

// AllgatherRecursiveDoubling (power-of-two n): in step k, exchange the
// 2^k blocks gathered so far with r^2^k.
func AllgatherRecursiveDoubling(n, r, count int) Schedule {
	var b builder
	for mask := 1; mask < n; mask <<= 1 {
		dst := r ^ mask
		mine, theirs := r&^(mask-1), dst&^(mask-1)
		b.send(dst, reg(BufRecv, mine*count, mask*count))
		b.recv(dst, reg(BufRecv, theirs*count, mask*count))
		b.next()
	}
	return b.done()
}

// AllgatherBruck (small messages, any n): in step k rank r sends the 2^k
// blocks it has (starting from its own, in a rotated scratch copy) to
// r-2^k and receives as many from r+2^k; a final local rotation puts each
// block in place. ceil(log2 n) steps.
func AllgatherBruck(n, r, count int) Schedule {
	var b builder
	w := b.tmp(n * count)
	b.copy(reg(BufTmp, w, count), reg(BufRecv, r*count, count))
	for k := 1; k < n; k <<= 1 {
		m := min(k, n-k)
		b.send((r-k+n)%n, reg(BufTmp, w, m*count))
		b.recv((r+k)%n, reg(BufTmp, w+k*count, m*count))
		b.next()
	}
	// Scratch block i is rank (r+i)'s block.
	for i := 0; i < n; i++ {
		b.copy(reg(BufRecv, ((r+i)%n)*count, count), reg(BufTmp, w+i*count, count))
	}
	return b.done()
}

// AllgathervRing: block i has counts[i] elements at recv[displs[i]:].
func AllgathervRing(n, r int, counts, displs []int) Schedule {
	var b builder
	ringAllgather(&b, n, r, func(i int) Region { return reg(BufRecv, displs[i], counts[i]) })
	return b.done()
}

// AlltoallPairwise: in step s, send block r+s to rank r+s and receive
// block r-s from rank r-s. With inPlace the input is recv, first copied
// to scratch.
func AlltoallPairwise(n, r, count int, inPlace bool) Schedule {
	counts, displs := make([]int, n), make([]int, n)
	for i := range counts {
		counts[i], displs[i] = count, i*count
	}
	return AlltoallvPairwise(n, r, counts, displs, counts, displs, inPlace)
}

// AlltoallvPairwise is AlltoallPairwise with counts and displacements.
func AlltoallvPairwise(n, r int, sc, sd, rc, rd []int, inPlace bool) Schedule {
	var b builder
	src := BufSend
	base := 0
	if inPlace {
		hi := 0
		for i := 0; i < n; i++ {
			hi = max(hi, sd[i]+sc[i])
		}
		base = b.tmp(hi)
		b.copy(reg(BufTmp, base, hi), reg(BufRecv, 0, hi))
		src = BufTmp
	}
	b.copy(reg(BufRecv, rd[r], rc[r]), reg(src, base+sd[r], sc[r]))
	for s := 1; s < n; s++ {
		to, from := (r+s)%n, (r-s+n)%n
		b.send(to, reg(src, base+sd[to], sc[to]))
		b.recv(from, reg(BufRecv, rd[from], rc[from]))
		b.next()
	}
	return b.done()
}

// AlltoallLinear posts every send and receive at once (small n, small
// messages: one round), or, on more than maxOutstanding/2 peers, the
// pairwise exchanges maxOutstanding/2 at a time.
func AlltoallLinear(n, r, count int, inPlace bool) Schedule {
	s := AlltoallPairwise(n, r, count, inPlace)
	per := max(1, maxOutstanding/2)
	var out [][]Step
	for i, rd := range s.Rounds {
		if i%per == 0 {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], rd...)
	}
	return Schedule{Rounds: out, Tmp: s.Tmp}
}

// ReduceScatterGather (Rabenseifner's idea, with a ring for the
// reduce-scatter; for large counts and commutative ops): a ring
// reduce-scatter of a scratch copy of in leaves rank i with block i fully
// reduced, then every rank sends its block to root. Each rank moves about
// 2*count elements whatever n, where the binomial tree moves count*log n.
func ReduceScatterGather(n, r, root, count int, in Region) Schedule {
	var b builder
	off := blocks(count, n)
	w := reg(BufTmp, b.tmp(count), count)
	b.copy(w, in)
	if n > 1 {
		ringReduceScatter(&b, n, r, w, off)
	}
	mine := reg(BufTmp, w.Off+off[r], off[r+1]-off[r])
	if r != root {
		b.send(root, mine)
		return b.done()
	}
	b.copy(reg(BufRecv, off[r], mine.Len), mine)
	for i := 0; i < n; i++ {
		if i != root {
			b.recv(i, reg(BufRecv, off[i], off[i+1]-off[i]))
		}
	}
	return b.done()
}

// binomialTree gives rank r's place in the binomial tree rooted at root:
// vr (r's rank relative to root), its parent (-1 at the root), and the
// number of relative ranks its subtree covers, [vr, vr+span).
func binomialTree(n, r, root int) (vr, parent, span int) {
	vr = (r - root + n) % n
	span, parent = n, -1
	for mask := 1; mask < n; mask <<= 1 {
		if vr&mask != 0 {
			parent, span = (vr-mask+root)%n, mask
			break
		}
	}
	return vr, parent, min(span, n-vr)
}

// GatherBinomial (small messages): each rank gathers its subtree's blocks
// (in relative rank order, in scratch) from its children at once, then
// sends them to its parent in one message; the root rotates them into
// recv. log n message latencies instead of n-1 arrivals at the root.
func GatherBinomial(n, r, root, count int, in Region) Schedule {
	var b builder
	vr, parent, span := binomialTree(n, r, root)
	if span == 1 && parent >= 0 {
		b.send(parent, in)
		return b.done()
	}
	w := b.tmp(span * count)
	b.copy(reg(BufTmp, w, count), in)
	for mask := 1; mask < span; mask <<= 1 {
		k := min(mask, span-mask) // blocks of the child vr+mask
		b.recv((vr+mask+root)%n, reg(BufTmp, w+mask*count, k*count))
	}
	b.next()
	if parent >= 0 {
		b.send(parent, reg(BufTmp, w, span*count))
		return b.done()
	}
	for j := 0; j < n; j++ {
		b.copy(reg(BufRecv, ((j+root)%n)*count, count), reg(BufTmp, w+j*count, count))
	}
	return b.done()
}

// ScatterBinomial is GatherBinomial reversed: the root sends each child its
// subtree's blocks in one message, and so on down.
func ScatterBinomial(n, r, root, count int) Schedule {
	var b builder
	vr, parent, span := binomialTree(n, r, root)
	mine := reg(BufRecv, 0, count)
	if span == 1 && parent >= 0 {
		b.recv(parent, mine)
		return b.done()
	}
	w := b.tmp(span * count)
	if parent >= 0 {
		b.recv(parent, reg(BufTmp, w, span*count))
		b.next()
	} else {
		for j := 0; j < n; j++ {
			b.copy(reg(BufTmp, w+j*count, count), reg(BufSend, ((j+root)%n)*count, count))
		}
	}
	for mask := 1; mask < span; mask <<= 1 {
		k := min(mask, span-mask)
		b.send((vr+mask+root)%n, reg(BufTmp, w+mask*count, k*count))
	}
	b.copy(mine, reg(BufTmp, w, count))
	return b.done()
}

// AlltoallBruck (small blocks, many ranks): ceil(log2 n) steps instead of
// n-1. The blocks are first rotated (scratch block i is for rank r+i); in
// step k every block whose index has bit k set goes, packed in one message,
// to rank r+k, and the same indices come back from rank r-k; at the end
// scratch block i came from rank r-i. With inPlace the input is recv.
func AlltoallBruck(n, r, count int, inPlace bool) Schedule {
	var b builder
	src := BufSend
	if inPlace {
		src = BufRecv
	}
	w := b.tmp(n * count)
	blk := func(i int) Region { return reg(BufTmp, w+i*count, count) }
	for i := 0; i < n; i++ {
		b.copy(blk(i), reg(src, ((r+i)%n)*count, count))
	}
	packS := b.tmp(n * count)
	packR := b.tmp(n * count)
	for k := 1; k < n; k <<= 1 {
		var idx []int
		for i := 0; i < n; i++ {
			if i&k != 0 {
				idx = append(idx, i)
			}
		}
		for j, i := range idx {
			b.copy(reg(BufTmp, packS+j*count, count), blk(i))
		}
		m := len(idx) * count
		b.send((r+k)%n, reg(BufTmp, packS, m))
		b.recv((r-k+n)%n, reg(BufTmp, packR, m))
		b.next()
		for j, i := range idx {
			b.copy(blk(i), reg(BufTmp, packR+j*count, count))
		}
	}
	for i := 0; i < n; i++ {
		b.copy(reg(BufRecv, ((r-i+n)%n)*count, count), blk(i))
	}
	return b.done()
}

// halvingReduceScatter appends recursive halving to b for the pof2 ranks
// of the fold (nr is this rank's place, see rdFold): w holds count
// elements in pof2 blocks (off); at each step the rank keeps half of its
// window of blocks, sends the other half to its partner and reduces the
// partner's copy of the kept half (received into scratch at t) into its
// own. After log2 pof2 steps block nr of w is fully reduced. Built-in
// (commutative) ops only.
func halvingReduceScatter(b *builder, nr, rem, pof2 int, w Region, off []int, t int) {
	blk := func(lo, hi int) Region { return reg(w.Buf, w.Off+off[lo], off[hi]-off[lo]) }
	lo, hi := 0, pof2
	for mask := pof2 >> 1; mask > 0; mask >>= 1 {
		dst := rdUnfold(nr^mask, rem)
		keep, give := blk(lo, lo+mask), blk(lo+mask, hi)
		klo := lo
		if nr&mask != 0 {
			keep, give = give, keep
			klo = lo + mask
		}
		b.send(dst, give)
		b.recv(dst, reg(BufTmp, t, keep.Len))
		b.next()
		b.reduce(keep, reg(BufTmp, t, keep.Len))
		lo, hi = klo, klo+mask
	}
}

// doublingAllgather appends recursive doubling over w's pof2 blocks (off)
// to b: rank nr starts with block nr and ends with all of them.
func doublingAllgather(b *builder, nr, rem, pof2 int, w Region, off []int) {
	blk := func(lo, hi int) Region { return reg(w.Buf, w.Off+off[lo], off[hi]-off[lo]) }
	for mask := 1; mask < pof2; mask <<= 1 {
		dst := rdUnfold(nr^mask, rem)
		mine, theirs := nr&^(mask-1), (nr^mask)&^(mask-1)
		b.send(dst, blk(mine, mine+mask))
		b.recv(dst, blk(theirs, theirs+mask))
		b.next()
	}
}

// AllreduceRabenseifner (large counts, built-in ops): recursive halving
// reduce-scatter, then recursive doubling allgather, of recv[0:count]
// among a power of two of ranks (the first 2*rem ranks fold in pairs
// first, and the even ones get the result back at the end). 2 log2 n
// steps where the ring takes 2(n-1), each rank moving about 2*count
// elements. Each block is reduced at one rank and copied to the others:
// every rank gets the same bits.
func AllreduceRabenseifner(n, r, count int) Schedule {
	if n == 1 {
		return Schedule{}
	}
	var b builder
	buf := reg(BufRecv, 0, count)
	nr, rem, pof2 := rdFold(n, r)
	if nr < 0 {
		b.send(r+1, buf)
		b.next()
		b.recv(r+1, buf)
		return b.done()
	}
	off := blocks(count, pof2)
	t := b.tmp(max(off[pof2/2], count*min(rem, 1)))
	if r < 2*rem {
		b.recv(r-1, reg(BufTmp, t, count))
		b.next()
		b.reduceRev(buf, reg(BufTmp, t, count))
	}
	halvingReduceScatter(&b, nr, rem, pof2, buf, off, t)
	doublingAllgather(&b, nr, rem, pof2, buf, off)
	if r < 2*rem {
		b.send(r-1, buf)
	}
	return b.done()
}

// ReduceRabenseifner (large counts, built-in ops): recursive halving
// reduce-scatter of a copy of in (at root: recv itself), then every rank
// of the power-of-two group sends its reduced block to root. in is this
// rank's input (the send buffer, or recv at an in-place root).
func ReduceRabenseifner(n, r, root, count int, in Region) Schedule {
	var b builder
	nr, rem, pof2 := rdFold(n, r)
	off := blocks(count, pof2)
	w := reg(BufRecv, 0, count)
	if r != root {
		w = reg(BufTmp, b.tmp(count), count)
	}
	if nr < 0 && r != root {
		b.send(r+1, in) // folded: in goes to the partner as it is
		return b.done()
	}
	b.copy(w, in)
	if nr < 0 { // the root, folded: it only gathers
		b.send(r+1, w)
		b.next()
	} else {
		t := b.tmp(max(off[pof2/2], count*min(rem, 1)))
		if r < 2*rem {
			b.recv(r-1, reg(BufTmp, t, count))
			b.next()
			b.reduceRev(w, reg(BufTmp, t, count))
		}
		halvingReduceScatter(&b, nr, rem, pof2, w, off, t)
		if r != root {
			b.send(root, reg(w.Buf, w.Off+off[nr], off[nr+1]-off[nr]))
			return b.done()
		}
	}
	for i := 0; i < pof2; i++ {
		if i != nr {
			b.recv(rdUnfold(i, rem), reg(BufRecv, off[i], off[i+1]-off[i]))
		}
	}
	return b.done()
}
