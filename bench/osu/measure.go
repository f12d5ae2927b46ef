package main

import (
	"fmt"
	"time"

	"github.com/gorun-mpi/gorun"
)

// Tags, as in bench.c.
const (
	tagLat    = 1   // lat and multi_lat ping-pongs
	tagData   = 100 // bw, mr, and bibw from rank 0 to rank 1
	tagAck    = 101 // bw and mr: 4-byte ack per window
	tagBack   = 10  // bibw from rank 1 to rank 0
	tagRing   = 7   // ring and shift tokens
	tagGather = 200 // per-rank times sent to rank 0
)

// bench holds what the timed loops reuse: the communicator, the buffers
// (allocated once at the largest size) and the request slice.
type bench struct {
	c          *gorun.Comm
	o          options
	sbuf, rbuf []byte
	reqs       []*gorun.Request // 2*window; entries are cleared once waited for
}

// newBench allocates the buffers: page aligned and touched, with 'a' on rank
// 0 and 'b' elsewhere, as bench.c does. ring and shift use 8 bytes.
func newBench(c *gorun.Comm, o options) *bench {
	n := 8
	if o.mode.sweep() {
		n = max(o.maxSize, 4) // bw's ack uses 4 bytes of the buffers
	}
	if o.mode == ModeAllgather || o.mode == ModeAlltoall {
		n *= c.Size() // a block per rank
	}
	fill := byte('b')
	if c.Rank() == 0 {
		fill = 'a'
	}
	return &bench{c: c, o: o, sbuf: alignedBuf(n, fill), rbuf: alignedBuf(n, fill),
		reqs: make([]*gorun.Request, 2*window)}
}

// sweep runs every size of the mode's sweep, with a Barrier before each. On
// rank 0, rep gets one row per size; other ranks pass nil.
func (b *bench) sweep(rep *report) error {
	rank, np := b.c.Rank(), b.c.Size()
	for _, size := range sizes(b.o.minSize, b.o.maxSize) {
		cnt := b.o.countsFor(size)
		if err := b.c.Barrier(); err != nil {
			return fmt.Errorf("barrier before size %d: %w", size, err)
		}
		var x row
		switch b.o.mode {
		case ModeLat:
			el, err := b.pingPong(1-rank, rank == 0, size, cnt)
			if err != nil {
				return fmt.Errorf("size %d: %w", size, err)
			}
			x = latencyRow(size, cnt.iters, el)
		case ModeMultiLat:
			pairs := np / 2
			peer, first := rank+pairs, true
			if rank >= pairs {
				peer, first = rank-pairs, false
			}
			el, err := b.pingPong(peer, first, size, cnt)
			if err != nil {
				return fmt.Errorf("size %d: %w", size, err)
			}
			// As osu_multi_lat: every rank times its side; report the mean.
			all, err := b.gather(latencyRow(size, cnt.iters, el).values[0])
			if err != nil {
				return fmt.Errorf("size %d: %w", size, err)
			}
			sum := 0.0
			for _, v := range all {
				sum += v
			}
			x = row{size, []float64{sum / float64(np)}}
		case ModeBW, ModeBiBW, ModeMR:
			el, err := b.windows(rank == 0, size, cnt)
			if err != nil {
				return fmt.Errorf("size %d: %w", size, err)
			}
			x = bandwidthRow(b.o.mode, size, cnt.iters, el)
		case ModeAllreduce, ModeReduce, ModeBcast, ModeAllgather, ModeAlltoall:
			var err error
			if x, err = b.collective(size, cnt); err != nil {
				return fmt.Errorf("size %d: %w", size, err)
			}
		default:
			return fmt.Errorf("mode %s has no size sweep", b.o.mode)
		}
		if rep != nil {
			if err := rep.add(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// pingPong does warm-up + timed blocking ping-pongs of size bytes with peer;
// the first side sends first. It returns the time of the timed ones.
func (b *bench) pingPong(peer int, first bool, size int, cnt counts) (time.Duration, error) {
	c, s, r := b.c, b.sbuf[:size], b.rbuf[:size]
	var t0 time.Time
	for i := 0; i < cnt.iters+cnt.warmup; i++ {
		if i == cnt.warmup {
			t0 = time.Now()
		}
		if first {
			if err := c.Send(s, peer, tagLat); err != nil {
				return 0, fmt.Errorf("send to rank %d: %w", peer, err)
			}
			if _, err := c.Recv(r, peer, tagLat); err != nil {
				return 0, fmt.Errorf("recv from rank %d: %w", peer, err)
			}
		} else {
			if _, err := c.Recv(r, peer, tagLat); err != nil {
				return 0, fmt.Errorf("recv from rank %d: %w", peer, err)
			}
			if err := c.Send(s, peer, tagLat); err != nil {
				return 0, fmt.Errorf("send to rank %d: %w", peer, err)
			}
		}
	}
	return time.Since(t0), nil
}

// windows does warm-up + timed windows of bw, mr or bibw between ranks 0 and
// 1 and returns the time of the timed ones. bw/mr: the sender posts 64 Isend
// and waits for them, then for a 4-byte ack; the receiver posts 64 Irecv,
// waits, and sends the ack. bibw: both post 64 Irecv, then 64 Isend, then
// wait for all 128. As in OSU, the 64 operations of a window share one buffer.
func (b *bench) windows(sender bool, size int, cnt counts) (time.Duration, error) {
	c, s, r := b.c, b.sbuf[:size], b.rbuf[:size]
	peer, sendTag, recvTag := 1, tagData, tagBack
	if !sender {
		peer, sendTag, recvTag = 0, tagBack, tagData
	}
	var t0 time.Time
	for i := 0; i < cnt.iters+cnt.warmup; i++ {
		if i == cnt.warmup {
			t0 = time.Now()
		}
		var err error
		switch {
		case b.o.mode == ModeBiBW:
			if err = b.post(false, 0, r, peer, recvTag); err == nil {
				if err = b.post(true, window, s, peer, sendTag); err == nil {
					err = b.waitAll(2 * window)
				}
			}
		case sender:
			if err = b.post(true, 0, s, peer, tagData); err == nil {
				if err = b.waitAll(window); err == nil {
					_, err = c.Recv(b.rbuf[:4], peer, tagAck)
				}
			}
		default:
			if err = b.post(false, 0, r, peer, tagData); err == nil {
				if err = b.waitAll(window); err == nil {
					err = c.Send(b.sbuf[:4], peer, tagAck)
				}
			}
		}
		if err != nil {
			return 0, fmt.Errorf("window %d with rank %d: %w", i, peer, err)
		}
	}
	return time.Since(t0), nil
}

// post starts a window of Isend (send) or Irecv of buf with peer and tag
// into b.reqs[at:at+window].
func (b *bench) post(send bool, at int, buf []byte, peer, tag int) error {
	for j := at; j < at+window; j++ {
		var err error
		if send {
			b.reqs[j], err = b.c.Isend(buf, peer, tag)
		} else {
			b.reqs[j], err = b.c.Irecv(buf, peer, tag)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// waitAll waits for b.reqs[:n] one by one (any Wait drives them all), which
// completes the same set as gorun.WaitAll without its []Status per window.
func (b *bench) waitAll(n int) error {
	for j := range b.reqs[:n] {
		_, err := b.reqs[j].Wait()
		b.reqs[j] = nil
		if err != nil {
			return err
		}
	}
	return nil
}

// gather collects one float64 per rank on rank 0 (index = rank); other ranks
// get nil. It stands in for the MPI_Reduce of bench.c and OSU.
func (b *bench) gather(v float64) ([]float64, error) {
	c := b.c
	if c.Rank() != 0 {
		if err := gorun.SendSlice(c, []float64{v}, 0, tagGather); err != nil {
			return nil, fmt.Errorf("send result to rank 0: %w", err)
		}
		return nil, nil
	}
	all := make([]float64, c.Size())
	all[0] = v
	for r := 1; r < c.Size(); r++ {
		st, err := gorun.RecvSlice(c, all[r:r+1], r, tagGather)
		if err != nil {
			return nil, fmt.Errorf("result of rank %d: %w", r, err)
		}
		if st.Count != 8 {
			return nil, fmt.Errorf("result of rank %d: got %d bytes, want 8", r, st.Count)
		}
	}
	return all, nil
}

// ring runs bench.c's ring or shift and returns the slowest rank's time on
// rank 0 (zero elsewhere). ring: rank 0 sends 8 B to rank 1 and waits for them
// from rank np-1; every other rank receives from the left and sends to the
// right. shift: every rank Sendrecv's 8 B to the right, from the left. With
// one rank, both pass the token to the rank itself.
func (b *bench) ring() (ringResult, error) {
	c, rank, np := b.c, b.c.Rank(), b.c.Size()
	right, left := (rank+1)%np, (rank+np-1)%np
	shift := b.o.mode == ModeShift
	s, r := b.sbuf[:8], b.rbuf[:8]
	if err := c.Barrier(); err != nil {
		return ringResult{}, fmt.Errorf("barrier: %w", err)
	}
	t0 := time.Now()
	for i := 0; i < b.o.rounds; i++ {
		var err error
		switch {
		case shift:
			_, err = c.Sendrecv(s, right, tagRing, r, left, tagRing)
		case rank == 0:
			if err = c.Send(s, right, tagRing); err == nil {
				_, err = c.Recv(r, left, tagRing)
			}
		default:
			if _, err = c.Recv(r, left, tagRing); err == nil {
				err = c.Send(s, right, tagRing)
			}
		}
		if err != nil {
			return ringResult{}, fmt.Errorf("round %d (right rank %d, left rank %d): %w", i, right, left, err)
		}
	}
	el := time.Since(t0)
	all, err := b.gather(el.Seconds())
	if err != nil || rank != 0 {
		return ringResult{}, err
	}
	slowest := 0.0
	for _, t := range all {
		slowest = max(slowest, t)
	}
	return ringResult{shift: shift, np: np, rounds: b.o.rounds,
		total: time.Duration(slowest * float64(time.Second))}, nil
}
