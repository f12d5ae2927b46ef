package self

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/mca"
)

// Exclusivity of self: the highest, so loopback always wins its one peer.
const Exclusivity = 1 << 16

// Config is the resolved configuration of a self module.
type Config struct {
	EagerLimit  int // btl_self_eager_limit
	MaxSendSize int // btl_self_max_send_size
}

// Params declares btl/self's parameters, bound to Config's fields.
var Params = mca.Declare("btl_self", []mca.Field[Config]{
	mca.Size("btl_self_eager_limit", "16k", 0, 16<<20, func(c *Config) *int { return &c.EagerLimit },
		"largest payload the PML sends to itself eagerly (the PML header does not count); at most btl_self_max_send_size"),
	mca.Size("btl_self_max_send_size", "64k", 1<<10, 64<<20, func(c *Config) *int { return &c.MaxSendSize },
		"largest payload of one loopback fragment"),
}, mca.Rule[Config]{Names: []string{"btl_self_eager_limit", "btl_self_max_send_size"}, Check: func(c *Config) string {
	if c.EagerLimit > c.MaxSendSize {
		return "an eager message is one fragment, so the eager limit must not exceed the max send size"
	}
	return ""
}})

// DefaultConfig is the configuration the parameter defaults give.
func DefaultConfig() Config { return Params.Defaults() }

// Validate checks a Config that need not come from mca: each parameter's
// range and the rule between them.
func (c Config) Validate() error { return Params.Validate(&c) }

// Module is the loopback transport of one rank.
type Module struct {
	rank  int
	cfg   Config
	attrs btl.Attributes
	recv  [btl.NumTags]btl.RecvFunc

	mu struct {
		sync.Mutex
		q     []frag   // sent, not yet delivered, in Send order
		small [][]byte // free buffers of cap MaxHeader+EagerLimit
		large [][]byte // free buffers of cap MaxHeader+MaxSendSize
	}
	progMu sync.Mutex // held by the one goroutine inside Progress
	batch  []frag     // the queue being delivered; progMu
	// queued counts fragments in mu.q, so an idle Progress costs one atomic
	// load instead of two lock round trips.
	queued atomic.Int32
}

type frag struct {
	tag btl.Tag
	buf []byte
}

var _ btl.Module = (*Module)(nil)

// New builds the module for world rank rank from the btl_self_* parameters.
func New(rank int, p *mca.Set) (btl.Module, error) {
	cfg, err := Params.Config(p)
	if err != nil {
		return nil, err
	}
	return NewWithConfig(rank, cfg)
}

// NewWithConfig builds the module from cfg.
func NewWithConfig(rank int, cfg Config) (*Module, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Module{rank: rank, cfg: cfg}
	m.attrs = btl.Attributes{EagerLimit: cfg.EagerLimit, MaxSendSize: cfg.MaxSendSize,
		Latency: 0, Bandwidth: 100000, Exclusivity: Exclusivity, SingleCopy: true}
	return m, nil
}

func (m *Module) Name() string                       { return "self" }
func (m *Module) Attributes() btl.Attributes         { return m.attrs }
func (m *Module) Reachable(peer int) bool            { return peer == m.rank }
func (m *Module) Register(t btl.Tag, f btl.RecvFunc) { m.recv[t] = f }

// OnPeerLost: a process cannot lose itself; fn is never called.
func (m *Module) OnPeerLost(fn func(peer int)) {}

// Send copies hdr and payload into a queued buffer; see btl.Module.
func (m *Module) Send(peer int, tag btl.Tag, hdr, payload []byte, c btl.Completion) (bool, error) {
	switch {
	case peer != m.rank:
		return false, fmt.Errorf("btl/self: send to rank %d: only this rank %d is reachable", peer, m.rank)
	case len(hdr) > btl.MaxHeader:
		return false, fmt.Errorf("btl/self: header of %d bytes; allowed at most %d", len(hdr), btl.MaxHeader)
	case len(payload) > m.cfg.MaxSendSize:
		return false, fmt.Errorf("btl/self: payload of %d bytes; allowed at most btl_self_max_send_size=%d", len(payload), m.cfg.MaxSendSize)
	case tag >= btl.NumTags:
		return false, fmt.Errorf("btl/self: tag %d; allowed below %d", tag, btl.NumTags)
	}
	n := len(hdr) + len(payload)
	m.mu.Lock()
	var buf []byte
	if len(payload) <= m.cfg.EagerLimit {
		buf, m.mu.small = take(m.mu.small, btl.MaxHeader+m.cfg.EagerLimit)
	} else {
		buf, m.mu.large = take(m.mu.large, btl.MaxHeader+m.cfg.MaxSendSize)
	}
	buf = buf[:n]
	copy(buf[copy(buf, hdr):], payload)
	m.mu.q = append(m.mu.q, frag{tag, buf})
	m.queued.Add(1)
	m.mu.Unlock()
	return true, nil
}

// maxFreeSmall and maxFreeLarge bound the free lists, so that a burst of
// sends to self (a window of Isends, a long message's fragments) does not
// keep its buffers for the rank's lifetime: at the defaults at most 1 MiB
// and 0.5 MiB stay cached; the rest goes to the GC.
const (
	maxFreeSmall = 64
	maxFreeLarge = 8
)

// take pops a buffer from free, or makes one of capacity size.
func take(free [][]byte, size int) ([]byte, [][]byte) {
	if n := len(free); n > 0 {
		b := free[n-1]
		free[n-1] = nil
		return b, free[:n-1]
	}
	return make([]byte, size), free
}

// Progress delivers everything queued before it started, in order.
func (m *Module) Progress() int {
	if m.queued.Load() == 0 || !m.progMu.TryLock() {
		return 0
	}
	m.mu.Lock()
	m.batch, m.mu.q = m.mu.q, m.batch[:0]
	m.queued.Add(-int32(len(m.batch)))
	m.mu.Unlock()
	for _, f := range m.batch {
		if fn := m.recv[f.tag]; fn != nil {
			fn(m.rank, f.buf)
		}
	}
	n := len(m.batch)
	if n > 0 {
		m.mu.Lock()
		for i, f := range m.batch {
			switch {
			case cap(f.buf) == btl.MaxHeader+m.cfg.EagerLimit && len(m.mu.small) < maxFreeSmall:
				m.mu.small = append(m.mu.small, f.buf[:cap(f.buf)])
			case cap(f.buf) != btl.MaxHeader+m.cfg.EagerLimit && len(m.mu.large) < maxFreeLarge:
				m.mu.large = append(m.mu.large, f.buf[:cap(f.buf)])
			}
			m.batch[i].buf = nil
		}
		m.mu.Unlock()
	}
	m.progMu.Unlock()
	return n
}

// ReadFrom copies len(dst) bytes from addr in this process.
func (m *Module) ReadFrom(peer int, addr uintptr, dst []byte) error {
	if peer != m.rank {
		return fmt.Errorf("btl/self: ReadFrom rank %d: only this rank %d is reachable", peer, m.rank)
	}
	if len(dst) == 0 {
		return nil
	}
	// The caller (the PML) keeps the memory at addr alive and unmoved (a heap
	// buffer) until the read completes. The indirect conversion keeps
	// checkptr from rejecting a pointer rebuilt from an integer.
	src := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), len(dst))
	copy(dst, src)
	return nil
}

// Close drops anything queued.
func (m *Module) Close() error {
	m.mu.Lock()
	m.mu.q = nil
	m.queued.Store(0)
	m.mu.Unlock()
	return nil
}
