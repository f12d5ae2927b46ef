package hostlist

import (
	"reflect"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "h1", want: []string{"h1"}},
		{in: "h[1-3]", want: []string{"h1", "h2", "h3"}},
		{in: "h[1-3],login", want: []string{"h1", "h2", "h3", "login"}},
		{in: "n[01-03,7,10-11]", want: []string{"n01", "n02", "n03", "n7", "n10", "n11"}},
		{in: "n[08-10]", want: []string{"n08", "n09", "n10"}},
		{in: "r[1-2]-n[1-2]", want: []string{"r1-n1", "r1-n2", "r2-n1", "r2-n2"}},
		{in: "n[1-2].ib", want: []string{"n1.ib", "n2.ib"}},
		{in: "a,b[3],c", want: []string{"a", "b3", "c"}},
		{in: "", err: "empty name"},
		{in: "a,,b", err: "empty name"},
		{in: "h[1-3", err: "'[' without ']'"},
		{in: "h1-3]", err: "']' without '['"},
		{in: "h[3-1]", err: "high end is below"},
		{in: "h[a-b]", err: "want N or LO-HI"},
		{in: "h[]", err: "want N or LO-HI"},
		{in: "h[1-]", err: "want N or LO-HI"},
		{in: "h[0-99999999]", err: "more than"},
		{in: "h[1-300][1-300]", err: "more than"},
		{in: "h[99999999999]", err: "too large"},
		{in: "bad name", err: "character ' '"},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Expand(%q) = %q, %v; want an error containing %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestExpandCounts(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  string
	}{
		{in: "2", want: []int{2}},
		{in: "2(x3)", want: []int{2, 2, 2}},
		{in: "2(x3),1", want: []int{2, 2, 2, 1}},
		{in: "4,1(x2),3", want: []int{4, 1, 1, 3}},
		{in: "", err: "want N or N(xR)"},
		{in: "2(x0)", err: "repeat"},
		{in: "2(x3", err: "want N or N(xR)"},
		{in: "x", err: "want N or N(xR)"},
		{in: "-1", err: "want N or N(xR)"},
		{in: "1(x99999999)", err: "more than"},
		{in: "99999999999", err: "too large"},
	}
	for _, tt := range tests {
		got, err := ExpandCounts(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ExpandCounts(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ExpandCounts(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// FuzzExpand: no list panics or expands past MaxHosts; every name is
// non-empty and bracket-free.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"h[1-3],login", "n[01-03,7]", "r[1-2]-n[1-2]", "h[", "a,,b", "h[0-65535]", "[1-2][3-4]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := Expand(s)
		if err != nil {
			return
		}
		if len(names) == 0 || len(names) > MaxHosts {
			t.Fatalf("Expand(%q): %d names", s, len(names))
		}
		for _, n := range names {
			if n == "" || strings.ContainsAny(n, "[],") {
				t.Fatalf("Expand(%q): name %q", s, n)
			}
		}
	})
}

// FuzzExpandCounts: no list panics or expands past MaxHosts.
func FuzzExpandCounts(f *testing.F) {
	for _, s := range []string{"2(x3),1", "1", "2(x", "(x3)", "1(x65536)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		counts, err := ExpandCounts(s)
		if err == nil && (len(counts) == 0 || len(counts) > MaxHosts) {
			t.Fatalf("ExpandCounts(%q): %d counts", s, len(counts))
		}
		for _, c := range counts {
			if c < 0 {
				t.Fatalf("ExpandCounts(%q): negative count %d", s, c)
			}
		}
	})
}
