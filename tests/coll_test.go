package tests

import (
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// Communicators and collectives under the real launcher (see tests/progs/coll
// for what each mode asserts). Every job must print "MODE ok" and exit 0.
func TestCollectives(t *testing.T) {
	cases := []struct {
		mode string
		nps  []int
	}{
		{"split", []int{1, 2, 3, 5, 8}},
		{"concurrentdup", []int{2, 4}}, // issue 16 item 2
	}
	for _, c := range cases {
		for _, np := range c.nps {
			t.Run(c.mode+"/"+itoa(np), func(t *testing.T) {
				t.Parallel()
				args := []string{"-np", itoa(np), "--timeout", "120s", jobtest.Prog("coll"), c.mode}
				r := jobtest.Run(t, args...)
				if r.Code != 0 || !strings.Contains(r.Stdout, c.mode+" ok") {
					t.Fatalf("gorun %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
				}
			})
		}
	}
}
