package pml

import (
	"testing"
	"time"
)

// TestSetYield: "auto" yields when the ranks outnumber the cores; far
// oversubscribed (issue 16 item 11) the spin phase shrinks and the sleep
// timeout grows with the ranks per core, so that N waiting ranks neither
// spin nor wake the cores in proportion to N² (or N per core).
func TestSetYield(t *testing.T) {
	for _, c := range []struct {
		yield       string
		size, cores int
		spin        int
		sleep       time.Duration // 0: left unset
		wantYield   bool
		wantSpin    int
		wantSleep   time.Duration
	}{
		{"auto", 2, 2, 1000, 0, false, 1000, 0},
		{"auto", 8, 2, 1000, 0, true, 1000, 0},
		{"auto", 16, 2, 1000, 0, true, 1000, 0},
		{"auto", 32, 2, 1000, 0, true, 500, 0},
		{"auto", 64, 2, 1000, 0, true, 250, 2 * defaultSleepTimeout},
		{"auto", 1024, 2, 1000, 0, true, 15, 32 * defaultSleepTimeout},
		{"auto", 1024, 2, 1000, 10 * time.Millisecond, true, 15, 320 * time.Millisecond},
		{"auto", 1 << 20, 1, 10, 0, true, 1, 1 << 16 * defaultSleepTimeout},
		{"no", 1024, 2, 1000, 0, false, 1000, 0},
		{"yes", 2, 2, 1000, 0, true, 1000, 0},
		{"auto", 1024, 512, 1000, 0, true, 1000, 0},
	} {
		cfg := Config{Size: c.size, SpinCount: c.spin, SleepTimeout: c.sleep, YieldWhenIdle: c.yield}
		cfg.SetYield(c.cores)
		if cfg.Yield != c.wantYield || cfg.SpinCount != c.wantSpin || cfg.SleepTimeout != c.wantSleep {
			t.Errorf("%s, %d ranks on %d cores, spin %d, sleep %v: yield %v, spin %d, sleep %v; want %v, %d, %v",
				c.yield, c.size, c.cores, c.spin, c.sleep, cfg.Yield, cfg.SpinCount, cfg.SleepTimeout, c.wantYield, c.wantSpin, c.wantSleep)
		}
	}
}
