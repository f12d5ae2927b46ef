package pmi

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzParseV1: never panics; whatever parses re-encodes and parses back to
// the same message.
func FuzzParseV1(f *testing.F) {
	for _, s := range []string{
		"cmd=init pmi_version=1 pmi_subversion=1\n",
		"cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n",
		"cmd=get_result rc=0 value=(vector,(0,2,1))\n",
		"cmd=put kvsname=8.0 key=card-0 value=a=b",
		"  cmd=x   a=1  b=\r\n", "rc=0", "cmd=", "=", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ParseV1(in)
		if err != nil {
			return
		}
		enc, err := AppendV1(nil, m)
		if err != nil {
			t.Fatalf("ParseV1(%q) = %v, which AppendV1 refuses: %v", in, m, err)
		}
		m2, err := ReadV1(bufio.NewReader(bytes.NewReader(enc)))
		if err != nil || !equalMsg(m, m2) {
			t.Fatalf("round trip of %q: %v -> %q -> %v, %v", in, m, enc, m2, err)
		}
	})
}

// FuzzParseV2: never panics; whatever parses re-encodes and reads back to
// the same message.
func FuzzParseV2(f *testing.F) {
	for _, s := range []string{
		"cmd=fullinit;pmijobid=7.0;pmirank=0;threaded=FALSE;",
		"cmd=kvs-get-response;rc=0;found=TRUE;value=10.77.0.2:39793;",
		"cmd=x;v=a;;b;", "cmd=x;v=;;;", "cmd=x;v=;w=1", "cmd=;", ";;", "=;", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ParseV2(in)
		if err != nil {
			return
		}
		enc, err := AppendV2(nil, m)
		if err != nil {
			t.Fatalf("ParseV2(%q) = %v, which AppendV2 refuses: %v", in, m, err)
		}
		m2, err := ReadV2(bytes.NewReader(enc))
		if err != nil || !equalMsg(m, m2) {
			t.Fatalf("round trip of %q: %v -> %q -> %v, %v", in, m, enc, m2, err)
		}
	})
}

// FuzzReadV2 feeds whole streams (length fields included) to ReadV2.
func FuzzReadV2(f *testing.F) {
	for _, s := range []string{"14    cmd=kvs-fence;", "51    cmd=fullinit;pmijobid=7.0;pmirank=0;threaded=FALSE;", "999999", "0     ", "1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for i := 0; i < 4; i++ {
			if _, err := ReadV2(r); err != nil {
				return
			}
		}
	})
}
