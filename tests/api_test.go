package tests

import (
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// The API ported programs rely on, checked by the api rank program under
// the real launcher (see tests/progs/api for what each mode asserts).
func TestAPI(t *testing.T) {
	cases := []struct {
		mode string
		np   int
	}{
		{"typed", 3},  // IsendSlice/IrecvSlice/SendrecvSlice on float64, int32, int; Count
		{"names", 3},  // ProcessorName agreed on one machine; Wtime monotonic
		{"mprobe", 2}, // goroutines sharing one source through Mprobe/Improbe: each message once
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			args := []string{"-np", itoa(c.np), "--timeout", "120s", jobtest.Prog("api"), c.mode}
			r := jobtest.Run(t, args...)
			if r.Code != 0 || !strings.Contains(r.Stdout, c.mode+" ok") {
				t.Fatalf("gorun %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
			}
		})
	}
}
