// Command shmfloor measures the floor of shared memory between two
// processes on this machine: the time one cache line takes to go from one
// process's core to the other's, which bounds any message a rank can send
// through a shared segment (gorun's btl/sm, Open MPI's vader). The 2-vCPU
// machines gorun is measured on move between a near placement (~60-100 ns
// here) and a far one (250-460 ns), and between hosts with different CPUs,
// so a benchmark sweep records this floor and the CPU beside its ratios
// (docs/bench: each sweep's START file).
//
//	shmfloor [-rounds N] [-iters N]
//
// It prints one line:
//
//	shmfloor one_way_ns min=74.1 median=75.0 max=80.3 rounds=5 iters=200000 cpu="AMD EPYC"
//
// The parent maps a memfd (nothing is left in the file system), starts
// itself again as the child with the memfd as its fd 3, and the two
// ping-pong a counter: the parent stores i in its line, the child waits
// for i there and stores it in its own line, the parent waits for it. A
// round's one-way time is its elapsed time over 2*iters.
//
// Invariants:
//   - The two lines are 128 bytes apart, so that neither the line nor its
//     adjacent-line prefetch pair is shared.
//   - The child dies with the parent (PR_SET_PDEATHSIG) and gives up after
//     childIdle without a new value, so no process outlives a failed run;
//     the parent gives up after childIdle without an answer.
//   - Neither side binds to a CPU: it measures what unbound ranks get.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	childEnv  = "SHMFLOOR_CHILD" // in the child's environment: its patience (childIdle) in ms
	lineA     = 0                // the parent's line
	lineB     = 128              // the child's line
	mapSize   = 4096
	quit      = ^uint64(0)       // the parent's last value: the child exits
	childIdle = 10 * time.Second // the child's patience without a new value
	spinCheck = 1 << 20          // spins between two looks at the clock
)

func main() {
	if v := os.Getenv(childEnv); v != "" {
		if err := child(v); err != nil {
			fmt.Fprintln(os.Stderr, "shmfloor child:", err)
			os.Exit(1)
		}
		return
	}
	rounds := flag.Int("rounds", 5, "timed rounds (the line reports their min, median and max)")
	iters := flag.Int("iters", 200000, "round trips per round")
	flag.Parse()
	if *rounds < 1 || *iters < 1 {
		fmt.Fprintf(os.Stderr, "shmfloor: -rounds %d and -iters %d: both must be at least 1\n", *rounds, *iters)
		os.Exit(2)
	}
	ns, err := measure(*rounds, *iters)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shmfloor:", err)
		os.Exit(1)
	}
	fmt.Println(report(ns, *iters, cpuModel()))
}

// report formats the result line from the rounds' one-way times.
func report(ns []float64, iters int, cpu string) string {
	s := slices.Clone(ns)
	slices.Sort(s)
	return fmt.Sprintf("shmfloor one_way_ns min=%.1f median=%.1f max=%.1f rounds=%d iters=%d cpu=%q",
		s[0], s[len(s)/2], s[len(s)-1], len(s), iters, cpu)
}

// lines maps fd and returns the parent's and the child's words.
func lines(fd int) (a, b *atomic.Uint64, unmap func(), err error) {
	m, err := unix.Mmap(fd, 0, mapSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("mmap: %w", err)
	}
	base := unsafe.Pointer(unsafe.SliceData(m))
	return (*atomic.Uint64)(unsafe.Add(base, lineA)), (*atomic.Uint64)(unsafe.Add(base, lineB)),
		func() { unix.Munmap(m) }, nil
}

// measure runs the child and rounds timed rounds of iters round trips,
// and returns each round's one-way time in ns.
func measure(rounds, iters int) ([]float64, error) {
	fd, err := unix.MemfdCreate("shmfloor", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "shmfloor")
	defer f.Close()
	if err := f.Truncate(mapSize); err != nil {
		return nil, err
	}
	a, b, unmap, err := lines(fd)
	if err != nil {
		return nil, err
	}
	defer unmap()
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", childEnv, childIdle.Milliseconds()))
	cmd.ExtraFiles = []*os.File{f} // fd 3 in the child
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	res, err := pingPong(a, b, rounds, iters)
	a.Store(quit)
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("child: %w", werr)
	}
	return res, err
}

// pingPong is the parent's side: a warm-up round, then the timed ones.
func pingPong(a, b *atomic.Uint64, rounds, iters int) ([]float64, error) {
	v := uint64(0)
	trip := func() error {
		v++
		a.Store(v)
		var w patience
		for b.Load() != v {
			if w.over(childIdle) {
				return fmt.Errorf("the child did not answer for %v", childIdle)
			}
		}
		return nil
	}
	for range min(iters, 10000) {
		if err := trip(); err != nil {
			return nil, err
		}
	}
	var res []float64
	for range rounds {
		t := time.Now()
		for range iters {
			if err := trip(); err != nil {
				return nil, err
			}
		}
		res = append(res, float64(time.Since(t).Nanoseconds())/float64(2*iters))
		runtime.Gosched()
	}
	return res, nil
}

// child answers every value the parent stores until quit, or until the
// parent stays silent for idleMs milliseconds (childEnv's value).
func child(idleMs string) error {
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	ms, err := strconv.Atoi(idleMs)
	if err != nil || ms <= 0 {
		return fmt.Errorf("%s=%q: want a positive number of milliseconds", childEnv, idleMs)
	}
	idle := time.Duration(ms) * time.Millisecond
	a, b, unmap, err := lines(3)
	if err != nil {
		return err
	}
	defer unmap()
	last := uint64(0)
	var w patience
	for {
		v := a.Load()
		if v == quit {
			return nil
		}
		if v != last {
			b.Store(v)
			last, w = v, patience{}
			continue
		}
		if w.over(idle) {
			return fmt.Errorf("no new value from the parent for %v", idle)
		}
	}
}

// patience counts a spinning wait's polls and says, every spinCheck of
// them, whether the wait has lasted longer than limit. Its clock starts at
// the first check, so a wait that ends within spinCheck polls (every one
// of a measurement's) never reads it.
type patience struct {
	polls int
	since time.Time
}

func (p *patience) over(limit time.Duration) bool {
	if p.polls++; p.polls < spinCheck {
		return false
	}
	p.polls = 0
	if p.since.IsZero() {
		p.since = time.Now()
		return false
	}
	return time.Since(p.since) > limit
}

// cpuModel is the first "model name" of /proc/cpuinfo ("unknown" without one).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
