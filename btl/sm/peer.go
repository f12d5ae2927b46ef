package sm

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// peerMonitor notices that a peer process has ended. It holds a pidfd per
// peer (opened at New, so a pid reused later is not mistaken for the peer)
// and polls them with one poll(2); where pidfd_open is refused it falls
// back to kill(pid, 0). Peers that share our pid (several modules in one
// test process) are not watched.
//
// A check looks at no more than peerCheckSlice peers, taking them round
// robin: with N ranks on one machine every rank checks every few
// milliseconds, and a check of all N peers each time would cost the
// machine O(N²) (at 1024 ranks on two cores, start-up and Finalize spent
// most of their time in poll). A peer's loss is therefore noticed within
// ceil((N-1)/peerCheckSlice) checks instead of one; up to
// peerCheckSlice+1 ranks that is one check, as before.
//
// A sleeping rank wakes every nap to check its peers (sleepCheck). With
// many ranks per core those wakes alone would fill the cores (each costs
// the Go runtime of the rank several thread switches: at 1024 ranks on
// two cores, waking every 50 ms kept Finalize's barrier busy for 35 s), so
// beyond napRanksPerCore ranks per core the nap grows with the ranks per
// core, and a sleeping rank's check looks at as many more peers: the time
// to notice a loss stays what it is at napRanksPerCore ranks per core.
type peerMonitor struct {
	m  *Module
	mu struct {
		sync.Mutex
		fds   []unix.PollFd // pidfds; Fd -1 once the peer is found lost
		ranks []int         // rank of fds[i]
		kill  []int         // ranks watched with kill(pid, 0)
		next  int           // first fds index of the next check's slice
		nextK int           // first kill index of the next check's slice
	}
	on bool // set before the module is shared; read-only afterwards

	// Set by init, read-only afterwards: a sleeping rank's nap between
	// checks and the most peers each of those checks looks at.
	nap        time.Duration
	sleepSlice int
}

// peerCheckNap is a sleeping rank's nap between peer checks up to
// napRanksPerCore ranks per core (see peerMonitor).
const (
	peerCheckNap    = 50 * time.Millisecond
	napRanksPerCore = 16
)

// napFor returns the nap and the sleeping check's slice for n local ranks
// on cores cores.
func napFor(n, cores int) (time.Duration, int) {
	if cores < 1 || n <= napRanksPerCore*cores {
		return peerCheckNap, peerCheckSlice
	}
	return peerCheckNap * time.Duration(n) / time.Duration(napRanksPerCore*cores),
		peerCheckSlice * n / (napRanksPerCore * cores)
}

// init (re)opens the watch on every peer with a known pid.
func (w *peerMonitor) init(m *Module, enabled bool) {
	w.close()
	w.m = m
	w.nap, w.sleepSlice = napFor(len(m.peers), runtime.NumCPU())
	if !enabled {
		return
	}
	self := os.Getpid()
	w.mu.Lock()
	for i := range m.peers {
		p := &m.peers[i]
		if i == m.rank || p.pid <= 0 || p.pid == self {
			continue
		}
		fd, err := unix.PidfdOpen(p.pid, 0)
		if err != nil {
			if errors.Is(err, unix.ESRCH) {
				w.markLost(p)
				continue
			}
			w.mu.kill = append(w.mu.kill, i)
			continue
		}
		w.mu.fds = append(w.mu.fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
		w.mu.ranks = append(w.mu.ranks, i)
	}
	w.on = len(w.mu.fds)+len(w.mu.kill) > 0
	w.mu.Unlock()
}

func (w *peerMonitor) active() bool { return w.on }

// peerCheckSlice is the most peers one check looks at.
const peerCheckSlice = 64

// slice returns the bounds of the next window of at most size entries of a
// list of n, starting at *next (which it advances, wrapping to 0 at the
// end), so that successive windows cover the list round robin.
func slice(next *int, n, size int) (lo, hi int) {
	if *next >= n {
		*next = 0
	}
	lo, hi = *next, min(*next+size, n)
	*next = hi
	return lo, hi
}

// check polls the next slice of watched peers (all of them when there are
// at most peerCheckSlice) and reports whether one was newly found lost. A
// concurrent check in progress makes it return false at once.
func (w *peerMonitor) check() bool { return w.checkSlice(peerCheckSlice) }

// sleepNap bounds each futex wait of a sleeping rank (see peerMonitor).
func (w *peerMonitor) sleepNap() time.Duration {
	if w.nap <= 0 {
		return peerCheckNap
	}
	return w.nap
}

// sleepCheck is check for a rank that sleeps: it runs every w.nap and
// looks at w.sleepSlice peers.
func (w *peerMonitor) sleepCheck() bool { return w.checkSlice(max(w.sleepSlice, peerCheckSlice)) }

func (w *peerMonitor) checkSlice(size int) bool {
	if !w.on || !w.mu.TryLock() {
		return false
	}
	found := false
	if len(w.mu.fds) > 0 {
		lo, hi := slice(&w.mu.next, len(w.mu.fds), size)
		fds := w.mu.fds[lo:hi]
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
			for i := range fds {
				f := &fds[i]
				if f.Fd >= 0 && f.Revents != 0 {
					unix.Close(int(f.Fd))
					f.Fd = -1
					w.markLost(&w.m.peers[w.mu.ranks[lo+i]])
					found = true
				}
			}
		}
	}
	lo, hi := slice(&w.mu.nextK, len(w.mu.kill), size)
	for _, r := range w.mu.kill[lo:hi] {
		p := &w.m.peers[r]
		if !p.lost.Load() && errors.Is(unix.Kill(p.pid, 0), unix.ESRCH) {
			w.markLost(p)
			found = true
		}
	}
	w.mu.Unlock()
	return found
}

func (w *peerMonitor) markLost(p *peer) {
	p.lost.Store(true)
	w.m.someLost.Store(true)
	w.m.lostUnrep.Store(true)
}

// firstLost is sleepCheck for the attach wait (which naps like Sleep): an
// error naming a lost peer.
func (w *peerMonitor) firstLost() error {
	w.sleepCheck()
	for i := range w.m.peers {
		if w.m.peers[i].lost.Load() {
			return errPeerLost(i)
		}
	}
	return nil
}

func (w *peerMonitor) close() {
	w.mu.Lock()
	for _, f := range w.mu.fds {
		if f.Fd >= 0 {
			unix.Close(int(f.Fd))
		}
	}
	w.mu.fds, w.mu.ranks, w.mu.kill = nil, nil, nil
	w.mu.next, w.mu.nextK = 0, 0
	w.on = false
	w.mu.Unlock()
}
