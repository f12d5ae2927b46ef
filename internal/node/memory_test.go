package node

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestParseLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1073741824\n", 1 << 30, true},
		{"max\n", 0, false},
		{"9223372036854771712\n", 9223372036854771712, true},
		{"", 0, false}, {"-1", 0, false}, {"0", 0, false}, {"12k", 0, false},
	} {
		got, ok := parseLimit(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseLimit(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseCgroupLine(t *testing.T) {
	for _, tc := range []struct {
		in          string
		v2, mem, ok bool
		p           string
	}{
		{"0::/user.slice/a.scope", true, false, true, "/user.slice/a.scope"},
		{"4:memory:/process_api/x", false, true, true, "/process_api/x"},
		{"7:cpu,memory:/k", false, true, true, "/k"},
		{"1:cpu:/", false, false, true, "/"},
		{"garbage", false, false, false, ""},
		{"0::relative", false, false, false, ""},
	} {
		v2, mem, p, ok := parseCgroupLine(tc.in)
		if v2 != tc.v2 || mem != tc.mem || ok != tc.ok || p != tc.p {
			t.Errorf("parseCgroupLine(%q) = %v %v %q %v; want %v %v %q %v", tc.in, v2, mem, p, ok, tc.v2, tc.mem, tc.p, tc.ok)
		}
	}
}

func TestCgroupLimit(t *testing.T) {
	root := fstest.MapFS{
		"a/memory.max":                       {Data: []byte("max\n")},
		"a/b/memory.max":                     {Data: []byte("2147483648\n")},
		"a/b/c/memory.max":                   {Data: []byte("max\n")},
		"memory/job/memory.limit_in_bytes":   {Data: []byte("1073741824\n")},
		"memory/job/x/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")},
	}
	for _, tc := range []struct {
		name, self string
		want       int64
	}{
		{"v2, an ancestor's limit", "0::/a/b/c\n", 2 << 30},
		{"v2, none", "0::/a\n", 0},
		{"v1, the parent's limit is less", "4:memory:/job/x\n1:cpu:/\n", 1 << 30},
		{"both: the least", "4:memory:/job\n0::/a/b/c\n", 1 << 30},
		{"no such group", "0::/nowhere\n", 0},
		{"garbage", "garbage\n", 0},
	} {
		if got := cgroupLimit(strings.NewReader(tc.self), root); got != tc.want {
			t.Errorf("%s: cgroupLimit = %d; want %d", tc.name, got, tc.want)
		}
	}
}

func TestMemory(t *testing.T) {
	if m := Memory(); m <= 0 {
		t.Errorf("Memory() = %d; want the machine's RAM or its cgroup's limit", m)
	}
}

func FuzzCgroupLimit(f *testing.F) {
	f.Add("0::/a/b\n4:memory:/job\n", "123\n")
	f.Add("garbage", "max")
	f.Fuzz(func(t *testing.T, self, limit string) {
		root := fstest.MapFS{"a/b/memory.max": {Data: []byte(limit)}, "memory/job/memory.limit_in_bytes": {Data: []byte(limit)}}
		if n := cgroupLimit(strings.NewReader(self), root); n < 0 {
			t.Fatalf("cgroupLimit = %d", n)
		}
	})
}
