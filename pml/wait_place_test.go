package pml

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// An oversubscribed rank's CPU: its index among its machine's ranks, modulo
// the CPUs it may run on, so that neighbours alternate.
func TestPlaceCPU(t *testing.T) {
	cpus := []int{2, 5}
	for rank, want := range []int{2, 5, 2, 5, 2} {
		if got := placeCPU(localIndex(rank, nil), cpus); got != want {
			t.Errorf("rank %d of one machine: CPU %d, want %d", rank, got, want)
		}
	}
	// Two machines, ranks interleaved: each machine counts its own ranks.
	nodes := []int{0, 1, 0, 1, 0, 1}
	for rank, want := range []int{0, 0, 1, 1, 2, 2} {
		if got := localIndex(rank, nodes); got != want {
			t.Errorf("rank %d of nodes %v: local index %d, want %d", rank, nodes, got, want)
		}
	}
}

// Moving does not bind: the thread's affinity mask is the one it had.
func TestMoveToKeepsMask(t *testing.T) {
	var before, after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Skip(err)
	}
	cpu := -1
	for c := len(before)*64 - 1; c >= 0; c-- {
		if before.IsSet(c) {
			cpu = c
			break
		}
	}
	moveTo(cpu)
	moveTo(1 << 20) // not in any mask: nothing happens
	if err := unix.SchedGetaffinity(0, &after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("mask after moveTo: %v, want %v", after, before)
	}
}

// A rank displaced again and again moves back less and less often, and
// after placeMoves moves not at all.
func TestPlaceBacksOff(t *testing.T) {
	pl := placer{state: placeOn, want: 1}
	t0 := time.Now()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	steps := []struct {
		cpu  int
		at   time.Duration
		move bool
	}{
		{0, 0, true},                    // the first move: at once
		{1, time.Millisecond, false},    // on its CPU
		{0, time.Millisecond, false},    // displaced within placeGap (2 ms)
		{0, 2 * time.Millisecond, true}, // the gap is now 4 ms
		{0, 5 * time.Millisecond, false},
		{0, 6 * time.Millisecond, true},  // 8 ms
		{0, 14 * time.Millisecond, true}, // the placeMoves-th move
	}
	for i, s := range steps {
		if got := pl.due(s.cpu, at(s.at)); got != s.move {
			t.Fatalf("step %d (cpu %d at %v): due %v, want %v", i, s.cpu, s.at, got, s.move)
		}
	}
	if pl.state != placeOff || pl.moves != placeMoves {
		t.Errorf("after %d moves: state %d, want placeOff (%d)", pl.moves, pl.state, placeOff)
	}
}
