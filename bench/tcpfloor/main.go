// Command tcpfloor measures the floor of TCP between two hosts for a Go
// program: what a plain TCP stream, driven by a rank that spins on
// non-blocking system calls and never waits in Go's netpoller, gets
// between the same hosts that gorun's btl/tcp and Open MPI's btl/tcp are
// measured on (bench/tcplab.py runs all three side by side).
//
// It has the modes, size sweep, iteration counts, window and output format
// of bench/osu (and bench.c), so the same parser reads all three:
//
//	tcpfloor -server -addr IP:PORT           # serves one session, then exits
//	tcpfloor -addr IP:PORT MODE [MAX]        # MODE: lat, bw, bibw, mr
//
// The client sends the server the mode, the largest size and the counts,
// so the server needs no arguments of its own. A message of size s is s
// bytes of the stream (1 byte for size 0, so that a ping-pong moves
// something); there is no header, no matching and no copy beyond the
// kernel's, so gorun over TCP cannot beat it. lat: client writes a
// message, server reads it whole and writes it back (half round trip, µs).
// bw and mr: the client writes 64 messages (one write each), the server
// reads them (as many bytes per read as the socket holds) and writes a
// 4-byte acknowledgement (MB/s = 10^6 B/s; mr adds messages/s). bibw: both
// sides write 64 messages and read the other's 64 in one loop.
//
// Invariants:
//   - After the connection is made, every read and write is a
//     non-blocking raw system call; EAGAIN is retried at once (spinning),
//     with a pass through Go's scheduler every few thousand retries so the
//     runtime never needs a preemption signal.
//   - The timed loops allocate nothing.
//   - The sockets have TCP_NODELAY and nothing else changed: what the
//     kernel gives by default.
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Constants of the method, as bench/osu and bench.c.
const (
	window    = 64
	largeSize = 8192
	hugeSize  = 4 << 20
	ackSize   = 4
	helloSize = 32
	spinYield = 4096 // EAGAINs between two passes through Go's scheduler
)

// Mode is what to measure.
type Mode byte

const (
	ModeLat Mode = iota + 1
	ModeBW
	ModeBiBW
	ModeMR
)

var modeNames = map[string]Mode{"lat": ModeLat, "bw": ModeBW, "bibw": ModeBiBW, "mr": ModeMR}

func (m Mode) String() string {
	for k, v := range modeNames {
		if v == m {
			return k
		}
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode reads a mode name.
func ParseMode(s string) (Mode, error) {
	if m, ok := modeNames[s]; ok {
		return m, nil
	}
	return 0, fmt.Errorf("tcpfloor: mode %q; allowed: lat, bw, bibw, mr", s)
}

// session is what the client tells the server (the hello).
type session struct {
	mode          Mode
	max           int
	iters, warmup int // 0: the schedule's
}

func (s session) encode() [helloSize]byte {
	var b [helloSize]byte
	copy(b[:4], "TCPF")
	b[4] = byte(s.mode)
	binary.LittleEndian.PutUint64(b[8:], uint64(s.max))
	binary.LittleEndian.PutUint64(b[16:], uint64(s.iters))
	binary.LittleEndian.PutUint64(b[24:], uint64(s.warmup))
	return b
}

func decodeSession(b []byte) (session, error) {
	if len(b) != helloSize || string(b[:4]) != "TCPF" {
		return session{}, errors.New("tcpfloor: the client's hello is not a tcpfloor hello")
	}
	s := session{mode: Mode(b[4]), max: int(binary.LittleEndian.Uint64(b[8:])),
		iters: int(binary.LittleEndian.Uint64(b[16:])), warmup: int(binary.LittleEndian.Uint64(b[24:]))}
	if s.mode < ModeLat || s.mode > ModeMR || s.max < 0 || s.max > 1<<30 || s.iters < 0 || s.iters > 1<<30 ||
		s.warmup < 0 || s.warmup > 1<<30 {
		return session{}, fmt.Errorf("tcpfloor: bad hello: mode %d, max %d, iters %d, warm-up %d", s.mode, s.max, s.iters, s.warmup)
	}
	return s, nil
}

// counts gives the timed and warm-up iterations of a size (bench/osu's
// schedule), unless the session forces them.
func (s session) counts(size int) (iters, warmup int) {
	if s.mode == ModeLat {
		switch {
		case size > hugeSize:
			iters, warmup = 100, 2
		case size > largeSize:
			iters, warmup = 1000, 10
		default:
			iters, warmup = 10000, 100
		}
	} else {
		switch {
		case size > hugeSize:
			iters, warmup = 10, 1
		case size > largeSize:
			iters, warmup = 100, 10
		default:
			iters, warmup = 1000, 100
		}
	}
	if s.iters > 0 {
		iters = s.iters
	}
	if s.warmup > 0 {
		warmup = s.warmup
	}
	return iters, warmup
}

// sizes is the sweep: lat from 0, the others from 1, doubling up to max.
func (s session) sizes() []int {
	lo := 1
	if s.mode == ModeLat {
		lo = 0
	}
	var out []int
	for n := lo; n <= s.max; {
		out = append(out, n)
		if n == 0 {
			n = 1
		} else {
			n *= 2
		}
	}
	return out
}

// wire is the length of a message of size bytes on the stream.
func wire(size int) int { return max(size, 1) }

// conn is a connected non-blocking socket driven by spinning raw calls.
type conn struct {
	fd    int
	spins int
}

func (c *conn) spin() {
	c.spins++
	if c.spins%spinYield == 0 {
		runtime.Gosched()
	}
}

// tryRead reads what the socket holds into b; EAGAIN is 0 bytes.
func (c *conn) tryRead(b []byte) (int, error) {
	for {
		r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			if r == 0 {
				return 0, io.ErrUnexpectedEOF
			}
			return int(r), nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		}
		return 0, e
	}
}

// tryWrite writes what the socket takes of b; EAGAIN is 0 bytes.
func (c *conn) tryWrite(b []byte) (int, error) {
	for {
		r, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
			unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			return int(r), nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		}
		return 0, e
	}
}

// readFull spins until b is full.
func (c *conn) readFull(b []byte) error {
	for off := 0; off < len(b); {
		n, err := c.tryRead(b[off:])
		if err != nil {
			return err
		}
		if n == 0 {
			c.spin()
		}
		off += n
	}
	return nil
}

// drain spins until n bytes have been read, reading into scratch as much
// as the socket holds each time.
func (c *conn) drain(n int, scratch []byte) error {
	for n > 0 {
		k, err := c.tryRead(scratch[:min(n, len(scratch))])
		if err != nil {
			return err
		}
		if k == 0 {
			c.spin()
		}
		n -= k
	}
	return nil
}

// writeFull spins until b is written.
func (c *conn) writeFull(b []byte) error {
	for off := 0; off < len(b); {
		n, err := c.tryWrite(b[off:])
		if err != nil {
			return err
		}
		if n == 0 {
			c.spin()
		}
		off += n
	}
	return nil
}

// exchange writes count messages of msg and reads n bytes at once (bibw):
// what the socket takes is written, what it holds is read, until both are
// done.
func (c *conn) exchange(msg []byte, count, n int, scratch []byte) error {
	sent, off := 0, 0
	for sent < count || n > 0 {
		progress := false
		if sent < count {
			k, err := c.tryWrite(msg[off:])
			if err != nil {
				return err
			}
			if k > 0 {
				progress = true
				if off += k; off == len(msg) {
					sent, off = sent+1, 0
				}
			}
		}
		if n > 0 {
			k, err := c.tryRead(scratch[:min(n, len(scratch))])
			if err != nil {
				return err
			}
			if k > 0 {
				progress = true
				n -= k
			}
		}
		if !progress {
			c.spin()
		}
	}
	return nil
}

// adopt takes the descriptor of a connected TCP socket out of Go's
// netpoller (a duplicate, non-blocking, TCP_NODELAY) and closes the
// net.Conn.
func adopt(nc net.Conn) (*conn, error) {
	defer nc.Close()
	raw, err := nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var derr error
	if err := raw.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &conn{fd: fd}, nil
}

// buffers are a session's message and scratch buffers, allocated once.
type buffers struct{ msg, scratch []byte }

func newBuffers(max int) buffers {
	b := buffers{msg: make([]byte, wire(max)), scratch: make([]byte, 1<<20)}
	for i := range b.msg {
		b.msg[i] = 'a'
	}
	return b
}

// serve answers one session on c.
func serve(c *conn) error {
	var hello [helloSize]byte
	if err := c.readFull(hello[:]); err != nil {
		return fmt.Errorf("tcpfloor: reading the hello: %w", err)
	}
	s, err := decodeSession(hello[:])
	if err != nil {
		return err
	}
	b := newBuffers(s.max)
	var ack [ackSize]byte
	for _, size := range s.sizes() {
		iters, warmup := s.counts(size)
		msg := b.msg[:wire(size)]
		for i := 0; i < iters+warmup; i++ {
			switch s.mode {
			case ModeLat:
				if err := c.readFull(msg); err != nil {
					return err
				}
				if err := c.writeFull(msg); err != nil {
					return err
				}
			case ModeBW, ModeMR:
				if err := c.drain(window*len(msg), b.scratch); err != nil {
					return err
				}
				if err := c.writeFull(ack[:]); err != nil {
					return err
				}
			case ModeBiBW:
				if err := c.exchange(msg, window, window*len(msg), b.scratch); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// row is one measured size.
type row struct {
	size   int
	values []float64
}

// run is the client's side of a session: it returns one row per size.
func run(c *conn, s session, out io.Writer) ([]row, error) {
	hello := s.encode()
	if err := c.writeFull(hello[:]); err != nil {
		return nil, fmt.Errorf("tcpfloor: sending the hello: %w", err)
	}
	b := newBuffers(s.max)
	var ack [ackSize]byte
	var rows []row
	for _, size := range s.sizes() {
		iters, warmup := s.counts(size)
		msg := b.msg[:wire(size)]
		var t0 time.Time
		for i := 0; i < iters+warmup; i++ {
			if i == warmup {
				t0 = time.Now()
			}
			switch s.mode {
			case ModeLat:
				if err := c.writeFull(msg); err != nil {
					return rows, err
				}
				if err := c.readFull(msg); err != nil {
					return rows, err
				}
			case ModeBW, ModeMR:
				for j := 0; j < window; j++ {
					if err := c.writeFull(msg); err != nil {
						return rows, err
					}
				}
				if err := c.readFull(ack[:]); err != nil {
					return rows, err
				}
			case ModeBiBW:
				if err := c.exchange(msg, window, window*len(msg), b.scratch); err != nil {
					return rows, err
				}
			}
		}
		r := measure(s.mode, size, iters, time.Since(t0))
		rows = append(rows, r)
		if out != nil {
			fmt.Fprintln(out, formatRow(r))
		}
	}
	return rows, nil
}

// measure turns a size's elapsed time into its row: half round trip in µs
// (lat), MB/s (bw, bibw counting both directions, mr adding messages/s).
func measure(m Mode, size, iters int, elapsed time.Duration) row {
	t := elapsed.Seconds()
	if m == ModeLat {
		return row{size, []float64{t * 1e6 / (2 * float64(iters))}}
	}
	bytes := float64(size) * window * float64(iters)
	if m == ModeBiBW {
		bytes *= 2
	}
	r := row{size, []float64{bytes / 1e6 / t}}
	if m == ModeMR {
		r.values = append(r.values, window*float64(iters)/t)
	}
	return r
}

// header is the lines before the first row, OSU style.
func header(m Mode) string {
	switch m {
	case ModeLat:
		return fmt.Sprintf("# OSU-style plain Go TCP floor, Latency Test (spinning, non-blocking)\n# %-10s %18s", "Size", "Latency (us)")
	case ModeMR:
		return fmt.Sprintf("# OSU-style plain Go TCP floor, Message Rate Test (spinning, non-blocking)\n# %-10s %18s %18s", "Size", "MB/s", "Messages/s")
	case ModeBiBW:
		return fmt.Sprintf("# OSU-style plain Go TCP floor, Bi-Directional Bandwidth Test (spinning, non-blocking)\n# %-10s %18s", "Size", "Bandwidth (MB/s)")
	}
	return fmt.Sprintf("# OSU-style plain Go TCP floor, Bandwidth Test (spinning, non-blocking)\n# %-10s %18s", "Size", "Bandwidth (MB/s)")
}

func formatRow(r row) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-10d", r.size)
	for _, v := range r.values {
		fmt.Fprintf(&sb, " %18.2f", v)
	}
	return sb.String()
}

// parseSize reads a size: bytes, or with a k/m suffix (KiB, MiB).
func parseSize(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1<<10, t[:len(t)-1]
	case strings.HasSuffix(t, "m"):
		mult, t = 1<<20, t[:len(t)-1]
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 || n > (1<<30)/mult {
		return 0, fmt.Errorf("tcpfloor: size %q; want bytes from 0 to 1 GiB, optionally with k or m", s)
	}
	return n * mult, nil
}

// dial connects to addr, retrying while nobody listens yet, until deadline.
func dial(addr string, deadline time.Time) (net.Conn, error) {
	for {
		nc, err := net.DialTimeout("tcp", addr, time.Until(deadline))
		if err == nil || time.Now().After(deadline) || !errors.Is(err, unix.ECONNREFUSED) {
			return nc, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func main() {
	if err := mainErr(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func mainErr(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("tcpfloor", flag.ContinueOnError)
	server := fs.Bool("server", false, "serve one session on -addr, then exit")
	addr := fs.String("addr", "", "IP:PORT to listen on (-server) or to connect to")
	iters := fs.Int("i", 0, "timed iterations of every size (0: the schedule's)")
	warmup := fs.Int("x", 0, "warm-up iterations of every size (0: the schedule's)")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the other side")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" {
		return errors.New("tcpfloor: -addr IP:PORT is required")
	}
	if *server {
		if fs.NArg() != 0 {
			return errors.New("tcpfloor: -server takes no mode (the client sends it)")
		}
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			return fmt.Errorf("tcpfloor: %w", err)
		}
		ln.(*net.TCPListener).SetDeadline(time.Now().Add(*wait))
		nc, err := ln.Accept()
		ln.Close()
		if err != nil {
			return fmt.Errorf("tcpfloor: waiting for the client: %w", err)
		}
		c, err := adopt(nc)
		if err != nil {
			return err
		}
		defer unix.Close(c.fd)
		return serve(c)
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return errors.New("tcpfloor: usage: tcpfloor -addr IP:PORT MODE [MAX] (MODE: lat, bw, bibw, mr)")
	}
	m, err := ParseMode(fs.Arg(0))
	if err != nil {
		return err
	}
	s := session{mode: m, max: 4 << 20, iters: *iters, warmup: *warmup}
	if fs.NArg() == 2 {
		if s.max, err = parseSize(fs.Arg(1)); err != nil {
			return err
		}
	}
	if *iters < 0 || *warmup < 0 {
		return errors.New("tcpfloor: -i and -x must not be negative")
	}
	nc, err := dial(*addr, time.Now().Add(*wait))
	if err != nil {
		return fmt.Errorf("tcpfloor: connecting to %s: %w", *addr, err)
	}
	c, err := adopt(nc)
	if err != nil {
		return err
	}
	defer unix.Close(c.fd)
	fmt.Fprintln(out, header(m))
	_, err = run(c, s, out)
	return err
}
