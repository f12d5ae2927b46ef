package pml

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/sm"
	"github.com/gorun-mpi/gorun/mpool/mpooltest"
)

var benchJob atomic.Int64

// smPair builds two sm modules over one segment in this process.
func smPair(tb testing.TB) [2]*sm.Module {
	cfg := sm.DefaultConfig()
	cfg.Rendezvous = mpooltest.FileRendezvous{}
	cfg.AttachTimeout = 20 * time.Second
	session := tb.TempDir()
	id := fmt.Sprintf("b%d-%d", os.Getpid(), benchJob.Add(1))
	var mods [2]*sm.Module
	var errs [2]error
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mods[r], errs[r] = sm.NewWithConfig(sm.Job{Rank: r, Size: 2, LocalRank: r, SessionDir: session, JobID: id}, cfg, hclog.NewNullLogger())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mods[0].Close(); mods[1].Close() })
	return mods
}

// BenchmarkPingPongSM puts the PML's cost per message next to the bare
// BTL's, measured in the same run between two goroutines over one segment
// (so the machine's cache-line placement cancels out of the difference).
func BenchmarkPingPongSM(b *testing.B) {
	for _, n := range []int{8, 4096} {
		b.Run(fmt.Sprint("btl/", n), func(b *testing.B) {
			mods := smPair(b)
			var got [2]atomic.Int64
			for r := range 2 {
				r := r
				mods[r].Register(btl.TagPMLMatch, func(src int, data []byte) { got[r].Add(1) })
			}
			payload := make([]byte, n)
			hdr := make([]byte, 16)
			b.ReportAllocs()
			b.ResetTimer()
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := 0; i < b.N; i++ {
					for got[1].Load() <= int64(i) {
						mods[1].Progress()
					}
					mods[1].Send(0, btl.TagPMLMatch, hdr, payload, nil)
				}
			}()
			for i := 0; i < b.N; i++ {
				mods[0].Send(1, btl.TagPMLMatch, hdr, payload, nil)
				for got[0].Load() <= int64(i) {
					mods[0].Progress()
				}
			}
			<-done
		})
		b.Run(fmt.Sprint("pml/", n), func(b *testing.B) {
			comms := smComms(b)
			// Page-sized capacity: two small buffers from one allocation
			// site would share a cache line and false-share across cores.
			buf0, buf1 := make([]byte, n, 4096), make([]byte, n, 4096)
			b.ReportAllocs()
			b.ResetTimer()
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := 0; i < b.N; i++ {
					comms[1].Recv(buf1, 0, 1)
					comms[1].Send(buf1, 0, 1, false)
				}
			}()
			for i := 0; i < b.N; i++ {
				comms[0].Send(buf0, 1, 1, false)
				comms[0].Recv(buf0, 1, 1)
			}
			<-done
		})
	}
}

// BenchmarkWindowOneGoroutine is bw's window (64 Irecv, 64 Isend, wait for
// all) of 8-byte messages with both ranks driven by one goroutine: no
// cross-core traffic, so ns/op is the CPU cost of a message's PML work on
// both sides (Handles, matching, completion) plus the BTL's, and stays
// comparable on a busy machine when measured in CPU cycles (perf stat).
func BenchmarkWindowOneGoroutine(b *testing.B) {
	comms := smComms(b)
	sbuf, rbuf := make([]byte, 8, 4096), make([]byte, 8, 4096)
	const window = 64
	var hs, hr [window]Handle
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += window {
		// Rank 0's eager sends complete at once, so its waits never poll:
		// without this poll the credit rank 1 returns would sit in rank
		// 0's queue until, 64 MiB later, a send ran out of it, went by
		// rendezvous and waited for rank 1, which this goroutine drives
		// only after (a hang at 2^23 8-byte messages). A real sender's
		// rank is polled by its other calls.
		comms[0].p.Progress()
		for j := range window {
			hr[j] = Handle{}
			if err := comms[1].StartIrecv(&hr[j], rbuf, 0, 100); err != nil {
				b.Fatal(err)
			}
		}
		for j := range window {
			hs[j] = Handle{}
			if err := comms[0].StartIsend(&hs[j], sbuf, 1, 100, false); err != nil {
				b.Fatal(err)
			}
		}
		for j := range window {
			if _, err := hs[j].Wait(nil); err != nil {
				b.Fatal(err)
			}
		}
		for j := range window {
			if _, err := hr[j].Wait(nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkPingPongOneGoroutine is the blocking ping-pong (Send, Recv on
// the other rank, Send back, Recv) of small messages with both ranks driven
// by one goroutine: no cross-core traffic, so ns/op is the CPU cost of one
// round trip's PML and BTL work (two Sends, two Recvs whose receive is
// posted before its message is polled, as in a real ping-pong).
func BenchmarkPingPongOneGoroutine(b *testing.B) {
	for _, n := range []int{0, 8, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			comms := smComms(b)
			buf0, buf1 := make([]byte, n, 4096), make([]byte, n, 4096)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := comms[0].Send(buf0, 1, 1, false); err != nil {
					b.Fatal(err)
				}
				if _, err := comms[1].Recv(buf1, 0, 1); err != nil {
					b.Fatal(err)
				}
				if err := comms[1].Send(buf1, 0, 1, false); err != nil {
					b.Fatal(err)
				}
				if _, err := comms[0].Recv(buf0, 1, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIdleProgress is one poll of an idle rank (sm and self, no
// message): a waiting rank polls back to back, and a message that arrives
// mid-poll waits for the rest of it.
func BenchmarkIdleProgress(b *testing.B) {
	comms := smComms(b)
	p := comms[0].p
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Progress()
	}
}

// BenchmarkIdlePollFor is one poll of a wait for rank 1's message that
// finds nothing (pollFor: rank 1's box alone, a full pass every
// passEvery-th time), to set against BenchmarkIdleProgress.
func BenchmarkIdlePollFor(b *testing.B) {
	comms := smComms(b)
	p := comms[0].p
	// Messages first, so that rank 1 has a box to rank 0 (the BTL sets
	// one up after btl_sm_fbox_threshold messages).
	for range 64 {
		if err := comms[1].Send(nil, 0, 1, false); err != nil {
			b.Fatal(err)
		}
		if _, err := comms[0].Recv(nil, 1, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.pollFor(1)
	}
}
