package launcher

import (
	"os"
	"strings"
	"testing"
)

// A real /proc/PID/stat line with a command name holding ") (" and spaces.
const statLine = "4242 (a) (b c) S 1 4242 4242 0 -1 4194560 1062 0 0 0 3 1 0 0 20 0 1 0 987654 12345 678 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"

func TestParseStatStartTime(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		err  string
	}{
		{in: statLine, want: 987654},
		{in: "1 (x) R" + strings.Repeat(" 0", 18) + " 5", want: 5},
		{in: "1 (x) R" + strings.Repeat(" 0", 17), err: "fields"},
		{in: "1 x R 0", err: "no ')'"},
		{in: "1 (x) R" + strings.Repeat(" 0", 18) + " -5", err: "start time"},
		{in: "", err: "no ')'"},
	}
	for _, tt := range tests {
		got, err := parseStatStartTime([]byte(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseStatStartTime(%q) = %d, %v; want an error containing %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseStatStartTime(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestProcStartTimeOfSelf(t *testing.T) {
	start, err := procStartTime(os.Getpid())
	if err != nil || start == 0 {
		t.Fatalf("procStartTime(self) = %d, %v; want a positive start time", start, err)
	}
	if !(launcherRecord{Pid: os.Getpid(), Start: start}).alive() {
		t.Errorf("our own launcher record is not alive")
	}
	if (launcherRecord{Pid: os.Getpid(), Start: start + 1}).alive() {
		t.Errorf("a record with our pid but another start time (a reused pid) is alive")
	}
	if (launcherRecord{Pid: 1 << 30, Start: start}).alive() {
		t.Errorf("a record of a pid that cannot exist is alive")
	}
}

func TestParseLauncherRecord(t *testing.T) {
	good := launcherRecord{Pid: 77, Start: 123456}
	if got, err := parseLauncherRecord(formatLauncherRecord(good)); err != nil || got != good {
		t.Fatalf("round trip = %+v, %v; want %+v", got, err, good)
	}
	for _, in := range []string{
		"",
		"gorun-launcher 1\npid 77\nstart 123456", // no final newline
		"gorun-launcher 2\npid 77\nstart 123456\n",  // another version
		"gorun-launcher 1\npid 0\nstart 123456\n",   // pid 0
		"gorun-launcher 1\npid +7\nstart 123456\n",  // sign
		"gorun-launcher 1\npid 077\nstart 123456\n", // leading zero
		"gorun-launcher 1\npid 77\nstart -1\n",      // negative start
		"gorun-launcher 1\nstart 1\npid 77\n",       // order is fixed
		"gorun-launcher 1\npid 77\nstart 1\nx 1\n",  // extra line
		"gorun-launcher 1\npid 77\nstart 1e3\n",     // not decimal
	} {
		if got, err := parseLauncherRecord([]byte(in)); err == nil {
			t.Errorf("parseLauncherRecord(%q) = %+v, nil; want an error", in, got)
		}
	}
}

// FuzzParseLauncherRecord: no input panics; what parses formats back to
// the same bytes (the record has one spelling).
func FuzzParseLauncherRecord(f *testing.F) {
	f.Add([]byte("gorun-launcher 1\npid 77\nstart 123456\n"))
	f.Add([]byte("gorun-launcher 1\npid 99999999999999999999\nstart 1\n")) // int overflow
	f.Add([]byte("gorun-launcher 1\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseLauncherRecord(data)
		if err != nil {
			return
		}
		if out := formatLauncherRecord(r); string(out) != string(data) {
			t.Fatalf("parseLauncherRecord(%q) = %+v, which formats as %q", data, r, out)
		}
	})
}

// FuzzParseStatStartTime: no input panics.
func FuzzParseStatStartTime(f *testing.F) {
	f.Add([]byte(statLine))
	f.Add([]byte("1 ()) R"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseStatStartTime(data)
	})
}
