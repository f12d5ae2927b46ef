package pmi

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestParseV1(t *testing.T) {
	tests := []struct {
		in   string
		want Msg
		err  bool
	}{
		{"cmd=init pmi_version=1 pmi_subversion=1\n", NewMsg("init", "pmi_version", "1", "pmi_subversion", "1"), false},
		{"cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n",
			NewMsg("maxes", "rc", "0", "kvsname_max", "256", "keylen_max", "64", "vallen_max", "1024"), false},
		{"cmd=get_result rc=0 value=(vector,(0,2,1))\n", NewMsg("get_result", "rc", "0", "value", "(vector,(0,2,1))"), false},
		{"cmd=put kvsname=8.0 key=card-0 value=a=b\n", NewMsg("put", "kvsname", "8.0", "key", "card-0", "value", "a=b"), false},
		{"cmd=barrier_in", NewMsg("barrier_in"), false},
		{"  cmd=x   a=1  b=\r\n", NewMsg("x", "a", "1", "b", ""), false},
		{"", Msg{}, true},
		{"\n", Msg{}, true},
		{"rc=0 cmd=x\n", Msg{}, true},
		{"cmd= a=1\n", Msg{}, true},
		{"cmd=x junk\n", Msg{}, true},
		{"cmd=x =1\n", Msg{}, true},
		{"cmd=x a=\x01\n", Msg{}, true},
	}
	for _, tt := range tests {
		got, err := ParseV1([]byte(tt.in))
		if (err != nil) != tt.err {
			t.Errorf("ParseV1(%q) error %v; want error %v", tt.in, err, tt.err)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("ParseV1(%q) error %v does not wrap ErrMalformed", tt.in, err)
			}
			continue
		}
		if !equalMsg(got, tt.want) {
			t.Errorf("ParseV1(%q) = %+v; want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseV2(t *testing.T) {
	tests := []struct {
		in   string
		want Msg
		err  bool
	}{
		{"cmd=fullinit;pmijobid=7.0;pmirank=0;threaded=FALSE;",
			NewMsg("fullinit", "pmijobid", "7.0", "pmirank", "0", "threaded", "FALSE"), false},
		{"cmd=kvs-get-response;rc=0;found=TRUE;value=10.77.0.2:39793;",
			NewMsg("kvs-get-response", "rc", "0", "found", "TRUE", "value", "10.77.0.2:39793"), false},
		{"cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,2,1));",
			NewMsg("info-getjobattr-response", "rc", "0", "found", "TRUE", "value", "(vector,(0,2,1))"), false},
		{"cmd=x;v=a;;b;", NewMsg("x", "v", "a;b"), false},
		{"cmd=x;v=;;;", NewMsg("x", "v", ";"), false},
		{"cmd=x;v=;w=1", NewMsg("x", "v", "", "w", "1"), false},
		{"cmd=x;v=a b=c;", NewMsg("x", "v", "a b=c"), false},
		{"cmd=kvs-fence;", NewMsg("kvs-fence"), false},
		{"cmd=kvs-fence", NewMsg("kvs-fence"), false},
		{"", Msg{}, true},
		{";", Msg{}, true},
		{"rc=0;cmd=x;", Msg{}, true},
		{"cmd=;", Msg{}, true},
		{"cmd=x;novalue;", Msg{}, true},
		{"cmd=x;=1;", Msg{}, true},
		{"cmd=x;v=a\nb;", Msg{}, true},
	}
	for _, tt := range tests {
		got, err := ParseV2([]byte(tt.in))
		if (err != nil) != tt.err {
			t.Errorf("ParseV2(%q) error %v; want error %v", tt.in, err, tt.err)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("ParseV2(%q) error %v does not wrap ErrMalformed", tt.in, err)
			}
			continue
		}
		if !equalMsg(got, tt.want) {
			t.Errorf("ParseV2(%q) = %+v; want %+v", tt.in, got, tt.want)
		}
	}
}

func TestAppendV2Transcript(t *testing.T) {
	// Captured from Slurm (MULTINODE.md §3).
	tests := []struct {
		m    Msg
		want string
	}{
		{NewMsg("fullinit", "pmijobid", "7.0", "pmirank", "0", "threaded", "FALSE"), "51    cmd=fullinit;pmijobid=7.0;pmirank=0;threaded=FALSE;"},
		{NewMsg("job-getid"), "14    cmd=job-getid;"},
		{NewMsg("kvs-put", "key", "card-0", "value", "10.77.0.1:42489"), "45    cmd=kvs-put;key=card-0;value=10.77.0.1:42489;"},
		{NewMsg("kvs-fence"), "14    cmd=kvs-fence;"},
		{NewMsg("kvs-get", "jobid", "7.0", "srcid", "-1", "key", "card-1"), "42    cmd=kvs-get;jobid=7.0;srcid=-1;key=card-1;"},
		{NewMsg("finalize"), "13    cmd=finalize;"},
		{NewMsg("x", "v", "a;b"), "13    cmd=x;v=a;;b;"},
	}
	for _, tt := range tests {
		got, err := AppendV2(nil, tt.m)
		if err != nil || string(got) != tt.want {
			t.Errorf("AppendV2(%v) = %q, %v; want %q", tt.m, got, err, tt.want)
		}
	}
}

func TestAppendV1(t *testing.T) {
	got, err := AppendV1([]byte("x"), NewMsg("put", "kvsname", "8.0", "key", "card-0", "value", "10.77.0.1:38947"))
	if want := "xcmd=put kvsname=8.0 key=card-0 value=10.77.0.1:38947\n"; err != nil || string(got) != want {
		t.Errorf("AppendV1 = %q, %v; want %q", got, err, want)
	}
	bad := []Msg{
		{Cmd: ""},
		{Cmd: "a b"},
		NewMsg("put", "value", "has space"),
		NewMsg("put", "k=", "v"),
		NewMsg("put", "", "v"),
		NewMsg("put", "v", "new\nline"),
		NewMsg("put", "v", strings.Repeat("x", MaxLineV1)),
	}
	for _, m := range bad {
		if got, err := AppendV1([]byte("keep"), m); err == nil || string(got) != "keep" {
			t.Errorf("AppendV1(%q) = %q, %v; want an error and dst unchanged", m.String(), got, err)
		}
	}
	if _, err := AppendV2(nil, NewMsg("put", "v", "nul\x00")); err == nil {
		t.Errorf("AppendV2 accepted a NUL in a value")
	}
	if got, err := AppendV2([]byte("keep"), NewMsg("put", "v", strings.Repeat("x", MaxBodyV2))); err == nil || string(got) != "keep" {
		t.Errorf("AppendV2 of an oversized body = %d bytes, %v; want an error and dst unchanged", len(got), err)
	}
}

func TestParseLenV2(t *testing.T) {
	for in, want := range map[string]int{"51    ": 51, "     0": 0, "999999": 999999, "  12  ": 12} {
		if n, err := ParseLenV2([]byte(in)); err != nil || n != want {
			t.Errorf("ParseLenV2(%q) = %d, %v; want %d", in, n, err, want)
		}
	}
	for _, in := range []string{"      ", "5 1   ", "-1    ", "+1    ", "abcdef", "12345", "1234567"} {
		if _, err := ParseLenV2([]byte(in)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseLenV2(%q) error %v; want ErrMalformed", in, err)
		}
	}
}

func TestReadWriteStream(t *testing.T) {
	// The init line in PMI-1 form, then PMI-2 framing on the same reader,
	// as a server sees a PMI-2 client.
	var buf bytes.Buffer
	if err := WriteV1(&buf, NewMsg("init", "pmi_version", "2", "pmi_subversion", "0")); err != nil {
		t.Fatal(err)
	}
	msgs := []Msg{NewMsg("fullinit", "pmijobid", "7.0", "pmirank", "0", "threaded", "FALSE"), NewMsg("kvs-fence"), NewMsg("x", "v", ";;")}
	for _, m := range msgs {
		if err := WriteV2(&buf, m); err != nil {
			t.Fatal(err)
		}
	}
	r := bufio.NewReader(&buf)
	if m, err := ReadV1(r); err != nil || m.Cmd != "init" {
		t.Fatalf("ReadV1 = %v, %v", m, err)
	}
	for _, want := range msgs {
		m, err := ReadV2(r)
		if err != nil || !equalMsg(m, want) {
			t.Fatalf("ReadV2 = %v, %v; want %v", m, err, want)
		}
	}
	if _, err := ReadV2(r); err != io.EOF {
		t.Errorf("ReadV2 at the end = %v; want io.EOF", err)
	}
	if _, err := ReadV1(bufio.NewReader(strings.NewReader(""))); err != io.EOF {
		t.Errorf("ReadV1 of nothing = %v; want io.EOF", err)
	}
	if _, err := ReadV1(bufio.NewReader(strings.NewReader("cmd=x"))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadV1 of a cut line = %v; want io.ErrUnexpectedEOF", err)
	}
	if _, err := ReadV2(strings.NewReader("20    cmd=x;")); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadV2 of a cut body = %v; want io.ErrUnexpectedEOF", err)
	}
	if _, err := ReadV2(strings.NewReader("20")); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadV2 of a cut length = %v; want io.ErrUnexpectedEOF", err)
	}
	long := "cmd=x v=" + strings.Repeat("y", MaxLineV1) + "\n"
	if _, err := ReadV1(bufio.NewReader(strings.NewReader(long))); !errors.Is(err, ErrMalformed) {
		t.Errorf("ReadV1 of a %d-byte line = %v; want ErrMalformed", len(long), err)
	}
}

func TestMsgAccessors(t *testing.T) {
	m := NewMsg("r", "rc", "0", "size", "x", "rc", "1")
	if v, ok := m.Get("rc"); !ok || v != "0" {
		t.Errorf("Get(rc) = %q, %v; want the first, 0", v, ok)
	}
	if n, err := m.Int("rc"); err != nil || n != 0 {
		t.Errorf("Int(rc) = %d, %v", n, err)
	}
	if _, err := m.Int("size"); err == nil || !strings.Contains(err.Error(), "size") {
		t.Errorf("Int(size) error %v; want one naming size", err)
	}
	if _, err := m.Int("missing"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Int(missing) error %v; want one naming the key", err)
	}
	if s := m.String(); s != "cmd=r rc=0 size=x rc=1" {
		t.Errorf("String() = %q", s)
	}
}

func equalMsg(a, b Msg) bool {
	if len(a.Args) == 0 && len(b.Args) == 0 {
		return a.Cmd == b.Cmd
	}
	return reflect.DeepEqual(a, b)
}
