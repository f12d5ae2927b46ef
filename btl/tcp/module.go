package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/internal/ring"
	"github.com/gorun-mpi/gorun/internal/errs"
)

// Exclusivity of tcp: below sm and self, so it carries only the peers that
// no shared-memory transport reaches (or all, when sm is not selected).
const Exclusivity = 1 << 8

// frameHdr is the size of the BTL's own frame header.
const frameHdr = 8

// copyLimit: a queued payload up to this size is copied (copied=true);
// larger ones are kept by reference.
const copyLimit = 16 << 10

// Job says who this rank is and which peers the module carries.
type Job struct {
	Rank, Size int
	// Reach marks, by world rank, the peers this module carries; nil means
	// every other rank. It must be symmetric across the job (rank a reaches
	// b iff b reaches a): Connect waits for exactly these connections.
	Reach []bool
	// Secret is the job's secret, at least MinSecret bytes; nil when it is
	// not known yet at Listen: SetSecret must then give it before Connect
	// (incoming handshakes wait for it).
	Secret []byte
}

// Module is one rank's tcp transport.
type Module struct {
	rank, size int
	cfg        Config
	log        hclog.Logger
	secret     []byte        // set once; read after secretSet is closed
	secretSet  chan struct{} // closed by SetSecret
	attrs      btl.Attributes
	ln         *net.TCPListener
	addr       string
	epfd, evfd int
	peers      []peer

	born     time.Time    // Listen's time: the origin of since
	lastWork atomic.Int64 // since() of the last Send or Progress that moved something

	recv     [btl.NumTags]btl.RecvFunc
	place    [btl.NumTags]btl.PlaceFunc // see btl.Placer
	landed   [btl.NumTags]btl.LandedFunc
	placeMin int // see placeMin
	onLost   func(peer int)

	progMu    sync.Mutex // held by the one goroutine inside Progress
	events    []unix.EpollEvent
	direct    []*peer // the connected peers when they are at most directMax (set by Connect); nil: Progress asks epoll
	pendPeers atomic.Int32
	lostUnrep atomic.Bool
	wakePend  atomic.Bool
	sleeping  atomic.Bool
	closed    atomic.Bool
	closeOnce sync.Once
	fdMu      sync.RWMutex // Wake and the watcher hold it shared while they use evfd/epfd; Close exclusively

	// The watcher (see Watch).
	watchFn  atomic.Pointer[func()]
	watchArm chan struct{}
	watchEnd chan struct{}

	// The accept loop and the handshakes it runs.
	acMu       sync.Mutex
	want       map[int]bool   // ranks still expected to connect (set at Listen)
	accepted   chan acceptRes // authenticated connections for Connect
	handshakes map[net.Conn]struct{}
	wg         sync.WaitGroup
}

type acceptRes struct {
	rank int
	conn net.Conn
}

// peer is what this rank knows about one other rank.
type peer struct {
	rank  int
	reach bool
	lost  atomic.Bool
	mu    struct {
		sync.Mutex
		fd int               // -1: none (not connected, lost and reported, or closed)
		q  ring.Ring[sendOp] // sends waiting for the socket, in Send order
	}
	npend atomic.Int32 // mu.q.Len(), readable without the lock
	// receive side, owned by Progress (progMu)
	rfd        int
	rbuf       []byte
	roff, rlen int
	reported   bool
	pl         placing // the fragment being read straight into its place
}

// placing is the state of a fragment whose payload the receiver reads
// straight into the place the PML gave (btl.Placer).
type placing struct {
	dst      []byte // where the payload goes; nil: no fragment is being placed
	got      int    // bytes of dst in place
	tag      btl.Tag
	hdrLen   int
	hdr      [btl.MaxHeader]byte // the fragment's PML header
	declined bool                // place said nil to the partial frame at rbuf[roff:]
	small    bool                // the next read into rbuf takes a frame and PML header at most
}

var (
	_ btl.Module = (*Module)(nil)
	_ btl.Placer = (*Module)(nil)
)

var errClosed = fmt.Errorf("btl/tcp: module closed: %w", errs.ErrFinalized)

func errPeerLost(rank int, why error) error {
	if why != nil {
		return fmt.Errorf("btl/tcp: connection to rank %d lost (%v): %w", rank, why, errs.ErrPeerLost)
	}
	return fmt.Errorf("btl/tcp: connection to rank %d lost: %w", rank, errs.ErrPeerLost)
}

// Listen opens this rank's listening socket on the address the interface
// parameters select and returns the module, not yet connected: publish
// Addr, then call Connect with every rank's address.
func Listen(job Job, cfg Config, log hclog.Logger) (*Module, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if job.Size < 1 || job.Rank < 0 || job.Rank >= job.Size {
		return nil, fmt.Errorf("btl/tcp: rank %d of %d; want 0 ≤ rank < size", job.Rank, job.Size)
	}
	if job.Secret != nil && len(job.Secret) < MinSecret {
		return nil, fmt.Errorf("btl/tcp: a job secret of %d bytes; want at least %d", len(job.Secret), MinSecret)
	}
	if job.Reach != nil && len(job.Reach) != job.Size {
		return nil, fmt.Errorf("btl/tcp: reach list of %d ranks for a job of %d", len(job.Reach), job.Size)
	}
	avail, err := systemAddrs()
	if err != nil {
		return nil, err
	}
	ip, err := pickAddr(cfg, avail)
	if err != nil {
		return nil, err
	}
	ln, err := listenRange(ip, cfg)
	if err != nil {
		return nil, err
	}
	m := &Module{rank: job.Rank, size: job.Size, cfg: cfg, log: log, secretSet: make(chan struct{}),
		ln: ln, addr: ln.Addr().String(), epfd: -1, evfd: -1, born: time.Now(), placeMin: placeMin,
		handshakes: map[net.Conn]struct{}{}, accepted: make(chan acceptRes, job.Size)}
	m.attrs = btl.Attributes{EagerLimit: cfg.EagerLimit, MaxSendSize: cfg.MaxSendSize,
		Latency: 100, Bandwidth: 1000, Exclusivity: Exclusivity}
	m.peers = make([]peer, job.Size)
	for i := range m.peers {
		p := &m.peers[i]
		p.rank, p.rfd = i, -1
		p.mu.fd = -1
		p.reach = i != job.Rank && (job.Reach == nil || job.Reach[i])
	}
	m.want = map[int]bool{} // the ranks above this one connect to it
	for i := m.rank + 1; i < m.size; i++ {
		if m.peers[i].reach {
			m.want[i] = true
		}
	}
	if m.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		ln.Close()
		return nil, fmt.Errorf("btl/tcp: epoll_create1: %w", err)
	}
	if m.evfd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		unix.Close(m.epfd)
		ln.Close()
		return nil, fmt.Errorf("btl/tcp: eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(m.evfd)}
	if err := unix.EpollCtl(m.epfd, unix.EPOLL_CTL_ADD, m.evfd, &ev); err != nil {
		m.closeFDs()
		return nil, fmt.Errorf("btl/tcp: epoll_ctl: %w", err)
	}
	if job.Secret != nil {
		m.SetSecret(job.Secret)
	}
	m.events = make([]unix.EpollEvent, 64)
	m.watchArm, m.watchEnd = make(chan struct{}, 1), make(chan struct{})
	m.wg.Add(2)
	go m.acceptLoop()
	go m.watchLoop()
	log.Debug("tcp listening", "rank", m.rank, "addr", m.addr)
	return m, nil
}

func listenRange(ip net.IP, cfg Config) (*net.TCPListener, error) {
	if cfg.PortMin == 0 {
		ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: ip})
		if err != nil {
			return nil, fmt.Errorf("btl/tcp: listening on %v: %w", ip, err)
		}
		return ln, nil
	}
	var last error
	for port := cfg.PortMin; port < cfg.PortMin+cfg.PortRange; port++ {
		ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: ip, Port: port})
		if err == nil {
			return ln, nil
		}
		last = err
	}
	return nil, fmt.Errorf("btl/tcp: no free port on %v in btl_tcp_port_min=%d .. +btl_tcp_port_range=%d: %w", ip, cfg.PortMin, cfg.PortRange, last)
}

// SetSecret gives the job's secret when Listen did not have it. Call it
// once, before Connect.
func (m *Module) SetSecret(secret []byte) error {
	if len(secret) < MinSecret {
		return fmt.Errorf("btl/tcp: a job secret of %d bytes; want at least %d", len(secret), MinSecret)
	}
	select {
	case <-m.secretSet:
		return errors.New("btl/tcp: the job secret is already set")
	default:
	}
	m.secret = append([]byte(nil), secret...)
	close(m.secretSet)
	return nil
}

// Addr is the address other ranks connect to ("ip:port").
func (m *Module) Addr() string { return m.addr }

// Config is the configuration the module was built with.
func (m *Module) Config() Config { return m.cfg }

func (m *Module) Name() string                       { return "tcp" }
func (m *Module) Attributes() btl.Attributes         { return m.attrs }
func (m *Module) Register(t btl.Tag, f btl.RecvFunc) { m.recv[t] = f }
func (m *Module) OnPeerLost(fn func(peer int))       { m.onLost = fn }

// RegisterPlace implements btl.Placer.
func (m *Module) RegisterPlace(t btl.Tag, place btl.PlaceFunc, landed btl.LandedFunc) {
	m.place[t], m.landed[t] = place, landed
}

// Reachable: the peers of Job.Reach.
func (m *Module) Reachable(peer int) bool {
	return peer >= 0 && peer < len(m.peers) && m.peers[peer].reach
}

// ReadFrom is not supported: Attributes().SingleCopy is false.
func (m *Module) ReadFrom(peer int, addr uintptr, dst []byte) error {
	return errors.New("btl/tcp: no single copy across machines")
}

// acceptLoop accepts connections until the listener closes; each runs the
// acceptor's handshake in its own goroutine (bounded by the timeout).
func (m *Module) acceptLoop() {
	defer m.wg.Done()
	for {
		c, err := m.ln.Accept()
		if err != nil {
			if m.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			m.log.Warn("btl/tcp: accept failed", "rank", m.rank, "error", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		m.acMu.Lock()
		if m.closed.Load() {
			m.acMu.Unlock()
			c.Close()
			return
		}
		m.handshakes[c] = struct{}{}
		m.wg.Add(1)
		m.acMu.Unlock()
		go m.handleIncoming(c)
	}
}

func (m *Module) handleIncoming(c net.Conn) {
	defer m.wg.Done()
	// admit claims the rank's slot, so a second connection claiming the
	// same rank is refused before this side proves itself.
	admit := func(rank int) error {
		m.acMu.Lock()
		defer m.acMu.Unlock()
		if !m.want[rank] {
			return fmt.Errorf("%w: rank %d authenticated but is not expected to connect (already connected, or not a peer of this transport)", errAuth, rank)
		}
		delete(m.want, rank)
		return nil
	}
	var rank int
	var err error
	select {
	case <-m.secretSet:
		rank, err = acceptHandshake(c, m.secret, m.rank, m.size, m.cfg.Timeout(), admit)
	case <-time.After(m.cfg.Timeout()):
		err = fmt.Errorf("%w: the job secret was not known within btl_tcp_timeout", errAuth)
	case <-m.watchEnd: // closed
		err = errClosed
	}
	m.acMu.Lock()
	delete(m.handshakes, c)
	if err == nil {
		m.accepted <- acceptRes{rank, c} // buffered: one slot per rank
		m.acMu.Unlock()
		return
	}
	m.acMu.Unlock()
	if !m.closed.Load() {
		m.log.Warn("btl/tcp: dropped a connection that did not authenticate", "rank", m.rank, "from", c.RemoteAddr().String(), "error", err)
	}
	c.Close()
}

// Connect builds the mesh: it connects to every reached rank below this
// one (at addrs[rank]) and accepts every reached rank above, each through
// the handshake, within the configured timeout. addrs is indexed by world
// rank; entries of unreached ranks are ignored.
func (m *Module) Connect(addrs []string) error {
	select {
	case <-m.secretSet:
	default:
		return errors.New("btl/tcp: Connect before SetSecret")
	}
	if len(addrs) != m.size {
		return fmt.Errorf("btl/tcp: %d addresses for %d ranks", len(addrs), m.size)
	}
	deadline := time.Now().Add(m.cfg.Timeout())
	nAccept := 0
	for i := m.rank + 1; i < m.size; i++ {
		if m.peers[i].reach {
			nAccept++
		}
	}
	dials, nDial := m.startDials(addrs, deadline)
	firstErr := m.adoptAll(dials, nDial+nAccept, deadline)
	m.acMu.Lock()
	clear(m.want) // from now on, every connection is a stranger's
	m.acMu.Unlock()
	if firstErr != nil {
		return firstErr
	}
	for i := range m.peers {
		if p := &m.peers[i]; p.reach && p.rfd < 0 {
			return fmt.Errorf("btl/tcp: rank %d: no connection to rank %d after the connect phase", m.rank, i)
		}
	}
	m.setDirect()
	m.log.Debug("tcp connected", "rank", m.rank, "peers", nDial+nAccept, "direct", m.direct != nil)
	return nil
}

// dialRes is the outcome of one dial of Connect.
type dialRes struct {
	rank int
	conn net.Conn
	err  error
}

// startDials dials every reached rank below this one, each in its own
// goroutine, and returns the channel their n outcomes arrive on.
func (m *Module) startDials(addrs []string, deadline time.Time) (results <-chan dialRes, n int) {
	dials := make(chan dialRes, m.rank)
	for i := 0; i < m.rank; i++ {
		if !m.peers[i].reach {
			continue
		}
		n++
		go func(rank int, addr string) {
			c, err := m.dial(rank, addr, deadline)
			dials <- dialRes{rank, c, err}
		}(i, addrs[i])
	}
	return dials, n
}

// adoptAll adopts connections as they come, dialled or accepted, until
// want of them have come or the deadline passes; it returns the first
// error (a failed dial or adoption, or the ranks still missing at the
// deadline).
func (m *Module) adoptAll(dials <-chan dialRes, want int, deadline time.Time) error {
	var firstErr error
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for done := 0; done < want; {
		var rank int
		var c net.Conn
		select {
		case r := <-dials:
			if r.err != nil {
				if firstErr == nil {
					firstErr = r.err
				}
				done++
				continue
			}
			rank, c = r.rank, r.conn
		case r := <-m.accepted:
			rank, c = r.rank, r.conn
		case <-timer.C:
			m.acMu.Lock()
			var missing []int
			for r := range m.want {
				missing = append(missing, r)
			}
			m.acMu.Unlock()
			if firstErr == nil {
				firstErr = fmt.Errorf("btl/tcp: rank %d: timed out after %v (btl_tcp_timeout) waiting for connections from ranks %v", m.rank, m.cfg.Timeout(), missing)
			}
			return firstErr
		}
		done++
		if err := m.adopt(rank, c); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

func (m *Module) dial(rank int, addr string, deadline time.Time) (net.Conn, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("btl/tcp: rank %d's address %q is not host:port", rank, addr)
	}
	var c net.Conn
	var err error
	for {
		d := net.Dialer{Deadline: deadline}
		c, err = d.Dial("tcp4", addr)
		if err == nil || time.Now().After(deadline) || !errors.Is(err, unix.ECONNREFUSED) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return nil, fmt.Errorf("btl/tcp: rank %d connecting to rank %d at %s: %w", m.rank, rank, addr, err)
	}
	if err := connectHandshake(c, m.secret, m.rank, rank, time.Until(deadline)); err != nil {
		c.Close()
		return nil, fmt.Errorf("btl/tcp: rank %d connecting to rank %d at %s: %w", m.rank, rank, addr, err)
	}
	return c, nil
}

// adopt takes over an authenticated connection: a duplicate of its
// descriptor (non-blocking, as Go left it) with the liveness options set,
// registered in the module's epoll set. The net.Conn is closed.
func (m *Module) adopt(rank int, c net.Conn) error {
	defer c.Close()
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return fmt.Errorf("btl/tcp: connection to rank %d is not TCP", rank)
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	fd := -1
	var derr error
	if err := raw.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return err
	}
	if derr != nil {
		return fmt.Errorf("btl/tcp: duplicating the socket of rank %d: %w", rank, derr)
	}
	if err := m.setSockopts(fd); err != nil {
		unix.Close(fd)
		return fmt.Errorf("btl/tcp: socket options for rank %d: %w", rank, err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(fd), Pad: int32(rank + 1)}
	if err := unix.EpollCtl(m.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return fmt.Errorf("btl/tcp: epoll_ctl for rank %d: %w", rank, err)
	}
	p := &m.peers[rank]
	frame := frameHdr + btl.MaxHeader + m.cfg.MaxSendSize
	p.rbuf = make([]byte, max(256<<10, 2*frame))
	p.rfd = fd
	p.mu.Lock()
	p.mu.fd = fd
	p.mu.Unlock()
	return nil
}

// setSockopts: no Nagle; keepalive probes every second of silence and
// TCP_USER_TIMEOUT half a second below btl_tcp_timeout, so that a peer
// that vanishes without FIN or RST fails the socket within btl_tcp_timeout
// of its last sign of life: with data in flight through the
// retransmission timer (which Linux clamps to the user timeout), idle
// through the first keepalive probe that finds the user timeout passed.
func (m *Module) setSockopts(fd int) error {
	t := m.cfg.Timeout()
	user := max(t-500*time.Millisecond, 500*time.Millisecond)
	for _, o := range []struct{ level, opt, val int }{
		{unix.IPPROTO_TCP, unix.TCP_NODELAY, 1},
		{unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
		{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, 1},
		{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, 1},
		{unix.IPPROTO_TCP, unix.TCP_KEEPCNT, max(2, int(t/time.Second)+1)},
		{unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(user / time.Millisecond)},
	} {
		if err := unix.SetsockoptInt(fd, o.level, o.opt, o.val); err != nil {
			return fmt.Errorf("setsockopt %d/%d: %w", o.level, o.opt, err)
		}
	}
	return nil
}

// Close releases the listener, every socket and the epoll set. Sends still
// pending are dropped without completion.
func (m *Module) Close() error {
	m.closeOnce.Do(func() {
		m.acMu.Lock()
		m.closed.Store(true)
		for c := range m.handshakes {
			c.Close()
		}
		m.acMu.Unlock()
		m.ln.Close()
		close(m.watchEnd)
		one := [8]byte{1}
		unix.Write(m.evfd, one[:]) // end the watcher's (or a Sleep's) epoll_wait
		m.wg.Wait()
		for {
			select {
			case r := <-m.accepted:
				r.conn.Close()
				continue
			default:
			}
			break
		}
		m.progMu.Lock()
		for i := range m.peers {
			p := &m.peers[i]
			p.mu.Lock()
			if p.mu.fd >= 0 {
				unix.Close(p.mu.fd)
			}
			p.mu.fd, p.rfd = -1, -1
			p.pl = placing{}
			for p.mu.q.Len() > 0 {
				p.mu.q.Pop()
			}
			p.mu.Unlock()
		}
		m.fdMu.Lock()
		m.closeFDs()
		m.evfd, m.epfd = -1, -1
		m.fdMu.Unlock()
		m.progMu.Unlock()
	})
	return nil
}

func (m *Module) closeFDs() {
	if m.evfd >= 0 {
		unix.Close(m.evfd)
	}
	if m.epfd >= 0 {
		unix.Close(m.epfd)
	}
	m.ln.Close()
}

// String names the module for logs.
func (m *Module) String() string { return "tcp rank " + strconv.Itoa(m.rank) + " at " + m.addr }

// putFrameHdr writes the frame header for a fragment.
func putFrameHdr(b []byte, tag btl.Tag, hdrLen, payLen int) {
	binary.LittleEndian.PutUint32(b, uint32(hdrLen+payLen))
	b[4], b[5], b[6], b[7] = byte(tag), byte(hdrLen), 0, 0
}
