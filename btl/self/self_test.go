package self

import (
	"strconv"
	"testing"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/btltest"
	"github.com/gorun-mpi/gorun/mca"
)

func newSelf(t *testing.T) (a, b btl.Module, ar, br int) {
	m, err := NewWithConfig(3, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, m, 3, 3
}

func TestConformance(t *testing.T) { btltest.Run(t, newSelf) }

func TestNeverDeliversInsideSend(t *testing.T) {
	m, _ := NewWithConfig(0, DefaultConfig())
	got := 0
	m.Register(btl.TagPMLMatch, func(int, []byte) { got++ })
	m.Send(0, btl.TagPMLMatch, []byte("h"), []byte("p"), nil)
	if got != 0 {
		t.Fatal("Send delivered the fragment itself")
	}
	if n := m.Progress(); n != 1 || got != 1 {
		t.Fatalf("Progress = %d, delivered %d; want 1, 1", n, got)
	}
}

func TestSteadyStateNoAllocs(t *testing.T) {
	m, _ := NewWithConfig(0, DefaultConfig())
	m.Register(btl.TagPMLMatch, func(int, []byte) {})
	hdr, pay := make([]byte, 16), make([]byte, 4096)
	allocs := testing.AllocsPerRun(1000, func() {
		m.Send(0, btl.TagPMLMatch, hdr, pay, nil)
		m.Progress()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per message in steady state, want 0", allocs)
	}
}

// TestFreeListsBounded: a burst of queued sends, small and large, leaves at
// most maxFreeSmall and maxFreeLarge buffers cached after delivery.
func TestFreeListsBounded(t *testing.T) {
	m, _ := NewWithConfig(0, DefaultConfig())
	m.Register(btl.TagPMLMatch, func(int, []byte) {})
	small, large := make([]byte, 100), make([]byte, DefaultConfig().MaxSendSize)
	for range 3 {
		for range 500 {
			m.Send(0, btl.TagPMLMatch, nil, small, nil)
			m.Send(0, btl.TagPMLMatch, nil, large, nil)
		}
		if n := m.Progress(); n != 1000 {
			t.Fatalf("Progress delivered %d, want 1000", n)
		}
		if s, l := len(m.mu.small), len(m.mu.large); s != maxFreeSmall || l != maxFreeLarge {
			t.Fatalf("after a burst of 500+500: %d small and %d large buffers cached, want %d and %d", s, l, maxFreeSmall, maxFreeLarge)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{EagerLimit: 10, MaxSendSize: 5}, {EagerLimit: -1, MaxSendSize: 5}, {MaxSendSize: 0}} {
		if c.Validate() == nil {
			t.Errorf("%+v validated", c)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Error(err)
	}
}

func BenchmarkPingPong(b *testing.B) {
	for _, n := range []int{8, 4096} {
		b.Run(byteSize(n), func(b *testing.B) {
			m, _ := NewWithConfig(0, DefaultConfig())
			got := 0
			m.Register(btl.TagPMLMatch, func(int, []byte) { got++ })
			pay := make([]byte, n)
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				m.Send(0, btl.TagPMLMatch, nil, pay, nil)
				m.Progress()
			}
			if got != b.N {
				b.Fatalf("delivered %d of %d", got, b.N)
			}
		})
	}
}

func byteSize(n int) string {
	if n >= 1024 {
		return strconv.Itoa(n/1024) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

// TestNewFromSet: New takes its configuration from the resolved parameters.
func TestNewFromSet(t *testing.T) {
	set, _, err := mca.Resolve(mca.Inputs{Flags: [][2]string{{"btl_self_eager_limit", "8k"}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(0, set)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{EagerLimit: 8 << 10, MaxSendSize: 64 << 10}
	if got := m.(*Module).cfg; got != want {
		t.Fatalf("New config %+v, want %+v", got, want)
	}
}
