package gorun

import (
	"fmt"
	"testing"
)

// BenchmarkSelf measures the per-message software cost of the API and the
// PML (no transport latency: a singleton sends to itself through btl/self).
func BenchmarkSelf(b *testing.B) {
	w, err := Init()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{8, 4096} {
		sb, rb := make([]byte, n), make([]byte, n)
		b.Run(fmt.Sprint("SendRecv/", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := w.Send(sb, 0, 1); err != nil {
					b.Fatal(err)
				}
				if _, err := w.Recv(rb, 0, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprint("Window/", n), func(b *testing.B) {
			// osu bw's window through the public API: each Isend and
			// Irecv allocates its Request, so this counts the GC's share.
			const window = 64
			var rs, ss [window]*Request
			b.ReportAllocs()
			for i := 0; i < b.N; i += window {
				for j := range rs {
					rs[j], _ = w.Irecv(rb, 0, 1)
				}
				for j := range ss {
					ss[j], _ = w.Isend(sb, 0, 1)
				}
				for j := range ss {
					ss[j].Wait()
				}
				for j := range rs {
					rs[j].Wait()
				}
			}
		})
		b.Run(fmt.Sprint("IsendIrecvWait/", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r, _ := w.Irecv(rb, 0, 1)
				s, _ := w.Isend(sb, 0, 1)
				s.Wait()
				r.Wait()
			}
		})
	}
}
