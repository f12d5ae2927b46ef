package launcher

import (
	"fmt"
	"testing"
)

func TestBindCPUs(t *testing.T) {
	four := []int{0, 1, 2, 3}
	odd := []int{1, 3, 4, 7, 9}
	cases := []struct {
		allowed []int
		n, i    int
		want    string
	}{
		{four, 2, 0, "[0 1]"},
		{four, 2, 1, "[2 3]"},
		{four, 4, 3, "[3]"},
		{four, 3, 2, "[2]"}, // 4/3 = 1 CPU each, CPU 3 unused
		{odd, 2, 1, "[4 7]"},
		{odd, 5, 4, "[9]"},
		{four, 1, 0, "[]"},  // one rank: all of them, unbound
		{four, 5, 0, "[]"},  // oversubscribed
		{four, 2, 2, "[]"},  // out of range
		{four, 2, -1, "[]"}, // out of range
		{nil, 2, 0, "[]"},
	}
	for _, tc := range cases {
		if got := fmt.Sprint(bindCPUs(tc.allowed, tc.n, tc.i)); got != tc.want {
			t.Errorf("bindCPUs(%v, %d, %d) = %s; want %s", tc.allowed, tc.n, tc.i, got, tc.want)
		}
	}
}

func TestBindable(t *testing.T) {
	cases := []struct {
		cfg     Config
		environ []string
		want    bool
	}{
		{Config{Bind: true}, []string{"PATH=/bin"}, true},
		{Config{Bind: false}, nil, false},
		{Config{Bind: true, GOMAXPROCS: 2}, nil, false},
		{Config{Bind: true}, []string{"GOMAXPROCS=4"}, false},
		{Config{Bind: true}, []string{"GOMAXPROCSX=4"}, true},
	}
	for _, tc := range cases {
		if got := bindable(tc.cfg, tc.environ); got != tc.want {
			t.Errorf("bindable(%+v, %q) = %v; want %v", tc.cfg, tc.environ, got, tc.want)
		}
	}
}
