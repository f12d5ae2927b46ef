package pml

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/errs"
)

// fakeNet connects n fake BTL modules inside one process. Send copies the
// fragment into the destination's queue (or, when starve is set, keeps a
// reference and copies it at the next Progress, to exercise copied=false);
// Progress delivers queued fragments in order.
type fakeNet struct {
	mu    sync.Mutex
	mods  []*fakeMod
	eager int
	max   int
	rget  bool
	limit int64 // the PMLs' UnexpectedLimit
	// starve makes every Send with a payload return copied=false.
	starve bool
	// tune, if set, adjusts each PML's Config in job.
	tune func(*Config)
	// readDelay and fragDelay slow down each ReadFrom and each FRAG Send
	// (the two paths of a rendezvous); reads and frags count them.
	// carryDelay slows down each RNDV Send that carries payload (a stream's
	// message); carries counts them.
	readDelay, fragDelay, carryDelay time.Duration
	reads, frags, carries            atomic.Int64
	// readDelayMin, when set, limits readDelay to reads of at least that
	// many bytes; writeDelay slows down each WriteTo (the sender's half
	// of a split read).
	readDelayMin int
	writeDelay   time.Duration
	// streamFlagged counts the RNDVs sent with flagStream (a stream's, or
	// a serial send's that asks for a split read).
	streamFlagged atomic.Int64
	// place makes the modules read FRAG payloads straight into the place
	// the PML gives (btl.Placer), in two pieces; placed counts them.
	place  bool
	placed atomic.Int64
	// readFail and writeFail make ReadFrom and WriteTo fail (after
	// counting them in reads and writes).
	readFail, writeFail bool
	writes              atomic.Int64
	// runners makes job give the PMLs the modules as runners (runnerMod),
	// whose running flags are these.
	runners bool
	running [8]atomic.Bool
	// decline makes every runner say its peers do not poll, so that
	// receivers decline every split read.
	decline bool
	// sourcePoll makes job give the PMLs the modules as sourceMods
	// (btl.SourcePoller), whose PollFrom calls fromPolls counts.
	sourcePoll bool
	fromPolls  [8]atomic.Int64
	// direct makes job give the PMLs the modules as directMods
	// (btl.DirectTaker as well), whose takes taken counts.
	direct bool
	taken  atomic.Int64
	// vec makes job give the PMLs the modules as vecMods (btl.VecReader),
	// whose ReadVec calls and the regions they copied vecCalls and
	// vecRegions count; vecMax bounds the regions of one call, and
	// vecStop, when set, makes a call stop before a region of that many
	// bytes (counting only the regions before it).
	vec                  bool
	vecMax, vecStop      int
	vecCalls, vecRegions atomic.Int64
}

// vecMod is a fakeMod that reads several regions in one call
// (btl.VecReader), from its own process as ReadFrom does.
type vecMod struct{ *fakeMod }

func (m vecMod) ReadVec(peer int, addr []uintptr, dst [][]byte) int {
	m.net.vecCalls.Add(1)
	var local []unix.Iovec
	var remote []unix.RemoteIovec
	for i := 0; i < min(len(addr), m.net.vecMax) && len(dst[i]) != m.net.vecStop; i++ {
		local = append(local, unix.Iovec{Base: unsafe.SliceData(dst[i]), Len: uint64(len(dst[i]))})
		remote = append(remote, unix.RemoteIovec{Base: addr[i], Len: len(dst[i])})
	}
	if len(local) == 0 {
		return 0
	}
	if _, err := unix.ProcessVMReadv(os.Getpid(), local, remote, 0); err != nil {
		return 0
	}
	m.net.vecRegions.Add(int64(len(local)))
	return len(local)
}

// sourceMod is a fakeMod that can poll for one peer's fragments alone
// (btl.SourcePoller), as sm's PollFrom does for a peer's fast box:
// fragments from other ranks stay queued, in order, for Progress.
type sourceMod struct{ *fakeMod }

// Waiting says whether a fragment from src is queued.
func (m sourceMod) Waiting(src int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, f := range m.q {
		if f.src == src {
			return true
		}
	}
	return false
}

func (m sourceMod) PollFrom(src int) int {
	m.net.fromPolls[m.rank].Add(1)
	m.mu.Lock()
	var mine []fakeFrag
	rest := m.q[:0:0]
	for _, f := range m.q {
		if f.src == src {
			mine = append(mine, f)
		} else {
			rest = append(rest, f)
		}
	}
	m.q = rest
	m.mu.Unlock()
	for _, f := range mine {
		m.deliver(f)
	}
	return len(mine)
}

// directMod is a sourceMod that hands src's next fragment to a waiting
// receive (btl.DirectTaker), as sm's TakeFrom does with a fast box.
type directMod struct{ sourceMod }

func (m directMod) TakeFrom(src int, tags btl.TagSet, t btl.Taker) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, f := range m.q {
		if f.src != src {
			continue
		}
		if !tags.Has(f.tag) || !t.Take(src, f.tag, f.data) {
			return -1
		}
		m.q = append(m.q[:i:i], m.q[i+1:]...)
		m.net.taken.Add(1)
		return 1
	}
	return 0
}

// runnerMod is a fakeMod that shows which ranks say they poll (the
// runner interface, sm's running flag).
type runnerMod struct{ *fakeMod }

func (m runnerMod) SetRunning(on bool)        { m.net.running[m.rank].Store(on) }
func (m runnerMod) PeerRunning(rank int) bool { return !m.net.decline && m.net.running[rank].Load() }

type fakeFrag struct {
	src    int
	tag    btl.Tag
	data   []byte
	hdrLen int
}

type owed struct {
	dst     int
	tag     btl.Tag
	hdr     []byte
	payload []byte
	c       btl.Completion
}

type fakeMod struct {
	net      *fakeNet
	rank     int
	mu       sync.Mutex
	q        []fakeFrag
	owe      []owed
	cbs      [btl.NumTags]btl.RecvFunc
	place    [btl.NumTags]btl.PlaceFunc
	landed   [btl.NumTags]btl.LandedFunc
	lost     func(int)
	wake     chan struct{}
	dead     bool
	peerDead map[int]bool
	lostQ    []int // lost peers not yet reported (Progress reports them, as the btl contract says)
	// polls and sleeps count Progress and Sleep calls.
	polls, sleeps atomic.Int64
}

func newFakeNet(n, eager, max int) *fakeNet {
	f := &fakeNet{eager: eager, max: max, limit: 1 << 20}
	for i := 0; i < n; i++ {
		f.mods = append(f.mods, &fakeMod{net: f, rank: i, wake: make(chan struct{}, 1), peerDead: map[int]bool{}})
	}
	return f
}

func (m *fakeMod) Name() string { return "fake" }
func (m *fakeMod) Attributes() btl.Attributes {
	return btl.Attributes{EagerLimit: m.net.eager, MaxSendSize: m.net.max, SingleCopy: m.net.rget, Exclusivity: 1}
}
func (m *fakeMod) Reachable(peer int) bool             { return peer >= 0 && peer < len(m.net.mods) }
func (m *fakeMod) Register(t btl.Tag, fn btl.RecvFunc) { m.cbs[t] = fn }
func (m *fakeMod) OnPeerLost(fn func(int))             { m.lost = fn }
func (m *fakeMod) RegisterPlace(t btl.Tag, place btl.PlaceFunc, landed btl.LandedFunc) {
	m.place[t], m.landed[t] = place, landed
}

// deliver hands f to its callback, or, with net.place and a place for its
// tag, moves its payload into the place in two pieces and tells landed.
func (m *fakeMod) deliver(f fakeFrag) {
	if fn := m.place[f.tag]; m.net.place && fn != nil {
		hdr, payload := f.data[:f.hdrLen], f.data[f.hdrLen:]
		if dst := fn(f.src, hdr, len(payload)); dst != nil {
			if len(dst) != len(payload) {
				panic(fmt.Sprintf("fake: place of %d bytes for a payload of %d", len(dst), len(payload)))
			}
			half := len(payload) / 2
			copy(dst[:half], payload)
			copy(dst[half:], payload[half:])
			m.net.placed.Add(1)
			m.landed[f.tag](f.src, hdr, len(payload))
			return
		}
	}
	m.cbs[f.tag](f.src, f.data)
}

func (m *fakeMod) Send(peer int, tag btl.Tag, hdr, payload []byte, c btl.Completion) (bool, error) {
	if len(hdr) > btl.MaxHeader || len(payload) > m.net.max {
		return false, fmt.Errorf("fake: send of %d+%d bytes", len(hdr), len(payload))
	}
	if tag == btl.TagPMLFrag {
		m.net.frags.Add(1)
		time.Sleep(m.net.fragDelay)
	}
	if tag == btl.TagPMLRndv && len(payload) > 0 {
		m.net.carries.Add(1)
		time.Sleep(m.net.carryDelay)
	}
	if tag == btl.TagPMLRndv {
		var h matchHdr
		if _, err := decodeRndv(append(hdr[:len(hdr):len(hdr)], payload...), &h); err == nil && h.flags&flagStream != 0 {
			m.net.streamFlagged.Add(1)
		}
	}
	m.mu.Lock()
	if m.peerDead[peer] {
		m.mu.Unlock()
		return false, fmt.Errorf("fake: rank %d: %w", peer, errs.ErrPeerLost)
	}
	if m.net.starve && len(payload) > 0 && c != nil {
		m.owe = append(m.owe, owed{peer, tag, append([]byte(nil), hdr...), payload, c})
		m.mu.Unlock()
		return false, nil
	}
	if len(m.owe) > 0 { // keep order behind owed sends
		m.owe = append(m.owe, owed{peer, tag, append([]byte(nil), hdr...), append([]byte(nil), payload...), nil})
		m.mu.Unlock()
		return true, nil
	}
	m.mu.Unlock()
	m.deliverTo(peer, tag, hdr, payload)
	return true, nil
}

func (m *fakeMod) deliverTo(peer int, tag btl.Tag, hdr, payload []byte) {
	d := m.net.mods[peer]
	data := make([]byte, 0, len(hdr)+len(payload))
	data = append(append(data, hdr...), payload...)
	d.mu.Lock()
	d.q = append(d.q, fakeFrag{m.rank, tag, data, len(hdr)})
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (m *fakeMod) Progress() int {
	m.polls.Add(1)
	m.mu.Lock()
	owe := m.owe
	m.owe = nil
	m.mu.Unlock()
	n := 0
	for _, o := range owe {
		m.deliverTo(o.dst, o.tag, o.hdr, o.payload)
		if o.c != nil {
			o.c.SendDone(nil)
		}
		n++
	}
	m.mu.Lock()
	q, lost := m.q, m.lostQ
	m.q, m.lostQ = nil, nil
	m.mu.Unlock()
	for _, f := range q {
		m.deliver(f)
		n++
	}
	for _, r := range lost {
		if m.lost != nil {
			m.lost(r)
		}
		n++
	}
	return n
}

func (m *fakeMod) Sleep(d time.Duration) {
	m.sleeps.Add(1)
	m.mu.Lock()
	busy := len(m.q) > 0 || len(m.owe) > 0 || len(m.lostQ) > 0
	m.mu.Unlock()
	if busy {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-m.wake:
	case <-t.C:
	}
}

func (m *fakeMod) Wake() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

func (m *fakeMod) ReadFrom(peer int, addr uintptr, dst []byte) error {
	m.net.reads.Add(1)
	if m.net.readFail {
		return fmt.Errorf("fake: %w", unix.EPERM)
	}
	if len(dst) >= m.net.readDelayMin {
		time.Sleep(m.net.readDelay)
	}
	// Same process: process_vm_readv on ourselves needs no ptrace permission.
	local := []unix.Iovec{{Base: unsafe.SliceData(dst), Len: uint64(len(dst))}}
	remote := []unix.RemoteIovec{{Base: addr, Len: len(dst)}}
	n, err := unix.ProcessVMReadv(os.Getpid(), local, remote, 0)
	if err == nil && n != len(dst) {
		err = fmt.Errorf("fake: short read %d of %d", n, len(dst))
	}
	return err
}

// WriteTo is btl.Writer's: same process, as ReadFrom.
func (m *fakeMod) WriteTo(peer int, addr uintptr, src []byte) error {
	m.net.writes.Add(1)
	if m.net.writeFail {
		return fmt.Errorf("fake: %w", unix.EPERM)
	}
	time.Sleep(m.net.writeDelay)
	local := []unix.Iovec{{Base: unsafe.SliceData(src), Len: uint64(len(src))}}
	remote := []unix.RemoteIovec{{Base: addr, Len: len(src)}}
	n, err := unix.ProcessVMWritev(os.Getpid(), local, remote, 0)
	if err == nil && n != len(src) {
		err = fmt.Errorf("fake: short write %d of %d", n, len(src))
	}
	return err
}

func (m *fakeMod) Close() error { return nil }

// kill marks rank dead for every other module and tells their PMLs.
func (f *fakeNet) kill(rank int) {
	for _, m := range f.mods {
		if m.rank == rank {
			continue
		}
		m.mu.Lock()
		m.peerDead[rank] = true
		m.lostQ = append(m.lostQ, rank)
		m.mu.Unlock()
		m.Wake()
	}
}
