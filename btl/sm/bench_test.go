package sm

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/edsrzf/mmap-go"

	"github.com/gorun-mpi/gorun/btl"
)

// Ping-pong latency, in one run: the BTL between two processes and between
// two goroutines, next to a plain Go cache-line ping-pong over a shared
// mapping (the floor any shared-memory transport can reach). ns/op is one
// round trip; the oneway-ns metric is half of it, the number Open MPI's
// osu_latency reports.

var benchSizes = []int{8, 4096}

func sizeName(n int) string {
	if n >= 1024 {
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

func reportOneway(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2, "oneway-ns")
}

func BenchmarkPingPong(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("sm-processes/"+sizeName(n), func(b *testing.B) { benchSMProcesses(b, n) })
		b.Run("sm-goroutines/"+sizeName(n), func(b *testing.B) { benchSMGoroutines(b, n) })
	}
	b.Run("go-cacheline-processes", benchRawProcesses)
	b.Run("go-cacheline-goroutines", benchRawGoroutines)
}

// pingPong times b.N round trips of n-byte messages from m to rank 1,
// whose echo m's Progress delivers; the timer is stopped on return.
func pingPong(b *testing.B, m *Module, n int) {
	var got atomic.Int64
	m.Register(btl.TagPMLMatch, func(int, []byte) { got.Add(1) })
	pay := make([]byte, n)
	b.ReportAllocs()
	b.SetBytes(int64(n))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Send(1, btl.TagPMLMatch, nil, pay, nil)
		for got.Load() != int64(i+1) {
			m.Progress()
		}
	}
	reportOneway(b)
	b.StopTimer()
}

func benchSMProcesses(b *testing.B, n int) {
	m, _ := procPair(b)
	pingPong(b, m, n)
	m.Send(1, btl.TagPMLCtl, []byte("quit"), nil, nil)
}

func benchSMGoroutines(b *testing.B, n int) {
	mods := newJob(b, 2, DefaultConfig())
	a, e := mods[0], mods[1]
	var stop atomic.Bool
	e.Register(btl.TagPMLMatch, func(src int, data []byte) {
		for {
			if _, err := e.Send(0, btl.TagPMLMatch, nil, data, nil); err == nil {
				return
			}
		}
	})
	done := make(chan struct{})
	go func() {
		for !stop.Load() {
			e.Progress()
		}
		close(done)
	}()
	pingPong(b, a, n)
	stop.Store(true)
	<-done
}

// rawWords maps two cache lines of a shared file: ping at 0, pong at 64.
func rawWords(tb testing.TB, path string, create bool) (ping, pong *atomic.Uint64, unmap func()) {
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if create {
		f.Truncate(4096)
	}
	mem, err := mmap.MapRegion(f, 4096, mmap.RDWR, 0, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return (*atomic.Uint64)(unsafe.Pointer(&mem[0])), (*atomic.Uint64)(unsafe.Pointer(&mem[64])), func() { mem.Unmap() }
}

const rawStop = ^uint64(0)

// rawChild answers every new ping value with the same pong value.
func rawChild(path string) int {
	ping, pong, unmap := rawWords(nopTB{}, path, false)
	defer unmap()
	for last := uint64(0); ; {
		v := ping.Load()
		if v == rawStop {
			return 0
		}
		if v != last {
			pong.Store(v)
			last = v
		}
	}
}

func benchRawProcesses(b *testing.B) {
	path := filepath.Join(b.TempDir(), "raw")
	ping, pong, unmap := rawWords(b, path, true)
	defer unmap()
	cmd := startChild(b, "raw "+path)
	b.ResetTimer()
	for i := uint64(1); i <= uint64(b.N); i++ {
		ping.Store(i)
		for pong.Load() != i {
		}
	}
	reportOneway(b)
	b.StopTimer()
	ping.Store(rawStop)
	cmd.Wait()
}

func benchRawGoroutines(b *testing.B) {
	ping, pong, unmap := rawWords(b, filepath.Join(b.TempDir(), "raw"), true)
	defer unmap()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for last := uint64(0); ; {
			v := ping.Load()
			if v == rawStop {
				return
			}
			if v != last {
				pong.Store(v)
				last = v
			}
		}
	}()
	b.ResetTimer()
	for i := uint64(1); i <= uint64(b.N); i++ {
		ping.Store(i)
		for pong.Load() != i {
		}
	}
	reportOneway(b)
	b.StopTimer()
	ping.Store(rawStop)
	<-done // the echo goroutine must stop reading before unmap
}

// nopTB lets rawWords run in the child, outside any test.
type nopTB struct{ testing.TB }

func (nopTB) Fatal(args ...any) { os.Exit(4) }

// BenchmarkStream: one goroutine sends b.N n-byte messages to another
// (rank 1 of the same job) as fast as the receiver takes them, with at most
// a window of 64 in flight, through the fast box (box) or the FIFO alone
// (fifo, btl_sm_fbox_max=0), or a 16 or 64 KiB box (box16k, box64k). ns/op is the time
// per message. The sender looks at the receiver's count only every 16
// sends, so that the count's cache line does not bounce per message.
func BenchmarkStream(b *testing.B) {
	for _, n := range []int{8, 256, 2048, 4096} {
		for _, mode := range []string{"box", "box16k", "box64k", "fifo"} {
			b.Run(mode+"/"+sizeName(n), func(b *testing.B) {
				cfg := DefaultConfig()
				switch mode {
				case "fifo":
					cfg.FboxMax = 0
				case "box16k":
					cfg.FboxSize = 16 << 10
				case "box64k":
					cfg.FboxSize = 64 << 10
				}
				mods := newJob(b, 2, cfg)
				a, e := mods[0], mods[1]
				var got atomic.Int64
				e.Register(btl.TagPMLMatch, func(int, []byte) { got.Add(1) })
				var stop atomic.Bool
				done := make(chan struct{})
				go func() {
					for !stop.Load() {
						e.Progress()
					}
					close(done)
				}()
				hdr, pay := make([]byte, 16), make([]byte, n)
				b.SetBytes(int64(n))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					a.Send(1, btl.TagPMLMatch, hdr, pay, nil)
					for i%16 == 15 && int64(i+1)-got.Load() >= 64 {
						a.Progress()
					}
				}
				for got.Load() != int64(b.N) {
					a.Progress()
				}
				b.StopTimer()
				stop.Store(true)
				<-done
			})
		}
	}
}
