package sm

import (
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSliceRoundRobin: successive check windows cover a list of n entries
// round robin, none longer than peerCheckSlice.
func TestSliceRoundRobin(t *testing.T) {
	for _, n := range []int{0, 1, peerCheckSlice - 1, peerCheckSlice, peerCheckSlice + 1, 3*peerCheckSlice + 5, 1023} {
		next := 0
		seen := make([]int, n)
		for range 2 * ((n + peerCheckSlice - 1) / peerCheckSlice) {
			lo, hi := slice(&next, n, peerCheckSlice)
			if lo < 0 || hi > n || lo > hi || hi-lo > peerCheckSlice {
				t.Fatalf("n=%d: window [%d,%d) out of bounds or longer than %d", n, lo, hi, peerCheckSlice)
			}
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		}
		for i, c := range seen {
			if c != 2 {
				t.Fatalf("n=%d: entry %d seen %d times in two rounds, want 2", n, i, c)
			}
		}
	}
}

// TestMonitorFindsLostPeerAmongMany (issue 16 item 11): with more watched
// peers than one check looks at, a peer that has ended is still found,
// within ceil(peers/peerCheckSlice) checks, and no live peer is reported.
func TestMonitorFindsLostPeerAmongMany(t *testing.T) {
	live, dead := twoSleepers(t)
	const n = 2*peerCheckSlice + 10 // peers 1..n-1; the dead one is last
	m := &Module{rank: 0, peers: make([]peer, n)}
	for i := 1; i < n; i++ {
		m.peers[i].pid = live.Process.Pid
	}
	m.peers[n-1].pid = dead.Process.Pid
	if fd, err := unix.PidfdOpen(live.Process.Pid, 0); err != nil {
		t.Skipf("pidfd_open not available: %v", err)
	} else {
		unix.Close(fd)
	}
	m.monitor.init(m, true)
	defer m.monitor.close()
	checks := (n - 1 + peerCheckSlice - 1) / peerCheckSlice
	for range checks { // opens every pidfd, lazily
		m.monitor.check()
	}
	for i, st := range m.monitor.mu.state {
		if st != watchPidfd {
			t.Fatalf("after %d checks peer %d is watched as %d; want by pidfd", checks, m.monitor.mu.ranks[i], st)
		}
	}
	dead.Process.Kill()
	dead.Wait()
	for range checks {
		m.monitor.check()
	}
	if !m.peers[n-1].lost.Load() {
		t.Fatalf("dead peer %d not found lost after %d checks", n-1, checks)
	}
	for i := 1; i < n-1; i++ {
		if m.peers[i].lost.Load() {
			t.Fatalf("live peer %d reported lost", i)
		}
	}
	if err := m.monitor.firstLost(); err == nil {
		t.Fatalf("firstLost = nil with peer %d lost", n-1)
	}
}

// TestNapFor (issue 16 item 11): up to napRanksPerCore ranks per core a
// sleeping rank naps peerCheckNap and checks peerCheckSlice peers; beyond,
// both grow with the ranks per core, so that the time to look at every
// peer once (checks × nap) does not grow while the wakes per core stay
// bounded.
func TestNapFor(t *testing.T) {
	for _, c := range []struct {
		n, cores  int
		nap       time.Duration
		sliceSize int
	}{
		{2, 2, peerCheckNap, peerCheckSlice},
		{32, 2, peerCheckNap, peerCheckSlice},
		{64, 2, 2 * peerCheckNap, 2 * peerCheckSlice},
		{1024, 2, 32 * peerCheckNap, 32 * peerCheckSlice},
		{1024, 64, peerCheckNap, peerCheckSlice},
		{8, 0, peerCheckNap, peerCheckSlice},
	} {
		nap, size := napFor(c.n, c.cores)
		if nap != c.nap || size != c.sliceSize {
			t.Errorf("napFor(%d ranks, %d cores) = %v, %d; want %v, %d", c.n, c.cores, nap, size, c.nap, c.sliceSize)
		}
		perCore := float64(c.n) / float64(max(c.cores, 1))
		if wakes := perCore / nap.Seconds(); perCore > napRanksPerCore && wakes > napRanksPerCore/peerCheckNap.Seconds()+1 {
			t.Errorf("napFor(%d, %d): %.0f wakes per core per second", c.n, c.cores, wakes)
		}
	}
}

// TestSleepCheckSlice: a sleeping rank's check looks at sleepSlice peers.
func TestSleepCheckSlice(t *testing.T) {
	var next int
	lo, hi := slice(&next, 1023, 2048)
	if lo != 0 || hi != 1023 {
		t.Fatalf("slice of 2048 over 1023 peers = [%d,%d); want [0,1023)", lo, hi)
	}
}

// TestMonitorOpensLazily (issue 16 item 11): init opens no pidfd; a check
// opens at most peerCheckSlice, and checks the peers it has not opened yet
// with kill(pid, 0), so a dead one among them is found in the same check.
func TestMonitorOpensLazily(t *testing.T) {
	live, dead := twoSleepers(t)
	const n = 3*peerCheckSlice + 1
	m := &Module{rank: 0, peers: make([]peer, n)}
	for i := 1; i < n; i++ {
		m.peers[i].pid = live.Process.Pid
	}
	m.peers[n-1].pid = dead.Process.Pid
	m.monitor.init(m, true)
	defer m.monitor.close()
	open := func() int {
		k := 0
		for _, f := range m.monitor.mu.fds {
			if f.Fd >= 0 {
				k++
			}
		}
		return k
	}
	if k := open(); k != 0 {
		t.Fatalf("init opened %d pidfds; want none", k)
	}
	dead.Process.Kill()
	dead.Wait()
	if !m.monitor.checkSlice(n) {
		t.Fatalf("a check of all %d peers did not find the dead one", n-1)
	}
	if !m.peers[n-1].lost.Load() {
		t.Fatalf("dead peer %d not marked lost", n-1)
	}
	if k := open(); k > peerCheckSlice {
		t.Fatalf("one check opened %d pidfds; want at most %d", k, peerCheckSlice)
	}
	for i := 1; i < n-1; i++ {
		if m.peers[i].lost.Load() {
			t.Fatalf("live peer %d reported lost", i)
		}
	}
	if m.monitor.checkSlice(n) {
		t.Fatalf("a second check reported a loss again")
	}
}

// twoSleepers starts two helper processes, one to stay alive and one for
// the test to kill, and kills whichever is left when the test ends (also
// when it fails first).
func twoSleepers(t *testing.T) (live, dead *exec.Cmd) {
	t.Helper()
	for _, c := range []**exec.Cmd{&live, &dead} {
		cmd := exec.Command("sleep", "600")
		if err := cmd.Start(); err != nil {
			t.Skipf("cannot start a helper process: %v", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		*c = cmd
	}
	return live, dead
}
