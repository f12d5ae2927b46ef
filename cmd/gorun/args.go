package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/gorun-mpi/gorun/launcher"
)

const usageLine = "usage: gorun -np N [--host H[:SLOTS],... | --hostfile FILE] [--mca NAME VALUE]... [--tag-output] [--timeout D] PROGRAM [ARGS...]\n"

const usage = usageLine + `
Starts N ranks of PROGRAM on this machine, or on the hosts --host or
--hostfile name (inside a Slurm allocation, without them: on the
allocation's nodes, through srun). PROGRAM is an executable, or a Go
package directory or .go file that gorun builds first.

  -np, -n N             number of ranks (1..4096)
  --mca NAME VALUE      set an MCA parameter (repeatable; see gorun-info)
  --tag-output          prefix every output line with "[RANK] "
  --timeout D           stop the job after D (a Go duration like 90s, or seconds)
  --host H[:SLOTS],...  run on these hosts, filling each one's slots in order
                        (SLOTS defaults to the host's cores); others than this
                        machine are reached with ssh (see plm_ssh_agent)
  --hostfile FILE       the same, from a file of "HOST [slots=N]" lines
  --preload             copy PROGRAM to the remote hosts (when it is an
                        executable that does not exist there)
  -h, --help            show this help
`

// longOpts are the options accepted with one dash as well, as Open MPI does.
var longOpts = []string{"np", "mca", "tag-output", "timeout", "help", "host", "hostfile", "preload"}

// parseArgs turns gorun's arguments into launcher options. help reports a
// request for the usage text.
func parseArgs(args []string) (opts launcher.Options, help bool, err error) {
	var rest []string
	if opts.MCA, rest, err = prescan(args); err != nil {
		return opts, false, err
	}
	fs := pflag.NewFlagSet("gorun", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	fs.SetOutput(io.Discard)
	np := fs.IntP("np", "n", 0, "")
	tag := fs.Bool("tag-output", false, "")
	timeout := fs.String("timeout", "", "")
	hostList := fs.String("host", "", "")
	hostfile := fs.String("hostfile", "", "")
	preload := fs.Bool("preload", false, "")
	fs.BoolVarP(&help, "help", "h", false, "")
	if err := fs.Parse(rest); err != nil {
		return opts, false, errors.New(clipN(err.Error(), 300)) // pflag quotes the argument whole
	}
	if help {
		return opts, true, nil
	}
	if !fs.Changed("np") {
		return opts, false, errors.New("-np N is required")
	}
	opts.NP, opts.TagOutput, opts.Preload = *np, *tag, *preload
	if fs.Changed("timeout") {
		if opts.Timeout, err = parseTimeout(*timeout); err != nil {
			return opts, false, err
		}
	}
	if opts.Hosts, err = parseHostOptions(fs.Changed("host"), *hostList, fs.Changed("hostfile"), *hostfile); err != nil {
		return opts, false, err
	}
	if fs.NArg() == 0 {
		return opts, false, errors.New("missing PROGRAM")
	}
	opts.Program = fs.Arg(0)
	if fs.NArg() > 1 {
		opts.Args = fs.Args()[1:]
	}
	return opts, false, nil
}

// prescan takes every --mca NAME VALUE out of args, in order, and returns
// the rest for pflag, with one-dash long options spelled with two dashes;
// it stops at PROGRAM. pflag cannot take an option with two values, nor
// "-np" (it would read -n with value "p").
func prescan(args []string) (mca [][2]string, rest []string, err error) {
	i := 0
scan:
	for i < len(args) {
		a := args[i]
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
			name, _, _ := strings.Cut(a[1:], "=")
			if contains(longOpts, name) {
				a = "-" + a
			}
		}
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case a == "--":
			break scan
		case name == "--mca":
			if hasValue || i+2 >= len(args) {
				return nil, nil, errors.New("--mca takes two arguments: --mca NAME VALUE")
			}
			mca = append(mca, [2]string{args[i+1], args[i+2]})
			i += 3
		case (name == "--np" || name == "-n" || name == "--timeout" || name == "--host" || name == "--hostfile") && !hasValue:
			rest = append(rest, a)
			if i+1 < len(args) {
				rest = append(rest, args[i+1])
			}
			i += 2
		case strings.HasPrefix(a, "-") && a != "-":
			rest = append(rest, a)
			i++
		default:
			break scan // PROGRAM
		}
	}
	if i < len(args) {
		rest = append(rest, args[i:]...)
	}
	return mca, rest, nil
}

// parseHostOptions reads --host or --hostfile, whichever was given (nil
// hosts: neither, everything runs here).
func parseHostOptions(hasList bool, list string, hasFile bool, file string) ([]launcher.Host, error) {
	switch {
	case hasList && hasFile:
		return nil, errors.New("--host and --hostfile: give one of them, not both")
	case hasList:
		return launcher.ParseHosts(list)
	case hasFile:
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--hostfile: %v", err)
		}
		return launcher.ParseHostfile(file, data)
	}
	return nil, nil
}

// parseTimeout reads a Go duration ("90s", "2m") or bare seconds ("30",
// "1.5"). It must be positive.
func parseTimeout(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		secs, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || math.IsNaN(secs) || math.IsInf(secs, 0) || strings.ContainsAny(s, "xXpPeEiInN_") {
			return 0, fmt.Errorf("--timeout %q: want a Go duration (90s, 2m) or a number of seconds", clip(s))
		}
		if secs > float64(math.MaxInt64/int64(time.Second)) {
			return 0, fmt.Errorf("--timeout %q: too long; at most %v", clip(s), time.Duration(math.MaxInt64))
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d <= 0 {
		return 0, fmt.Errorf("--timeout %q: must be positive", clip(s))
	}
	return d, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// clip shortens what the user typed for an error message.
func clip(s string) string { return clipN(s, 80) }

// clipN cuts s after max bytes.
func clipN(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
