// Package hostlist expands Slurm's compressed host and count lists: the
// node lists of SLURM_JOB_NODELIST and SLURM_STEP_NODELIST ("h[1-3]",
// "n[01-04,7],login") and the per-node counts of SLURM_TASKS_PER_NODE and
// SLURM_JOB_CPUS_PER_NODE ("2(x3),1").
//
// Invariants: expansion never panics, and never yields more than MaxHosts
// names (or counts), whatever the input (see the Fuzz targets); numeric
// ranges keep their zero padding ("n[08-10]" → n08 n09 n10), as Slurm
// writes them.
package hostlist

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxHosts bounds the names one list may expand to.
const MaxHosts = 1 << 16

// Expand expands a Slurm host list into its names, in order. Names are
// separated by commas outside brackets; each bracket holds comma-separated
// numbers or ranges LO-HI, and a name may hold several brackets (their
// product, leftmost varying slowest).
func Expand(list string) ([]string, error) {
	var out []string
	for _, item := range splitTop(list) {
		if item == "" {
			return nil, fmt.Errorf("hostlist %q: empty name (two commas in a row, or a comma at an end)", list)
		}
		names, err := expandOne(item, MaxHosts-len(out))
		if err != nil {
			return nil, fmt.Errorf("hostlist %q: %v", list, err)
		}
		out = append(out, names...)
	}
	return out, nil
}

// splitTop splits s at the commas outside brackets.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// expandOne expands one name with brackets, yielding at most limit names.
func expandOne(item string, limit int) ([]string, error) {
	open := strings.IndexByte(item, '[')
	if open < 0 {
		if strings.IndexByte(item, ']') >= 0 {
			return nil, fmt.Errorf("%q: ']' without '['", item)
		}
		if err := checkName(item); err != nil {
			return nil, err
		}
		if limit < 1 {
			return nil, fmt.Errorf("more than %d names", MaxHosts)
		}
		return []string{item}, nil
	}
	end := strings.IndexByte(item[open:], ']')
	if end < 0 {
		return nil, fmt.Errorf("%q: '[' without ']'", item)
	}
	end += open
	prefix, body, rest := item[:open], item[open+1:end], item[end+1:]
	if strings.IndexByte(prefix, ']') >= 0 || strings.IndexByte(body, '[') >= 0 {
		return nil, fmt.Errorf("%q: unbalanced brackets", item)
	}
	if err := checkName(prefix); err != nil && prefix != "" {
		return nil, err
	}
	nums, err := expandRanges(body, limit)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", item, err)
	}
	tails := []string{""}
	if rest != "" {
		if tails, err = expandOne(rest, limit); err != nil {
			return nil, err
		}
	}
	if len(nums)*len(tails) > limit {
		return nil, fmt.Errorf("more than %d names", MaxHosts)
	}
	out := make([]string, 0, len(nums)*len(tails))
	for _, n := range nums {
		for _, t := range tails {
			out = append(out, prefix+n+t)
		}
	}
	return out, nil
}

// expandRanges expands "1-3,07,10-11" into its numbers as text, keeping
// the zero padding of each range's low end.
func expandRanges(body string, limit int) ([]string, error) {
	var out []string
	for _, r := range strings.Split(body, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		if !digits(lo) || !digits(hi) {
			return nil, fmt.Errorf("range %q: want N or LO-HI with decimal numbers", r)
		}
		a, err1 := strconv.ParseUint(lo, 10, 32)
		b, err2 := strconv.ParseUint(hi, 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("range %q: number too large", r)
		}
		if b < a {
			return nil, fmt.Errorf("range %q: the high end is below the low end", r)
		}
		if b-a >= uint64(limit-len(out)) {
			return nil, fmt.Errorf("range %q: more than %d names", r, MaxHosts)
		}
		width := len(lo)
		for n := a; n <= b; n++ {
			s := strconv.FormatUint(n, 10)
			if len(s) < width {
				s = strings.Repeat("0", width-len(s)) + s
			}
			out = append(out, s)
		}
	}
	return out, nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkName accepts the characters of host names (letters, digits, '-',
// '.', '_').
func checkName(s string) error {
	if s == "" {
		return fmt.Errorf("empty name")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return fmt.Errorf("name %q: character %q; allowed: letters, digits, '-', '.', '_' and [ranges]", s, c)
		}
	}
	return nil
}

// ExpandCounts expands a Slurm count list such as "2(x3),1" (2, 2, 2, 1):
// comma-separated counts, each optionally followed by "(xR)" repeating it R
// times.
func ExpandCounts(list string) ([]int, error) {
	var out []int
	for _, item := range strings.Split(list, ",") {
		num, rep, hasRep := strings.Cut(item, "(x")
		times := uint64(1)
		if hasRep {
			r, ok := strings.CutSuffix(rep, ")")
			var err error
			if !ok || !digits(r) {
				return nil, fmt.Errorf("count list %q: item %q; want N or N(xR)", list, item)
			}
			if times, err = strconv.ParseUint(r, 10, 32); err != nil || times == 0 {
				return nil, fmt.Errorf("count list %q: repeat %q; want 1..%d", list, r, MaxHosts)
			}
		}
		if !digits(num) {
			return nil, fmt.Errorf("count list %q: item %q; want N or N(xR) with N a decimal number", list, item)
		}
		n, err := strconv.ParseUint(num, 10, 31)
		if err != nil {
			return nil, fmt.Errorf("count list %q: count %q too large", list, num)
		}
		if times > uint64(MaxHosts-len(out)) {
			return nil, fmt.Errorf("count list %q: more than %d counts", list, MaxHosts)
		}
		for range times {
			out = append(out, int(n))
		}
	}
	return out, nil
}
