package tests

import (
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// Hardening of the point-to-point layer (issue 16 items 3, 5, 10 and 14),
// each by a mode of the pmlhard rank program under the real launcher. A
// hang is a failure through gorun's --timeout (exit 124).

// runPMLHard runs `gorun -np np pmlhard mode` and fails t unless it exits 0
// with every rank in ranks printing "mode ok R".
func runPMLHard(t *testing.T, np int, mode string, env []string, ranks ...int) jobtest.Result {
	t.Helper()
	return runPMLHardMCA(t, np, mode, env, nil, ranks...)
}

// runPMLHardMCA is runPMLHard with --mca NAME VALUE pairs.
func runPMLHardMCA(t *testing.T, np int, mode string, env, mca []string, ranks ...int) jobtest.Result {
	t.Helper()
	args := []string{"-np", itoa(np), "--timeout", "45s"}
	for i := 0; i+1 < len(mca); i += 2 {
		args = append(args, "--mca", mca[i], mca[i+1])
	}
	args = append(args, jobtest.Prog("pmlhard"), mode)
	r := jobtest.Job{Args: args, Env: env}.Run(t)
	ok := r.Code == 0
	for _, rank := range ranks {
		ok = ok && strings.Contains(r.Stdout, mode+" ok "+itoa(rank)+"\n")
	}
	if !ok {
		t.Fatalf("gorun %v: exit %d\nstdout:\n%s\nstderr:\n%.4000s", args, r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// TestFinalizeWhileSending (item 3): goroutines send (Ssend, rendezvous and
// eager, some by reference) and receive while Finalize runs. The job must
// end (no goroutine spinning after Finalize), no rank may crash on the
// unmapped segment, every call ends with nil or ErrFinalized (ErrCanceled
// for receives Finalize cancels, ErrPeerLost for sends to a rank already
// gone), and no Ssend may return nil that its receiver did not match: each
// rank's successful Ssends are at most the receives of them its peer
// counted. Several runs, with more threads than cores, for the races.
func TestFinalizeWhileSending(t *testing.T) {
	t.Parallel()
	for run := 0; run < 4; run++ {
		r := runPMLHard(t, 2, "finalizerace", []string{"GOMAXPROCS=4"}, 0, 1)
		var sent, got [2]int
		for _, l := range strings.Split(r.Stdout, "\n") {
			var rank, n int
			if _, err := sscan(l, "ssend-ok %d %d", &rank, &n); err == nil && rank >= 0 && rank < 2 {
				sent[rank] = n
			} else if _, err := sscan(l, "recv-ssend %d %d", &rank, &n); err == nil && rank >= 0 && rank < 2 {
				got[rank] = n
			}
		}
		for rank := 0; rank < 2; rank++ {
			if sent[rank] > got[1-rank] {
				t.Errorf("run %d: rank %d's Ssend returned nil %d times, but rank %d received only %d of them\nstdout:\n%s",
					run, rank, sent[rank], 1-rank, got[1-rank], r.Stdout)
			}
		}
	}
}

// TestWaitAnyManyGoroutines (item 5): eight goroutines call WaitAny over the
// same 48 receives, 40 rounds: each index comes back exactly once, and
// every call ends (-1 once another goroutine took the last one).
func TestWaitAnyManyGoroutines(t *testing.T) {
	t.Parallel()
	runPMLHard(t, 2, "waitany", []string{"GOMAXPROCS=4"}, 0, 1)
}

// TestAnySourcePeerLost (item 10): once every other rank has ended, Recv,
// Irecv and Probe from AnySource, and an AnySource receive posted before,
// fail with ErrPeerLost instead of waiting forever; a message that came
// before its sender left is still received.
func TestAnySourcePeerLost(t *testing.T) {
	t.Parallel()
	runPMLHard(t, 3, "anylost", nil, 0)
}

// TestFinalizeDeliversQueuedBarrier (item 14): a rank whose sends to its
// peer are queued (the peer's FIFO is full) finalizes at once; its
// barrier message queues behind them and must reach the peer before it
// closes, or the peer's Finalize fails with ErrPeerLost.
func TestFinalizeDeliversQueuedBarrier(t *testing.T) {
	t.Parallel()
	for run := 0; run < 3; run++ {
		runPMLHard(t, 2, "finalizequeue", nil, 0, 1)
	}
	// The same over TCP, whose queue is the socket's.
	runPMLHardMCA(t, 2, "finalizequeue", nil, []string{"btl", "self,tcp"}, 0, 1)
}
