package mca

import (
	"errors"
	"slices"
	"testing"
)

// FuzzParseSize: parseSize never panics; whatever it accepts is a
// non-negative size that formatSize writes back exactly; and every
// non-negative int64 survives formatSize then parseSize.
func FuzzParseSize(f *testing.F) {
	seeds := []string{
		"0", "4096", "64k", "64K", "1m", "1G", "007",
		"9223372036854775807", // MaxInt64
		"8589934591g",         // largest multiple of 1g
		"8589934592g",         // overflow
		"", "k", "-1", "+1", " 4k", "1.5k", "4kk", "4kb", "64q", "0x10",
	}
	for i, s := range seeds {
		f.Add(s, uint64(i)<<(i*3%64))
	}
	f.Fuzz(func(t *testing.T, s string, u uint64) {
		n, err := parseSize(s)
		if err == nil {
			if n < 0 {
				t.Fatalf("parseSize(%q) = %d; negative", s, n)
			}
			if back, err := parseSize(formatSize(n)); err != nil || back != n {
				t.Fatalf("parseSize(formatSize(%d)) = %d, %v (from %q)", n, back, err, s)
			}
		} else if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrRange) {
			t.Fatalf("parseSize(%q) error %v wraps neither ErrSyntax nor ErrRange", s, err)
		}
		m := int64(u >> 1)
		if back, err := parseSize(formatSize(m)); err != nil || back != m {
			t.Fatalf("parseSize(formatSize(%d)) = %d, %v", m, back, err)
		}
	})
}

// FuzzParamFile: parseParamFile never panics; a file that parses, written
// back with formatParamFile, parses to the same names and values.
func FuzzParamFile(f *testing.F) {
	seeds := []string{
		"btl = self,sm\n",
		"# comment only\n\n",
		"a=1\nb = 2 # trailing\n  c  =  x = y  \r\n",
		"no equals sign\n",
		" = empty name\n",
		"bad name = 1\n",
		"a = \"quoted # not really\"\n",
		"a=\rb=c\n",
		"\xff\xfe = \x00\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseParamFile("fuzz.conf", data)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || fe.Line < 1 || !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v is not a *FileError with a line, wrapping ErrSyntax", err)
			}
			return
		}
		again, err := parseParamFile("fuzz.conf", formatParamFile(entries))
		if err != nil {
			t.Fatalf("re-serialized file does not parse: %v\n%q", err, formatParamFile(entries))
		}
		same := slices.EqualFunc(entries, again, func(a, b fileEntry) bool { return a.name == b.name && a.value == b.value })
		if !same {
			t.Fatalf("round trip changed entries:\n%+v\n%+v", entries, again)
		}
	})
}

// FuzzDecode: Decode never panics on any input; what it accepts encodes and
// decodes to the same text.
func FuzzDecode(f *testing.F) {
	r := newTestRegistry(f)
	s, _, err := r.Resolve(Inputs{Flags: [][2]string{{"rndv_base_dir", "a;b,c%d"}, {"btl", "^tcp"}}})
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		s.Encode(),
		r.Defaults().Encode(),
		"gorun-mca/1",
		"gorun-mca/1;btl,flag,sm",
		"gorun-mca/1;btl,flag,sm;btl,flag,sm", // duplicate
		"gorun-mca/1;btl_sm_eager_limit,file%3A%2Fx,64q",
		"gorun-mca/1;btl,env%3AGORUN_MCA_btl,%5Esm",
		"gorun-mca/1;x%zz,flag,1", // bad escape
		"gorun-mca/2",
		"",
	}
	for _, seed := range seeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, enc string) {
		d, _, err := r.Decode(enc)
		if err != nil {
			return
		}
		d2, _, err := r.Decode(d.Encode())
		if err != nil {
			t.Fatalf("Decode(Encode()) of an accepted input: %v", err)
		}
		if d2.Encode() != d.Encode() {
			t.Fatalf("round trip differs:\n%s\n%s", d.Encode(), d2.Encode())
		}
	})
}
