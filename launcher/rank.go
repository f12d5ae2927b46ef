package launcher

// Rank-side hooks, called by the root package inside rank processes. This
// file fixes their signatures; the implementation replaces the bodies.

import "os"

// RankInit is called once by gorun.Init in a rank started by gorun (GORUN_RANK
// set). It starts watching the launcher's lifeline so that the rank ends when
// gorun dies, even by SIGKILL.
func RankInit() error { return nil }

// Abort ends the job from inside a rank: it records that this rank called
// Abort(code) so the launcher can say so, and exits the process with code
// when 1 ≤ code ≤ 255, 1 otherwise. Outside gorun it just exits by that rule.
func Abort(code int) {
	if code < 1 || code > 255 {
		code = 1
	}
	os.Exit(code)
}
