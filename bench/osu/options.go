package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// options is a parsed command line.
type options struct {
	mode      Mode
	minSize   int // first size of the sweep
	maxSize   int // last size of the sweep is the largest power-of-two step <= maxSize
	iters     int // timed iterations per size; 0 = the schedule (schedule.go)
	warmup    int // untimed iterations per size, if warmupSet; else the schedule
	warmupSet bool
	rounds    int      // ring and shift rounds
	exact     bool     // OSU's own bw counts instead of bench.c's longer ones
	csv       bool     // print CSV instead of OSU's text format
	plot      string   // .svg or .png file to draw into, "" = none
	overlays  []string // CSV (or OSU text) files drawn on the same plot
	label     string   // legend of this run on the plot
}

const usageHead = `usage: gorun -np 2 osu MODE [N] [flags]
       osu plot --overlay FILE [--overlay FILE]... --plot FILE.svg|.png

MODE: lat (alias latency), bw, bibw, mr, goroutine (2 ranks); multi_lat (an
even number of ranks); ring, shift, barrier, and the collectives allreduce,
reduce, bcast, allgather, alltoall (any number). N is the largest message
size of a sweep (like -m N), or the number of rounds of ring, shift, barrier
and goroutine (like -r N). goroutine: rank 1's goroutines around a blocked
Recv (the 8-byte ping-pong answered directly and through a receiver
goroutine, a CPU-bound goroutine's speed while another one waits in
Recv, and how late a 1 ms sleep ends while another one sleeps in Recv).

flags:
`

// newFlagSet declares the flags into o and returns the set, which writes its
// own messages nowhere (parseArgs reports them).
func newFlagSet(o *options, sizeRange *string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("osu", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVarP(sizeRange, "message-size", "m", "",
		"sizes to sweep, `[MIN:]MAX` in bytes or with k/m/g (default 0:4m for latencies, 1:4m for bandwidths)")
	fs.IntVarP(&o.iters, "iterations", "i", 0, "`N` timed iterations (ping-pongs or windows) per size, instead of the schedule")
	fs.IntVarP(&o.warmup, "warmup", "x", 0, "`N` untimed warm-up iterations per size, instead of the schedule")
	fs.IntVarP(&o.rounds, "rounds", "r", defaultRounds, "`N` rounds of ring and shift")
	fs.BoolVar(&o.exact, "osu-exact", os.Getenv("OSU_EXACT") != "" && os.Getenv("OSU_EXACT") != "0",
		"bw, bibw, mr: OSU's own window counts (100+10, 20+2) instead of bench.c's 10x/5x longer ones; also set by OSU_EXACT=1")
	fs.BoolVar(&o.csv, "csv", false, "print CSV (size,<metric>...) instead of OSU's text format")
	fs.StringVar(&o.plot, "plot", "", "draw latency or bandwidth against size, log axes, into `FILE` (.svg or .png)")
	fs.StringArrayVar(&o.overlays, "overlay", nil, "a run saved with --csv (or OSU text output), `FILE`, to draw on the same plot; repeatable")
	fs.StringVar(&o.label, "label", "gorun", "`NAME` of this run in the plot's legend")
	return fs
}

// usage writes the full help.
func usage(w io.Writer) {
	var o options
	var r string
	fmt.Fprint(w, usageHead, newFlagSet(&o, &r).FlagUsages())
}

// parseArgs reads the command line (without the program name). It returns
// pflag.ErrHelp for -h/--help. It checks everything that can be checked
// without the job: the mode, sizes, counts and file names; not the files.
func parseArgs(args []string) (options, error) {
	var o options
	var sizeRange string
	fs := newFlagSet(&o, &sizeRange)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	pos := fs.Args()
	if len(pos) == 0 {
		return o, errors.New("missing MODE")
	}
	if len(pos) > 2 {
		return o, fmt.Errorf("too many arguments %q; want MODE and at most one number", pos[1:])
	}
	var err error
	if o.mode, err = parseMode(pos[0]); err != nil {
		return o, err
	}
	o.minSize, o.maxSize = o.mode.minSize(), defaultMax
	if o.mode == ModeAllgather || o.mode == ModeAlltoall {
		o.maxSize = defaultBlockMax // per block, as bench.c
	}
	if sizeRange != "" {
		if o.minSize, o.maxSize, err = parseSizeRange(sizeRange, o.minSize); err != nil {
			return o, err
		}
	}
	if len(pos) == 2 {
		if err := o.positional(pos[1], fs); err != nil {
			return o, err
		}
	}
	if fs.Changed("iterations") && o.iters < 1 {
		return o, fmt.Errorf("--iterations %d: want 1 or more", o.iters)
	}
	o.warmupSet = fs.Changed("warmup")
	if o.warmup < 0 {
		return o, fmt.Errorf("--warmup %d: want 0 or more", o.warmup)
	}
	if o.rounds < 1 {
		return o, fmt.Errorf("--rounds %d: want 1 or more", o.rounds)
	}
	if o.plot != "" {
		if _, err := plotFormat(o.plot); err != nil {
			return o, err
		}
	}
	if !o.mode.sweep() && o.mode != ModePlot && (o.plot != "" || len(o.overlays) > 0) {
		return o, fmt.Errorf("mode %s has no size axis to plot; --plot and --overlay need lat, multi_lat, bw, bibw, mr or plot", o.mode)
	}
	if len(o.overlays) > 0 && o.plot == "" {
		return o, errors.New("--overlay draws onto the plot: give --plot FILE too")
	}
	if o.mode == ModePlot && (o.plot == "" || len(o.overlays) == 0) {
		return o, errors.New("mode plot draws saved runs only: give --plot FILE and at least one --overlay FILE")
	}
	return o, nil
}

// positional applies bench.c's optional second argument: the largest size of
// a sweep, or the rounds of ring and shift.
func (o *options) positional(arg string, fs *pflag.FlagSet) error {
	switch {
	case o.mode == ModeRing || o.mode == ModeShift || o.mode == ModeGoroutine || o.mode == ModeBarrier:
		if fs.Changed("rounds") {
			return fmt.Errorf("rounds given twice, as %q and as --rounds %d", arg, o.rounds)
		}
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return fmt.Errorf("rounds %q: want a whole number, 1 or more", arg)
		}
		o.rounds = n
	case o.mode.sweep():
		if fs.Changed("message-size") {
			return fmt.Errorf("largest size given twice, as %q and with --message-size", arg)
		}
		n, err := parseSize(arg)
		if err != nil {
			return err
		}
		if n < o.minSize {
			return fmt.Errorf("largest size %d is below the first size %d of mode %s", n, o.minSize, o.mode)
		}
		o.maxSize = n
	default:
		return fmt.Errorf("mode %s takes no argument, got %q", o.mode, arg)
	}
	return nil
}

// plotFormat returns "svg" or "png" from a plot file's extension.
func plotFormat(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".svg", ".png":
		return ext[1:], nil
	default:
		return "", fmt.Errorf("--plot %q: unknown image type %q; want a .svg or .png file", path, ext)
	}
}

// countsFor is the (iterations, warm-up) of one size, after the -i and -x
// overrides.
func (o *options) countsFor(size int) counts {
	var c counts
	switch {
	case o.mode.collective():
		c = collCounts(size)
	case o.mode == ModeLat || o.mode == ModeMultiLat:
		c = latCounts(size)
	default:
		c = bwCounts(size, o.exact)
	}
	if o.iters > 0 {
		c.iters = o.iters
	}
	if o.warmupSet {
		c.warmup = o.warmup
	}
	return c
}
