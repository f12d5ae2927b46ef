package main

import (
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- { // 1..100 us, in reverse
		d = append(d, time.Duration(i)*time.Microsecond)
	}
	got := summarize(d)
	want := latencies{mean: 50500 * time.Nanosecond, p50: 51 * time.Microsecond, p99: 100 * time.Microsecond, max: 100 * time.Microsecond}
	if got != want {
		t.Fatalf("summarize(1..100 us) = %+v, want %+v", got, want)
	}
	if d[0] != 100*time.Microsecond {
		t.Fatal("summarize sorted its argument in place")
	}
}

func TestGoroutineResultWrite(t *testing.T) {
	r := goroutineResult{rounds: 1000,
		direct:        latencies{mean: 200 * time.Nanosecond, p50: 150 * time.Nanosecond, p99: time.Microsecond, max: 5 * time.Microsecond},
		viaGoroutine:  latencies{mean: 300 * time.Nanosecond, p50: 300 * time.Nanosecond, p99: 2 * time.Microsecond, max: 9 * time.Microsecond},
		cpuAlone:      100 * time.Millisecond,
		cpuBesideRecv: 125 * time.Millisecond,
		timerAlone:    60 * time.Microsecond, timerBesideRecv: 1500 * time.Microsecond,
	}
	var b strings.Builder
	if err := r.write(&b, false); err != nil {
		t.Fatal(err)
	}
	want := "goroutine rounds=1000 direct_us=0.200 direct_p50_us=0.150 direct_p99_us=1.000 goroutine_us=0.300 goroutine_p50_us=0.300 " +
		"goroutine_p99_us=2.000 goroutine_max_us=9.000 ratio=1.500 ratio_p50=2.000 cpu_alone_s=0.1000 cpu_beside_recv_s=0.1250 cpu_speed=0.800 " +
		"timer_late_alone_us=60.0 timer_late_beside_recv_us=1500.0\n"
	if b.String() != want {
		t.Fatalf("write:\n got %q\nwant %q", b.String(), want)
	}
	b.Reset()
	if err := r.write(&b, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "rounds,direct_us,") || !strings.HasPrefix(lines[1], "1000,0.200,0.150,") ||
		strings.Count(lines[0], ",") != strings.Count(lines[1], ",") {
		t.Fatalf("write csv: %q", b.String())
	}
}
