package main

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr string
	}{
		{"0", 0, ""},
		{"4096", 4096, ""},
		{"64k", 65536, ""},
		{"64K", 65536, ""},
		{"4m", 4 << 20, ""},
		{"4M", 4 << 20, ""},
		{"1g", 1 << 30, ""},
		{"007", 7, ""},
		{"", 0, "want a whole number"},
		{"k", 0, "want a whole number"},
		{"-1", 0, "want a whole number"},
		{"1.5m", 0, "want a whole number"},
		{"64q", 0, "want a whole number"},
		{"4 m", 0, "want a whole number"},
		{"2g", 0, "larger than the 1g allowed"},
		{"1073741825", 0, "larger than the 1g allowed"},
		{"99999999999999999999999", 0, "larger than the 1g allowed"},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.in) {
				t.Errorf("parseSize(%q) = %d, %v; want an error naming the input and saying %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, nil", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		in   int
		want string
	}{
		{0, "0"}, {1, "1"}, {1000, "1000"}, {1024, "1k"}, {1536, "1536"},
		{3 << 10, "3k"}, {1 << 20, "1m"}, {4 << 20, "4m"}, {1<<20 + 1<<10, "1025k"}, {1 << 30, "1g"},
	}
	for _, tt := range tests {
		if got := formatSize(tt.in); got != tt.want {
			t.Errorf("formatSize(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseSizeRange(t *testing.T) {
	tests := []struct {
		in             string
		defMin         int
		wantLo, wantHi int
		wantErr        string
	}{
		{"4m", 0, 0, 4 << 20, ""},
		{"4m", 1, 1, 4 << 20, ""},
		{"8:64k", 0, 8, 64 << 10, ""},
		{"0:0", 1, 0, 0, ""},
		{"64k:8", 0, 0, 0, "minimum 65536 is above maximum 8"},
		{"x:8", 0, 0, 0, "minimum"},
		{"8:", 0, 0, 0, "maximum"},
		{"", 0, 0, 0, "maximum"},
	}
	for _, tt := range tests {
		lo, hi, err := parseSizeRange(tt.in, tt.defMin)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseSizeRange(%q, %d) = %d, %d, %v; want error with %q", tt.in, tt.defMin, lo, hi, err, tt.wantErr)
			}
			continue
		}
		if err != nil || lo != tt.wantLo || hi != tt.wantHi {
			t.Errorf("parseSizeRange(%q, %d) = %d, %d, %v; want %d, %d, nil", tt.in, tt.defMin, lo, hi, err, tt.wantLo, tt.wantHi)
		}
	}
}

// FuzzParseSize: parseSize never panics, accepts only 0..maxSize, and
// formatSize writes back what it read (the oracle is the round trip).
func FuzzParseSize(f *testing.F) {
	for _, seed := range []string{
		"0", "1", "4096", "64k", "64K", "4m", "1g", // valid
		"", "k", "-1", "+1", "1.5m", "0x10", // not a size
		"2g", "1073741825", "18446744073709551617", // too large, or overflow uint64
		"1kk", "\x00", "９", // odd bytes, a full-width digit
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		if n < 0 || n > maxSize {
			t.Fatalf("parseSize(%q) = %d, outside 0..%d", s, n, maxSize)
		}
		back, err := parseSize(formatSize(n))
		if err != nil || back != n {
			t.Fatalf("parseSize(formatSize(%d)=%q) = %d, %v; want %d", n, formatSize(n), back, err, n)
		}
	})
}
