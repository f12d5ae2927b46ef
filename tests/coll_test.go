package tests

import (
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// forced makes every collective use the algorithm auto does not pick at
// the test's sizes.
var forced = []string{
	"coll_tuned_allreduce_algorithm", "ring",
	"coll_tuned_bcast_algorithm", "scatter_allgather",
	"coll_tuned_allgather_algorithm", "ring",
	"coll_tuned_alltoall_algorithm", "pairwise",
	"coll_tuned_reduce_scatter_block_algorithm", "recursive_doubling",
	"coll_tuned_reduce_algorithm", "reduce_scatter_gather",
	"coll_tuned_gather_algorithm", "linear",
	"coll_tuned_scatter_algorithm", "linear",
}

// rabenseifner forces recursive halving + doubling on Reduce and Allreduce.
var rabenseifner = []string{"coll_tuned_allreduce_algorithm", "rabenseifner", "coll_tuned_reduce_algorithm", "rabenseifner"}

// noSM turns coll/sm off: small blocking Barrier, Bcast, Reduce and
// Allreduce take the point-to-point schedules.
var noSM = []string{"coll_sm_enable", "false"}

// pieces makes coll/sm's slot 128 bytes when oversubscribed (3 and 5 ranks
// on CI's 2 cores), for Bcast and Reduce, and 64 for the others: larger
// Reduces go through it in pieces; Allreduces only up to 128 bytes in all.
var pieces = []string{"coll_sm_oversubscribed_max_size", "64", "coll_sm_oversubscribed_rooted_max_size", "128",
	"coll_sm_oversubscribed_allreduce_max_size", "128"}

var bruck = []string{"coll_tuned_allgather_algorithm", "bruck", "coll_tuned_alltoall_algorithm", "bruck"}

// Communicators and collectives under the real launcher (see tests/progs/coll
// for what each mode asserts). Every job must print "MODE ok" and exit 0.
// 8 ranks run oversubscribed on CI's 2 cores.
func TestCollectives(t *testing.T) {
	cases := []struct {
		mode string
		nps  []int
		mca  []string
	}{
		{"split", []int{1, 2, 3, 5, 8}, nil},
		{"concurrentdup", []int{2, 4}, nil}, // issue 16 item 2
		{"all", []int{1, 2, 3, 5, 8}, nil},  // every collective, every root, in place, v-variants with zeros and gaps
		{"all", []int{4, 5}, forced},
		{"all", []int{6}, bruck},
		{"all", []int{3, 6}, rabenseifner},
		{"all", []int{3, 8}, noSM}, // the small blocking calls through the schedules too
		{"all", []int{3, 5}, pieces},
		{"stress", []int{5}, noSM},
		{"args", []int{1, 2, 5}, nil},         // argument errors, before anything is sent
		{"truncate", []int{2}, nil},           // a length mismatch: ErrTruncate naming the collective and the lengths
		{"logical", []int{1, 2, 3}, nil},      // LAnd, LOr, LXor give 1 or 0, also with nothing to combine
		{"nonblocking", []int{2, 3, 8}, nil},  // outstanding, completed out of order, beside wildcard receives
		{"goroutines", []int{3, 8}, nil},      // split communicators from several goroutines
		{"stress", []int{2, 5, 8}, nil},       // 2000 iterations with changing roots
		{"determinism", []int{3, 8}, nil},     // bit-identical Allreduce on every rank
		{"determinism", []int{5}, forced[:2]}, // ... with the ring algorithm too
		{"determinism", []int{6}, rabenseifner[:2]},
	}
	for _, c := range cases {
		for _, np := range c.nps {
			name := c.mode + "/" + itoa(np)
			if c.mca != nil {
				name += "/" + c.mca[1]
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				args := []string{"-np", itoa(np), "--timeout", "120s"}
				for i := 0; i+1 < len(c.mca); i += 2 {
					args = append(args, "--mca", c.mca[i], c.mca[i+1])
				}
				args = append(args, jobtest.Prog("coll"), c.mode)
				r := jobtest.Run(t, args...)
				if r.Code != 0 || !strings.Contains(r.Stdout, c.mode+" ok") {
					t.Fatalf("gorun %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
				}
			})
		}
	}
}

// The benchmark's collective modes run and print rows in compare.py's
// format ("<size> <value>", or us_per_round= for barrier).
func TestBenchCollectives(t *testing.T) {
	for _, mode := range []string{"allreduce", "reduce", "bcast", "allgather", "alltoall", "barrier"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			args := []string{"-np", "3", "--timeout", "120s", jobtest.Prog("osu"), mode, "-i", "3", "-x", "1", "-m", "64k"}
			if mode == "barrier" {
				args = []string{"-np", "3", "--timeout", "120s", jobtest.Prog("osu"), mode, "200"}
			}
			r := jobtest.Run(t, args...)
			want := "65536 "
			if mode == "barrier" {
				want = "us_per_round="
			}
			if r.Code != 0 || !strings.Contains(r.Stdout, want) {
				t.Fatalf("gorun %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
			}
		})
	}
}
