package mca

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// String returns the type's name as gorun-info shows it ("int", "size", ...).
func (t Type) String() string {
	switch t {
	case TypeInt:
		return "int"
	case TypeSize:
		return "size"
	case TypeBool:
		return "bool"
	case TypeString:
		return "string"
	case TypeEnum:
		return "enum"
	case TypeList:
		return "list"
	case TypeSelector:
		return "selector"
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

func (t Type) valid() bool { return t >= TypeInt && t <= TypeSelector }

// Size suffixes, powers of 1024.
const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// parseSize reads a size in bytes: decimal digits, optionally followed by
// exactly one suffix k, m or g (either case; powers of 1024, so "64k" =
// "64K" = 65536). It is strict on purpose: no sign, no spaces, no fraction,
// no "b"/"B" after the suffix, no second suffix ("", "-1", " 4k", "1.5k",
// "4kb", "4kk" and "64q" are all errors, wrapping ErrSyntax). A value that
// does not fit in an int64 wraps ErrRange.
func parseSize(s string) (int64, error) {
	digits, mult := s, int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			digits, mult = s[:n-1], kib
		case 'm', 'M':
			digits, mult = s[:n-1], mib
		case 'g', 'G':
			digits, mult = s[:n-1], gib
		}
	}
	if digits == "" {
		return 0, syntaxErr("invalid size")
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, syntaxErr("invalid size")
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, rangeErr("size overflows 63 bits")
	}
	return n * mult, nil
}

// formatSize writes n in the shortest exact form parseSize reads back: with
// the largest suffix that divides it ("64k", "1g"), else in plain bytes.
// parseSize(formatSize(n)) == n for every n >= 0. A negative n (never a
// valid size) is written in decimal.
func formatSize(n int64) string {
	switch {
	case n <= 0:
		return strconv.FormatInt(n, 10)
	case n%gib == 0:
		return strconv.FormatInt(n/gib, 10) + "g"
	case n%mib == 0:
		return strconv.FormatInt(n/mib, 10) + "m"
	case n%kib == 0:
		return strconv.FormatInt(n/kib, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// parseBool reads true/false/1/0/yes/no/on/off, in any case. Anything else
// wraps ErrSyntax.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, syntaxErr("invalid bool")
}

// value is one parsed, validated parameter value.
type value struct {
	raw     string   // as given; Encode writes it, Value shows it
	num     int64    // TypeInt, TypeSize
	b       bool     // TypeBool
	list    []string // TypeList: items; TypeSelector: component names, no duplicates
	exclude bool     // TypeSelector: list names the excluded components
}

// parseValue parses and validates raw for p. The error is a reason that
// unwraps to a sentinel; callers wrap it in a *ParamError. Warnings (only
// for a selector excluding an unknown component) do not stop anything.
func parseValue(p *Param, raw string) (value, []string, error) {
	v := value{raw: raw}
	switch p.Type {
	case TypeInt:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return v, nil, rangeErr("integer overflows 64 bits")
			}
			return v, nil, syntaxErr("invalid integer")
		}
		if !p.inRange(n) {
			return v, nil, rangeErr("out of range")
		}
		v.num = n
	case TypeSize:
		n, err := parseSize(raw)
		if err != nil {
			return v, nil, err
		}
		if !p.inRange(n) {
			return v, nil, rangeErr("out of range")
		}
		v.num = n
	case TypeBool:
		b, err := parseBool(raw)
		if err != nil {
			return v, nil, err
		}
		v.b = b
	case TypeString:
	case TypeEnum:
		if !slices.Contains(p.Allowed, raw) {
			for _, a := range p.Allowed {
				if strings.EqualFold(a, raw) {
					return v, nil, notAllowedErr("not allowed (values are case-sensitive: %q)", a)
				}
			}
			return v, nil, notAllowedErr("not allowed")
		}
	case TypeList:
		items, err := splitList(raw)
		if err != nil {
			return v, nil, err
		}
		v.list = items
	case TypeSelector:
		return parseSelector(p, raw)
	default:
		return v, nil, syntaxErr("parameter has unknown type %v", p.Type)
	}
	return v, nil, nil
}

// splitList splits a comma-separated list and trims every item. An empty
// (or all-blank) value is the empty list; an empty item is an error.
func splitList(raw string) ([]string, error) {
	if strings.TrimSpace(raw) == "" {
		return []string{}, nil
	}
	items := strings.Split(raw, ",")
	for i, it := range items {
		items[i] = strings.TrimSpace(it)
		if items[i] == "" {
			return nil, syntaxErr("empty item %d in list", i+1)
		}
	}
	return items, nil
}

// parseSelector reads "a,b" (use exactly these components) or "^a,b" (use
// every known component but these). "^" applies to the whole list and may
// appear only first. Unknown components are an error in an include list and
// only a warning in an exclude list, so "^tcp" works without a tcp component.
func parseSelector(p *Param, raw string) (value, []string, error) {
	v := value{raw: raw}
	body := strings.TrimSpace(raw)
	if strings.HasPrefix(body, "^") {
		v.exclude = true
		body = strings.TrimSpace(body[1:])
	}
	if body == "" {
		if v.exclude {
			return v, nil, syntaxErr("empty exclude list")
		}
		return v, nil, syntaxErr("empty include list")
	}
	items, err := splitList(body)
	if err != nil {
		return v, nil, err
	}
	var warns []string
	for _, it := range items {
		if strings.HasPrefix(it, "^") {
			return v, nil, syntaxErr(`mixes include and exclude ("^" may only start the value, and applies to the whole list)`)
		}
		if slices.Contains(v.list, it) {
			continue
		}
		if !slices.Contains(p.Allowed, it) {
			if !v.exclude {
				return v, nil, notAllowedErr("unknown component %q", clip(it))
			}
			warns = append(warns, fmt.Sprintf("excludes unknown component %q (known: %s); ignored",
				clip(it), strings.Join(p.Allowed, ", ")))
		}
		v.list = append(v.list, it)
	}
	return v, warns, nil
}

// inRange reports whether n lies in Min..Max (Max == 0: no upper bound).
func (p *Param) inRange(n int64) bool {
	return n >= p.Min && (p.Max == 0 || n <= p.Max)
}

// allowedText says in words what p accepts; ParamError and gorun-info show it.
func allowedText(p *Param) string {
	switch p.Type {
	case TypeInt:
		if p.Min == math.MinInt64 && p.Max == 0 {
			return "an integer"
		}
		return "an integer, " + rangeText(p, func(n int64) string { return strconv.FormatInt(n, 10) })
	case TypeSize:
		return "bytes or a k/m/g suffix (e.g. 4096, 64k, 1m), " + rangeText(p, formatSize)
	case TypeBool:
		return "true, false, 1, 0, yes, no, on, off (any case)"
	case TypeString:
		return "any string"
	case TypeEnum:
		return "one of " + strings.Join(p.Allowed, ", ")
	case TypeList:
		return "comma-separated items, none empty"
	case TypeSelector:
		return "comma-separated components from " + strings.Join(p.Allowed, ", ") +
			`, or "^" then the components to exclude`
	}
	return ""
}

func rangeText(p *Param, format func(int64) string) string {
	if p.Max == 0 {
		return format(p.Min) + " or more"
	}
	return format(p.Min) + ".." + format(p.Max)
}
