package tcp

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/btltest"
	"github.com/gorun-mpi/gorun/internal/errs"
)

// testConfig: loopback; a 32 KiB max send size (as sm's) keeps the suite's
// 3000-message bursts to ~20 MB, which a loaded machine under -race moves
// well within btltest.Timeout. btl_tcp_timeout is a generous 120 s, not a
// short one: the conformance suite sends its bursts before the receiver
// reads (PendingKeepsOrder), and Linux's TCP_USER_TIMEOUT also ends a
// connection whose receiver has kept its window shut that long, so a
// 10 s timeout failed the suite whenever a loaded machine made the send
// loop last 10 s ("no progress within 20s", the peer reported lost).
func testConfig() Config {
	c := DefaultConfig()
	c.Loopback = true
	c.EagerLimit, c.MaxSendSize = 8<<10, 32<<10
	c.TimeoutSec = 120
	return c
}

// mesh builds n connected modules in this process.
func mesh(t testing.TB, n int, cfg Config, secret []byte) []*Module {
	t.Helper()
	mods := make([]*Module, n)
	addrs := make([]string, n)
	for i := range mods {
		m, err := Listen(Job{Rank: i, Size: n, Secret: secret}, cfg, hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		mods[i], addrs[i] = m, m.Addr()
		t.Cleanup(func() { m.Close() })
	}
	var wg sync.WaitGroup
	errc := make(chan error, n)
	for _, m := range mods {
		wg.Add(1)
		go func() { defer wg.Done(); errc <- m.Connect(addrs) }()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	return mods
}

func TestConformance(t *testing.T) {
	btltest.Run(t, func(t *testing.T) (a, b btl.Module, ar, br int) {
		m := mesh(t, 2, testConfig(), NewSecret())
		return m[0], m[1], 0, 1
	})
}

func TestConformanceSmallLimits(t *testing.T) {
	cfg := testConfig()
	cfg.EagerLimit, cfg.MaxSendSize = 1024, 4096
	btltest.Run(t, func(t *testing.T) (a, b btl.Module, ar, br int) {
		m := mesh(t, 2, cfg, NewSecret())
		return m[0], m[1], 0, 1
	})
}

// TestConformanceEpoll runs the suite with Progress asking epoll which
// sockets have data, as it does beyond directMax peers.
func TestConformanceEpoll(t *testing.T) {
	cfg := testConfig()
	cfg.NoDirect = true
	btltest.Run(t, func(t *testing.T) (a, b btl.Module, ar, br int) {
		m := mesh(t, 2, cfg, NewSecret())
		if m[0].direct != nil {
			t.Fatal("NoDirect set, but Progress reads the sockets directly")
		}
		return m[0], m[1], 0, 1
	})
}

// TestDirect: Progress reads the sockets directly with up to directMax
// peers and asks epoll beyond; a kick that lands after its Wake was
// consumed (evfd readable, nobody waiting) is drained by the next spin,
// which then does not report it again: a rank that reads sockets directly
// never reads evfd in Progress, and an undrained one would end every later
// spin and Sleep at once.
func TestDirect(t *testing.T) {
	two := mesh(t, 2, testConfig(), NewSecret())
	if len(two[0].direct) != 1 || two[0].direct[0].rank != 1 {
		t.Fatalf("2 ranks: direct reads of %d peers, want rank 1's", len(two[0].direct))
	}
	if four := mesh(t, directMax+2, testConfig(), NewSecret()); four[0].direct != nil {
		t.Fatalf("%d peers read directly; the most is %d", len(four[0].direct), directMax)
	}
	cfg := testConfig()
	cfg.SpinUsec = 10_000_000
	m := mesh(t, 2, cfg, NewSecret())[1]
	m.lastWork.Store(m.since())
	m.kick() // as a Wake racing a Sleep that returned for a socket
	if !m.spin(0) {
		t.Fatal("spin did not end on a readable evfd")
	}
	if m.spin(20 * time.Millisecond) {
		t.Error("spin reported the same kick twice: evfd was not drained")
	}
	m.kick()
	m.Sleep(time.Second) // returns at once for the kick, and drains it
	start := time.Now()
	m.Sleep(20 * time.Millisecond)
	if time.Since(start) < 10*time.Millisecond {
		t.Error("a Sleep after the one that saw a kick returned at once: evfd was not drained")
	}
}

// TestPeerLost: closing one end makes the other report the peer once,
// fail its queued by-reference sends, and refuse new ones.
func TestPeerLost(t *testing.T) {
	mods := mesh(t, 3, testConfig(), NewSecret())
	var lost []int
	mods[0].OnPeerLost(func(p int) { lost = append(lost, p) })
	// Queue by-reference sends that the peer never reads.
	big := make([]byte, mods[0].Attributes().MaxSendSize)
	var comps []*rec
	for i := 0; i < 200; i++ {
		c := &rec{}
		copied, err := mods[0].Send(1, btl.TagPMLFrag, []byte("h"), big, c)
		if err != nil {
			t.Fatal(err)
		}
		if !copied {
			comps = append(comps, c)
		}
	}
	mods[1].Close()
	deadline := time.Now().Add(btltest.Timeout)
	for len(lost) == 0 && time.Now().Before(deadline) {
		mods[0].Progress()
	}
	if len(lost) != 1 || lost[0] != 1 {
		t.Fatalf("peer-lost reports %v; want [1]", lost)
	}
	for i := 0; i < 10; i++ {
		mods[0].Progress()
	}
	if len(lost) != 1 {
		t.Fatalf("peer-lost reports %v; want exactly one", lost)
	}
	for i, c := range comps {
		c.mu.Lock()
		if c.calls != 1 || !errors.Is(c.err, errs.ErrPeerLost) {
			t.Errorf("by-reference send %d: %d SendDone calls, error %v; want one with ErrPeerLost", i, c.calls, c.err)
		}
		c.mu.Unlock()
	}
	if _, err := mods[0].Send(1, btl.TagPMLMatch, []byte("h"), nil, nil); !errors.Is(err, errs.ErrPeerLost) {
		t.Errorf("Send to a lost peer: %v; want ErrPeerLost", err)
	}
	// The third rank is unaffected.
	var got int
	mods[2].Register(btl.TagPMLMatch, func(src int, data []byte) { got++ })
	if _, err := mods[0].Send(2, btl.TagPMLMatch, []byte("h"), nil, nil); err != nil {
		t.Fatal(err)
	}
	for got == 0 && time.Now().Before(deadline) {
		mods[0].Progress()
		mods[2].Progress()
	}
	if got != 1 {
		t.Errorf("rank 2 received %d messages; want 1", got)
	}
}

type rec struct {
	mu    sync.Mutex
	calls int
	err   error
}

func (r *rec) SendDone(err error) {
	r.mu.Lock()
	r.calls++
	r.err = err
	r.mu.Unlock()
}

func TestReach(t *testing.T) {
	// Ranks 0 and 2 use tcp, rank 1 is "local" to both (no tcp).
	cfg := testConfig()
	secret := NewSecret()
	reach := [][]bool{{false, false, true}, {false, false, false}, {true, false, false}}
	mods := make([]*Module, 3)
	addrs := make([]string, 3)
	for i := range mods {
		m, err := Listen(Job{Rank: i, Size: 3, Secret: secret, Reach: reach[i]}, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		mods[i], addrs[i] = m, m.Addr()
	}
	var wg sync.WaitGroup
	for _, m := range mods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Connect(addrs); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if mods[0].Reachable(1) || !mods[0].Reachable(2) || mods[1].Reachable(0) || mods[0].Reachable(0) {
		t.Errorf("Reachable does not follow Job.Reach")
	}
	if _, err := mods[0].Send(1, btl.TagPMLMatch, nil, nil, nil); err == nil {
		t.Errorf("Send to an unreached rank succeeded")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.EagerLimit = c.MaxSendSize + 1 }, "btl_tcp_eager_limit"},
		{func(c *Config) { c.PortMin, c.PortRange = 65000, 1000 }, "btl_tcp_port_range"},
		{func(c *Config) { c.IfInclude, c.IfExclude = []string{"lo"}, []string{"eth0"} }, "btl_tcp_if_exclude"},
		{func(c *Config) { c.IfInclude = []string{"10.0.0.0/33"} }, "btl_tcp_if_include"},
		{func(c *Config) { c.IfExclude = []string{"a very long interface name"} }, "btl_tcp_if_exclude"},
	} {
		c := DefaultConfig()
		tt.mod(&c)
		if err := c.Validate(); err == nil || !contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v; want an error naming %s", c, err, tt.want)
		}
	}
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestWatch: an armed module calls wake when a fragment arrives, once per
// arming; disarmed, it does not.
func TestWatch(t *testing.T) {
	mods := mesh(t, 2, testConfig(), NewSecret())
	woke := make(chan struct{}, 4)
	mods[1].Watch(func() { woke <- struct{}{} })
	if _, err := mods[0].Send(1, btl.TagPMLCtl, []byte("x"), nil, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woke:
	case <-time.After(btltest.Timeout):
		t.Fatal("the armed watcher did not call wake")
	}
	mods[1].Watch(nil)
	var got int
	mods[1].Register(btl.TagPMLCtl, func(int, []byte) { got++ })
	for got == 0 {
		mods[1].Progress()
	}
	if !mods[0].Flushed(1, mods[0].QueueMark(1)) || !mods[0].Flushed(-1, 1) {
		t.Error("sends to a peer that took them all, or to rank -1, are not flushed")
	}
}

// TestSpin: the spin phase of Sleep returns true when a fragment arrives
// or Wake was called, and false at once when it is off or the module has
// been idle for longer than btl_tcp_spin_time; d bounds it.
func TestSpin(t *testing.T) {
	cfg := testConfig()
	cfg.SpinUsec = 10_000_000 // 10 s, beyond the test's life: only an event ends the spin
	mods := mesh(t, 2, cfg, NewSecret())
	m := mods[1]
	m.lastWork.Store(m.since())
	if _, err := mods[0].Send(1, btl.TagPMLCtl, []byte("x"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if !m.spin(0) {
		t.Fatal("spin ended without the fragment that was sent")
	}
	var got int
	m.Register(btl.TagPMLCtl, func(int, []byte) { got++ })
	for got == 0 {
		m.Progress()
	}
	m.Wake()
	if !m.spin(0) || m.wakePend.Load() {
		t.Error("spin did not end on (and consume) a pending Wake")
	}
	if m.spin(time.Millisecond) {
		t.Error("spin bounded by d = 1ms reported an event; none was sent")
	}
	m.lastWork.Store(m.since() - int64(2*cfg.Spin()))
	if m.spin(0) {
		t.Error("an idle module's spin reported an event")
	}
	m.Sleep(time.Millisecond) // idle: sleeps in epoll_wait and returns after d
	m.cfg.SpinUsec = 0
	m.lastWork.Store(m.since())
	if m.spin(0) {
		t.Error("spin with btl_tcp_spin_time=0 reported an event")
	}
}
