package sm

import (
	"errors"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/internal/node"
)

// peerMonitor notices that a peer process has ended. It watches a peer
// through a pidfd, polled with one poll(2) per check, and by kill(pid, 0)
// where pidfd_open is refused. Peers that share our pid (several modules
// in one test process) are not watched.
//
// The pidfds are opened lazily, at most peerCheckSlice per check, as the
// checks come to their peers; until its pidfd is open a peer is checked
// with kill(pid, 0). Opening all N-1 at New cost every rank O(N) system
// calls and kernel files (and the same again to close them), the machine
// O(N²): 8% of the start-up of 1024 ranks on two cores, which checked few
// of them before they ended. A pidfd names the process, not the pid; a
// peer watched by pid is mistaken for a live one only if it ended and the
// kernel gave its pid to another process before the check that opens its
// pidfd (the pid space, 4M on 64-bit Linux, would have to wrap first).
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
		fds   []unix.PollFd // pidfds; Fd -1 while not open (see state)
		state []watchState  // how fds[i]'s peer is watched
		ranks []int         // rank of fds[i]
		next  int           // first index of the next check's slice
	}
	on bool // set before the module is shared; read-only afterwards

	// Set by init, read-only afterwards: a sleeping rank's nap between
	// checks and the most peers each of those checks looks at.
	nap        time.Duration
	sleepSlice int
}

// watchState is how the monitor watches one peer.
type watchState uint8

const (
	watchPid   watchState = iota // pidfd not opened yet: kill(pid, 0)
	watchPidfd                   // polled through its pidfd
	watchKill                    // pidfd_open refused: kill(pid, 0) for good
	watchDone                    // found lost; no longer watched
)

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

// init (re)starts the watch on every peer with a known pid; it opens no
// pidfd (checkSlice does, lazily).
func (w *peerMonitor) init(m *Module, enabled bool) {
	w.close()
	w.m = m
	w.nap, w.sleepSlice = napFor(len(m.peers), node.CPUs())
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
		w.mu.fds = append(w.mu.fds, unix.PollFd{Fd: -1, Events: unix.POLLIN})
		w.mu.state = append(w.mu.state, watchPid)
		w.mu.ranks = append(w.mu.ranks, i)
	}
	w.on = len(w.mu.fds) > 0
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
	lo, hi := slice(&w.mu.next, len(w.mu.fds), size)
	opens, polled := 0, false
	for i := lo; i < hi; i++ {
		st := &w.mu.state[i]
		if *st == watchPid && opens < peerCheckSlice {
			opens++
			w.openPidfd(i)
		}
		switch *st {
		case watchPidfd:
			polled = true
		case watchPid, watchKill:
			p := &w.m.peers[w.mu.ranks[i]]
			if p.lost.Load() {
				*st = watchDone
			} else if errors.Is(unix.Kill(p.pid, 0), unix.ESRCH) {
				*st = watchDone
				w.markLost(p)
				found = true
			}
		}
	}
	if polled {
		fds := w.mu.fds[lo:hi]
		if n, err := unix.Poll(fds, 0); err == nil && n > 0 {
			for i := range fds {
				if f := &fds[i]; f.Fd >= 0 && f.Revents != 0 {
					unix.Close(int(f.Fd))
					f.Fd = -1
					w.mu.state[lo+i] = watchDone
					w.markLost(&w.m.peers[w.mu.ranks[lo+i]])
					found = true
				}
			}
		}
	}
	w.mu.Unlock()
	return found
}

// openPidfd opens the pidfd of entry i (mu held): a peer already gone is
// marked lost, and one whose pidfd is refused is watched by kill(pid, 0).
func (w *peerMonitor) openPidfd(i int) {
	p := &w.m.peers[w.mu.ranks[i]]
	fd, err := unix.PidfdOpen(p.pid, 0)
	switch {
	case err == nil:
		w.mu.fds[i].Fd = int32(fd)
		w.mu.state[i] = watchPidfd
	case errors.Is(err, unix.ESRCH):
		w.mu.state[i] = watchDone
		w.markLost(p)
	default:
		w.mu.state[i] = watchKill
	}
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
	w.mu.fds, w.mu.state, w.mu.ranks = nil, nil, nil
	w.mu.next = 0
	w.on = false
	w.mu.Unlock()
}
