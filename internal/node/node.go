// Package node names the machine this process runs on: the one name that
// gorun.ProcessorName reports and that ranks sharing a machine (shared
// memory) have in common, so SplitShared groups by it.
//
// Invariant: Name returns the same string for the life of the process once
// it has been called, unless a wire-up calls SetName before the first use.
package node

import (
	"os"
	"sync"
)

var state struct {
	sync.Mutex
	name string
}

// Name is this machine's name: the one a wire-up gave with SetName, else
// os.Hostname ("localhost" when the kernel gives none).
func Name() string {
	state.Lock()
	defer state.Unlock()
	if state.name == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			h = "localhost"
		}
		state.name = h
	}
	return state.name
}

// SetName replaces the machine's identity, for a wire-up that knows better
// than the hostname (several test "hosts" in network namespaces share one
// hostname; a resource manager may name its nodes differently). Call it
// before Init returns; an empty name restores the hostname.
func SetName(name string) {
	state.Lock()
	state.name = name
	state.Unlock()
}
