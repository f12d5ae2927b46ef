package pml

import (
	"testing"

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
