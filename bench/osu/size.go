package main

import (
	"fmt"
	"strconv"
	"strings"
)

// maxSize bounds every message size the benchmark accepts (1 GiB): two
// buffers of that size are allocated up front, and the counts in int32-sized
// MPI benchmarks stop there too.
const maxSize = 1 << 30

// parseSize reads a byte count: plain digits, or digits followed by one of
// k, m, g (either case), powers of 1024, as gorun's MCA sizes are written
// ("64k" = "64K" = 65536). The result is in 0..maxSize.
func parseSize(s string) (int, error) {
	num, mult := s, 1
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			num, mult = s[:n-1], 1<<10
		case 'm', 'M':
			num, mult = s[:n-1], 1<<20
		case 'g', 'G':
			num, mult = s[:n-1], 1<<30
		}
	}
	if num == "" || strings.TrimLeft(num, "0123456789") != "" {
		return 0, fmt.Errorf("size %q: want a whole number of bytes, optionally with a k, m or g suffix", s)
	}
	v, err := strconv.ParseUint(num, 10, 64)
	if err != nil || v > maxSize/uint64(mult) {
		return 0, fmt.Errorf("size %q: larger than the 1g allowed", s)
	}
	return int(v) * mult, nil
}

// formatSize writes n the shortest way parseSize reads back: with the largest
// k/m/g suffix that divides it exactly, else in plain bytes.
func formatSize(n int) string {
	switch {
	case n != 0 && n%(1<<30) == 0:
		return strconv.Itoa(n>>30) + "g"
	case n != 0 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "m"
	case n != 0 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "k"
	}
	return strconv.Itoa(n)
}

// parseSizeRange reads OSU's -m argument: "MAX" or "MIN:MAX". With MAX alone
// the minimum is defMin. MIN must not exceed MAX.
func parseSizeRange(s string, defMin int) (lo, hi int, err error) {
	lo = defMin
	minS, maxS, hasMin := strings.Cut(s, ":")
	if !hasMin {
		maxS = minS
	} else if lo, err = parseSize(minS); err != nil {
		return 0, 0, fmt.Errorf("message size range %q: minimum: %w", s, err)
	}
	if hi, err = parseSize(maxS); err != nil {
		return 0, 0, fmt.Errorf("message size range %q: maximum: %w", s, err)
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("message size range %q: minimum %d is above maximum %d", s, lo, hi)
	}
	return lo, hi, nil
}
