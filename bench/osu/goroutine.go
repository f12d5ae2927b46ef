package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gorun-mpi/gorun"
)

// Tags of the goroutine mode.
const (
	tagGoPing    = 20 // ping-pongs
	tagGoDone    = 21 // rank 1 to rank 0: the CPU measurement is over
	tagGoRelease = 22 // rank 0 to rank 1: the receive the CPU loop ran beside
)

// goroutineResult is what the goroutine mode measures on rank 1's side of a
// 2-rank job: a Go rank often receives in one goroutine and feeds the rest
// of the rank over a channel, and a goroutine blocked in a gorun call must
// cost the rank's other goroutines next to nothing.
//   - The 8-byte ping-pong of rank 0 answered by rank 1 directly, then
//     through a receiver goroutine that hands each ping over a channel to
//     the goroutine that sends the pong. Half round trips, as lat reports.
//   - A CPU-bound loop on rank 1 alone, and while another goroutine of rank
//     1 is blocked in Recv (see cpuBesideRecv): speed = alone / beside.
//   - How late a goroutine of rank 1 that sleeps 1 ms wakes, alone and
//     while another goroutine of rank 1 sleeps in Recv (timerBesideRecv).
type goroutineResult struct {
	rounds                      int
	direct, viaGoroutine        latencies
	cpuAlone, cpuBesideRecv     time.Duration
	timerAlone, timerBesideRecv time.Duration // mean lateness of a 1 ms sleep
}

// latencies of one ping-pong run, half round trips.
type latencies struct{ mean, p50, p99, max time.Duration }

func summarize(halfTrips []time.Duration) latencies {
	s := slices.Clone(halfTrips)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	q := func(f float64) time.Duration { return s[min(len(s)-1, int(f*float64(len(s))))] }
	return latencies{mean: sum / time.Duration(len(s)), p50: q(0.5), p99: q(0.99), max: s[len(s)-1]}
}

// speed is the CPU loop's speed beside a blocked Recv relative to alone.
func (r goroutineResult) speed() float64 {
	return r.cpuAlone.Seconds() / r.cpuBesideRecv.Seconds()
}

// ratio is the receiver-goroutine ping-pong's mean over the direct one's.
func (r goroutineResult) ratio() float64 {
	return r.viaGoroutine.mean.Seconds() / r.direct.mean.Seconds()
}

func us(d time.Duration) float64 { return d.Seconds() * 1e6 }

// write prints one line ("goroutine rounds=... direct_us=... ..."), or a CSV
// header and row.
func (r goroutineResult) write(w io.Writer, csv bool) error {
	cols := []string{"rounds", "direct_us", "direct_p50_us", "direct_p99_us", "goroutine_us", "goroutine_p50_us",
		"goroutine_p99_us", "goroutine_max_us", "ratio", "ratio_p50", "cpu_alone_s", "cpu_beside_recv_s", "cpu_speed",
		"timer_late_alone_us", "timer_late_beside_recv_us"}
	vals := []string{fmt.Sprint(r.rounds), f3(us(r.direct.mean)), f3(us(r.direct.p50)), f3(us(r.direct.p99)),
		f3(us(r.viaGoroutine.mean)), f3(us(r.viaGoroutine.p50)), f3(us(r.viaGoroutine.p99)), f3(us(r.viaGoroutine.max)),
		f3(r.ratio()), f3(r.viaGoroutine.p50.Seconds() / r.direct.p50.Seconds()),
		fmt.Sprintf("%.4f", r.cpuAlone.Seconds()), fmt.Sprintf("%.4f", r.cpuBesideRecv.Seconds()), f3(r.speed()),
		fmt.Sprintf("%.1f", us(r.timerAlone)), fmt.Sprintf("%.1f", us(r.timerBesideRecv))}
	var err error
	if csv {
		_, err = fmt.Fprintf(w, "%s\n%s\n", strings.Join(cols, ","), strings.Join(vals, ","))
		return err
	}
	var b strings.Builder
	b.WriteString("goroutine")
	for i := range cols {
		fmt.Fprintf(&b, " %s=%s", cols[i], vals[i])
	}
	_, err = fmt.Fprintln(w, b.String())
	return err
}

func f3(v float64) string { return fmt.Sprintf("%.3f", v) }

// goroutines runs the goroutine mode; rank 0 gets the result.
func (b *bench) goroutines() (goroutineResult, error) {
	c := b.c
	res := goroutineResult{rounds: b.o.rounds}
	for _, viaGoroutine := range []bool{false, true} {
		if err := c.Barrier(); err != nil {
			return res, fmt.Errorf("barrier: %w", err)
		}
		halves, err := b.goPingPong(viaGoroutine)
		if err != nil {
			return res, err
		}
		if c.Rank() == 0 {
			if viaGoroutine {
				res.viaGoroutine = summarize(halves)
			} else {
				res.direct = summarize(halves)
			}
		}
	}
	if err := c.Barrier(); err != nil {
		return res, fmt.Errorf("barrier: %w", err)
	}
	alone, beside, err := b.cpuBesideRecv()
	if err != nil {
		return res, err
	}
	tAlone, tBeside, err := b.timerBesideRecv()
	if err != nil {
		return res, err
	}
	// Rank 1 measured; rank 0 reports.
	times := []float64{alone.Seconds(), beside.Seconds(), tAlone.Seconds(), tBeside.Seconds()}
	if c.Rank() == 1 {
		err = gorun.SendSlice(c, times, 0, tagGather)
	} else {
		_, err = gorun.RecvSlice(c, times, 1, tagGather)
	}
	res.cpuAlone = time.Duration(times[0] * float64(time.Second))
	res.cpuBesideRecv = time.Duration(times[1] * float64(time.Second))
	res.timerAlone = time.Duration(times[2] * float64(time.Second))
	res.timerBesideRecv = time.Duration(times[3] * float64(time.Second))
	return res, err
}

// goPingPong: rank 0 pings rank 1 rounds times (after 100 untimed) and
// returns each half round trip; rank 1 answers directly, or through a
// receiver goroutine and a channel.
func (b *bench) goPingPong(viaGoroutine bool) ([]time.Duration, error) {
	c, s, r := b.c, b.sbuf[:8], b.rbuf[:8]
	const warmup = 100
	n := warmup + b.o.rounds
	if c.Rank() == 0 {
		halves := make([]time.Duration, 0, b.o.rounds)
		for i := 0; i < n; i++ {
			t0 := time.Now()
			if err := c.Send(s, 1, tagGoPing); err != nil {
				return nil, fmt.Errorf("ping %d: %w", i, err)
			}
			if _, err := c.Recv(r, 1, tagGoPing); err != nil {
				return nil, fmt.Errorf("pong %d: %w", i, err)
			}
			if i >= warmup {
				halves = append(halves, time.Since(t0)/2)
			}
		}
		return halves, nil
	}
	if !viaGoroutine {
		for i := 0; i < n; i++ {
			if _, err := c.Recv(r, 0, tagGoPing); err != nil {
				return nil, fmt.Errorf("ping %d: %w", i, err)
			}
			if err := c.Send(s, 0, tagGoPing); err != nil {
				return nil, fmt.Errorf("pong %d: %w", i, err)
			}
		}
		return nil, nil
	}
	pings := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			_, err := c.Recv(r, 0, tagGoPing)
			pings <- err
			if err != nil {
				return
			}
		}
	}()
	for i := 0; i < n; i++ {
		if err := <-pings; err != nil {
			return nil, fmt.Errorf("ping %d (receiver goroutine): %w", i, err)
		}
		if err := c.Send(s, 0, tagGoPing); err != nil {
			return nil, fmt.Errorf("pong %d: %w", i, err)
		}
	}
	return nil, nil
}

// cpuTrials is how many times cpuBesideRecv times the loop each way; the
// best time of each way counts.
const cpuTrials = 5

// cpuBesideRecv times a CPU-bound loop on rank 1 alone and while another
// goroutine of rank 1 is blocked in Recv, alternately, cpuTrials times each
// (rank 0 releases each receive once the loop beside it is done). Each time
// leaves out the time the kernel kept the loop's thread off the CPU
// (runDelay): the machine may be shared, and only what the rank's own
// goroutines cost each other is of interest here. Time the loop's goroutine
// waits for the rank's P (held by the receive) is not left out: the kernel
// sees its thread blocked then, not ready.
func (b *bench) cpuBesideRecv() (alone, beside time.Duration, err error) {
	c := b.c
	if c.Rank() == 0 {
		for i := 0; i < cpuTrials; i++ {
			if _, err := c.Recv(nil, 1, tagGoDone); err != nil {
				return 0, 0, fmt.Errorf("waiting for rank 1's CPU loop: %w", err)
			}
			if err := c.Send(nil, 1, tagGoRelease); err != nil {
				return 0, 0, err
			}
		}
		return 0, 0, nil
	}
	runtime.LockOSThread() // runDelay reads this thread's
	defer runtime.UnlockOSThread()
	timed := func(work int) time.Duration {
		d0, t0 := runDelay(), time.Now()
		sink += spin(work)
		return time.Since(t0) - (runDelay() - d0)
	}
	work := calibrate(100*time.Millisecond, timed)
	alone, beside = time.Duration(1<<62), time.Duration(1<<62)
	for i := 0; i < cpuTrials; i++ {
		alone = min(alone, timed(work))
		recvd := make(chan error, 1)
		go func() {
			_, err := c.Recv(nil, 0, tagGoRelease)
			recvd <- err
		}()
		time.Sleep(10 * time.Millisecond) // into Recv, past its spinning
		beside = min(beside, timed(work))
		if err := c.Send(nil, 0, tagGoDone); err != nil {
			return 0, 0, err
		}
		if err := <-recvd; err != nil {
			return 0, 0, fmt.Errorf("the receive beside the CPU loop: %w", err)
		}
	}
	return alone, beside, nil
}

// timerTicks is how many 1 ms sleeps timerBesideRecv times each way.
const timerTicks = 200

// timerBesideRecv returns the mean lateness of a 1 ms time.Sleep on rank 1
// alone, and while another goroutine of rank 1 sleeps in Recv, past its
// spinning (rank 0 then releases the receive). A goroutine that a timer
// readies needs the rank's P (often its only one); a receive that sleeps
// inside a system call holds it until the runtime's monitor thread takes it
// back.
func (b *bench) timerBesideRecv() (alone, beside time.Duration, err error) {
	c := b.c
	if c.Rank() == 0 {
		if _, err := c.Recv(nil, 1, tagGoDone); err != nil {
			return 0, 0, fmt.Errorf("waiting for rank 1's timers: %w", err)
		}
		return 0, 0, c.Send(nil, 1, tagGoRelease)
	}
	late := func() time.Duration {
		var sum time.Duration
		for i := 0; i < timerTicks; i++ {
			t0 := time.Now()
			time.Sleep(time.Millisecond)
			sum += time.Since(t0) - time.Millisecond
		}
		return sum / timerTicks
	}
	alone = late()
	recvd := make(chan error, 1)
	go func() {
		_, err := c.Recv(nil, 0, tagGoRelease)
		recvd <- err
	}()
	time.Sleep(10 * time.Millisecond) // into Recv, past its spinning
	beside = late()
	if err := c.Send(nil, 0, tagGoDone); err != nil {
		return 0, 0, err
	}
	if err := <-recvd; err != nil {
		return 0, 0, fmt.Errorf("the receive beside the timers: %w", err)
	}
	return alone, beside, nil
}

// runDelay is the time the calling thread has spent ready to run but
// waiting for a CPU (the second field of /proc/thread-self/schedstat), or 0
// where the kernel does not tell. The caller locks its OS thread.
func runDelay() time.Duration {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return 0
	}
	var run, wait int64
	if _, err := fmt.Sscan(string(b), &run, &wait); err != nil {
		return 0
	}
	return time.Duration(wait)
}

// sink keeps the CPU loop's result alive.
var sink uint64

// spin is the CPU-bound loop: n rounds of xorshift, no memory traffic.
func spin(n int) uint64 {
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// calibrate returns the n for which spin(n) takes about d by timed.
func calibrate(d time.Duration, timed func(n int) time.Duration) int {
	n := 1 << 16
	for {
		if el := timed(n); el >= d/8 {
			return int(float64(n) * float64(d) / float64(el))
		}
		n *= 2
	}
}
