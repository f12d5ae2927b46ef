package node

import "testing"

func TestParseCPUs(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int
	}{
		{"", 3}, {"2", 2}, {"64", 64}, {"0", 3}, {"-1", 3}, {"x", 3}, {"2 ", 3}, {"9999999", 3}, {"1048576", 1 << 20},
	} {
		if got := parseCPUs(tc.v, 3); got != tc.want {
			t.Errorf("parseCPUs(%q, 3) = %d; want %d", tc.v, got, tc.want)
		}
	}
}
