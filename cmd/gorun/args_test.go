package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/launcher"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args []string
		want launcher.Options
		err  string
	}{
		{args: []string{"-np", "4", "./prog"}, want: launcher.Options{NP: 4, Program: "./prog"}},
		{args: []string{"--np", "4", "./prog", "a", "-np", "9"}, want: launcher.Options{NP: 4, Program: "./prog", Args: []string{"a", "-np", "9"}}},
		{args: []string{"-n", "2", "prog"}, want: launcher.Options{NP: 2, Program: "prog"}},
		{args: []string{"-np=3", "prog"}, want: launcher.Options{NP: 3, Program: "prog"}},
		{args: []string{"--tag-output", "--mca", "btl", "self", "-np", "2", "--timeout", "90s", "--mca", "a_b_c", "x y", "prog", "--mca", "p", "q"},
			want: launcher.Options{NP: 2, TagOutput: true, Timeout: 90 * time.Second, MCA: [][2]string{{"btl", "self"}, {"a_b_c", "x y"}},
				Program: "prog", Args: []string{"--mca", "p", "q"}}},
		{args: []string{"-mca", "btl", "^sm", "-tag-output", "-timeout", "1.5", "-np", "1", "prog"},
			want: launcher.Options{NP: 1, TagOutput: true, Timeout: 1500 * time.Millisecond, MCA: [][2]string{{"btl", "^sm"}}, Program: "prog"}},
		{args: []string{"--mca", "btl", "--np", "-np", "1", "prog"}, // a value may look like an option
			want: launcher.Options{NP: 1, MCA: [][2]string{{"btl", "--np"}}, Program: "prog"}},
		{args: []string{"-np", "2", "--", "-prog", "x"}, want: launcher.Options{NP: 2, Program: "-prog", Args: []string{"x"}}},
		{args: []string{"-np", "0", "prog"}, want: launcher.Options{NP: 0, Program: "prog"}}, // the launcher rejects it
		{args: []string{"prog"}, err: "-np N is required"},
		{args: []string{"-np", "2"}, err: "missing PROGRAM"},
		{args: []string{"-np", "x", "prog"}, err: "invalid argument"},
		{args: []string{"-np"}, err: "needs an argument"},
		{args: []string{"-np", "2", "--mca", "btl"}, err: "--mca takes two arguments"},
		{args: []string{"-np", "2", "--mca=btl", "self", "prog"}, err: "--mca takes two arguments"},
		{args: []string{"-np", "2", "--timeout", "soon", "prog"}, err: `--timeout "soon"`},
		{args: []string{"-np", "2", "--bogus", "prog"}, err: "unknown flag: --bogus"},
		{args: []string{"-np", "4", "--host", "h1:2,h2", "--preload", "prog"},
			want: launcher.Options{NP: 4, Hosts: []launcher.Host{{Name: "h1", Slots: 2}, {Name: "h2"}}, Preload: true, Program: "prog"}},
		{args: []string{"-host=localhost", "-np", "1", "prog"}, want: launcher.Options{NP: 1, Hosts: []launcher.Host{{Name: "localhost"}}, Program: "prog"}},
		{args: []string{"-np", "2", "--host", "h1:0", "prog"}, err: `slots "0"`},
		{args: []string{"-np", "2", "--host", "h1,h1", "prog"}, err: "named twice"},
		{args: []string{"-np", "2", "--host", "a", "--hostfile", "f", "prog"}, err: "not both"},
		{args: []string{"-np", "2", "--hostfile", "/nonexistent/hf", "prog"}, err: "--hostfile: open /nonexistent/hf"},
	}
	for _, tt := range tests {
		got, help, err := parseArgs(tt.args)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseArgs(%q) = %+v, %v; want an error containing %q", tt.args, got, err, tt.err)
			}
			continue
		}
		if err != nil || help || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseArgs(%q) = %+v, help=%v, %v; want %+v", tt.args, got, help, err, tt.want)
		}
	}
	hf := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(hf, []byte("# two hosts\nh1 slots=2\nh2 slots=x\n"), 0o600)
	if _, _, err := parseArgs([]string{"-np", "2", "--hostfile", hf, "prog"}); err == nil || !strings.Contains(err.Error(), hf+":3: host h2") {
		t.Errorf("--hostfile with a bad line 3: %v; want an error naming %s:3", err, hf)
	}
	os.WriteFile(hf, []byte("h1 slots=2\nh2\n"), 0o600)
	if o, _, err := parseArgs([]string{"-np", "2", "--hostfile", hf, "prog"}); err != nil || !reflect.DeepEqual(o.Hosts, []launcher.Host{{Name: "h1", Slots: 2}, {Name: "h2"}}) {
		t.Errorf("--hostfile: %+v, %v", o.Hosts, err)
	}
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"-np", "2", "--help", "prog"}} {
		if _, help, err := parseArgs(args); !help || err != nil {
			t.Errorf("parseArgs(%q): help=%v, %v; want help", args, help, err)
		}
	}
}

func TestParseTimeout(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"90s", 90 * time.Second, true},
		{"2m", 2 * time.Minute, true},
		{"1m30s", 90 * time.Second, true},
		{"30", 30 * time.Second, true},
		{"0.25", 250 * time.Millisecond, true},
		{"0", 0, false},
		{"-5", 0, false},
		{"-1s", 0, false},
		{"", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"1e300", 0, false},
		{"99999999999999", 0, false},
		{"5 s", 0, false},
	}
	for _, tt := range tests {
		got, err := parseTimeout(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseTimeout(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// FuzzParseArgs: no command line panics; a parsed one has a program, and
// --mca pairs and program arguments come from the input.
func FuzzParseArgs(f *testing.F) {
	f.Add("-np\x004\x00./prog")
	f.Add("--mca\x00btl\x00self\x00-np=2\x00--tag-output\x00prog\x00a")
	f.Add("--mca\x00btl")                 // one value short
	f.Add("-np\x00--\x00--\x00x")         // "--" as a value
	f.Add("-n4\x00--timeout\x001e9\x00p") // huge timeout
	f.Add("-np\x002\x00-\x00x")           // "-" as PROGRAM
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		o, help, err := parseArgs(args)
		if err != nil || help {
			return
		}
		if o.Timeout < 0 {
			t.Fatalf("parseArgs(%q): negative timeout %v", args, o.Timeout)
		}
		if n := len(o.Args); n > len(args) || !reflect.DeepEqual(o.Args, args[len(args)-n:]) && n > 0 {
			t.Fatalf("parseArgs(%q): program args %q are not the tail of the command line", args, o.Args)
		}
	})
}

// TestErrorsQuoteLittle: a huge argument is cut in the error.
func TestErrorsQuoteLittle(t *testing.T) {
	huge := strings.Repeat("x", 100<<10)
	for _, args := range [][]string{
		{"--" + huge, "prog"}, {"-np", huge, "prog"}, {"-np", "1", "--timeout", huge, "prog"},
	} {
		_, _, err := parseArgs(args)
		if err == nil || len(err.Error()) > 400 {
			t.Errorf("parseArgs(%.20q...): error of %d bytes", args[0], len(fmt.Sprint(err)))
		}
	}
}
