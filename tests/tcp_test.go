package tests

import (
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// Every p2p rule again with the ranks talking over TCP on this machine
// (`--mca btl self,tcp`: loopback sockets instead of the shared segment),
// with the TCP limits small enough that eager, rendezvous and pipelined
// transfers all cross them.
func TestPointToPointOverTCP(t *testing.T) {
	modes := []struct {
		mode string
		np   int
	}{
		{"order", 2}, {"wildcard", 4}, {"probe", 2}, {"trunc", 2}, {"ssend", 2}, {"cancel", 2},
		{"dup", 3}, {"goroutines", 2}, {"flood", 2}, {"alltoall", 8}, {"args", 2}, {"finalize", 2},
	}
	limits := [][]string{nil, {"btl_tcp_eager_limit", "128", "btl_tcp_max_send_size", "1k"}}
	for _, m := range modes {
		for _, lim := range limits {
			if lim != nil && m.mode != "order" && m.mode != "flood" {
				continue
			}
			name := m.mode
			if lim != nil {
				name += "/" + strings.Join(lim, "=")
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				args := []string{"-np", itoa(m.np), "--timeout", "120s", "--mca", "btl", "self,tcp"}
				for i := 0; i+1 < len(lim); i += 2 {
					args = append(args, "--mca", lim[i], lim[i+1])
				}
				args = append(args, jobtest.Prog("p2p"), m.mode)
				r := jobtest.Run(t, args...)
				if r.Code != 0 || !strings.Contains(r.Stdout, m.mode+" ok") {
					t.Fatalf("gorun %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
				}
			})
		}
	}
}

// A rank that exits without Finalize: over TCP too, the survivor's pending
// receive ends with ErrPeerLost (the socket's end of stream).
func TestPeerLostReceiveOverTCP(t *testing.T) {
	r := jobtest.Run(t, "-np", "2", "--timeout", "60s", "--mca", "btl", "self,tcp", jobtest.Prog("p2p"), "peerlost")
	if !strings.Contains(r.Stdout, "peerlost ok") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// A rank that computes for three times btl_tcp_timeout between MPI calls,
// while a 64 MiB message streams to its posted receive, is busy, not lost:
// its socket's window stays shut meanwhile and the sender's
// TCP_USER_TIMEOUT would end the connection, unless the rank keeps reading
// (the PML's background progress for btl.Progressor modules).
func TestBusyReceiverOverTCP(t *testing.T) {
	args := []string{"-np", "2", "--timeout", "120s", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_timeout", "2",
		jobtest.Prog("p2p"), "busy"}
	r := jobtest.Run(t, args...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "busy ok") {
		t.Fatalf("gorun %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
	}
}

// The ring example over TCP (the done-when command).
func TestRingOverTCP(t *testing.T) {
	r := jobtest.Run(t, "-np", "4", "--timeout", "60s", "--mca", "btl", "self,tcp", jobtest.Example("ring"))
	if r.Code != 0 || !strings.Contains(r.Stdout, "OK") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
