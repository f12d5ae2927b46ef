package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gorun-mpi/gorun"
	"github.com/spf13/pflag"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the whole program; it returns the exit status: 0, 1 when the
// measurement or its output fails, 2 on a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if errors.Is(err, pflag.ErrHelp) {
		usage(stdout)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "osu: %v\n(osu -h for help)\n", err)
		return 2
	}
	if o.mode == ModePlot {
		return plotOnly(o, stderr)
	}
	c, err := gorun.Init()
	if err != nil {
		fmt.Fprintf(stderr, "osu: init: %v\n", err)
		return 1
	}
	code := measure(c, o, stdout, stderr)
	if err := gorun.Finalize(); err != nil && code == 0 {
		fmt.Fprintf(stderr, "osu: rank %d: finalize: %v\n", c.Rank(), err)
		code = 1
	}
	return code
}

// plotOnly draws saved runs, without a job.
func plotOnly(o options, stderr io.Writer) int {
	series, err := loadOverlays(o.overlays)
	if err == nil {
		err = savePlot(o.plot, "osu: saved runs", series)
	}
	if err != nil {
		fmt.Fprintf(stderr, "osu: %v\n", err)
		return 1
	}
	return 0
}

// measure runs the mode on every rank; rank 0 prints. Preconditions (the
// number of ranks, the overlay files) are checked the same way on every rank
// so that all of them stop together; a failure during the measurement aborts
// the job, since the peers would otherwise wait forever.
func measure(c *gorun.Comm, o options, stdout, stderr io.Writer) int {
	rank := c.Rank()
	overlays, err := loadOverlays(o.overlays)
	if err == nil {
		err = o.mode.checkRanks(c.Size())
	}
	if err != nil {
		if rank == 0 {
			fmt.Fprintf(stderr, "osu: %v\n", err)
		}
		return 1
	}
	b := newBench(c, o)
	if o.mode == ModeBarrier {
		res, err := b.barrier()
		if err == nil && rank == 0 {
			err = res.write(stdout, o.csv)
		}
		return abortOn(c, err, stderr)
	}
	if o.mode == ModeGoroutine {
		res, err := b.goroutines()
		if err == nil && rank == 0 {
			err = res.write(stdout, o.csv)
		}
		return abortOn(c, err, stderr)
	}
	if !o.mode.sweep() {
		res, err := b.ring()
		if err == nil && rank == 0 {
			err = res.write(stdout, o.csv)
		}
		return abortOn(c, err, stderr)
	}
	var rep *report
	if rank == 0 {
		rep = &report{w: stdout, mode: o.mode, csv: o.csv, pairs: c.Size() / 2, np: c.Size()}
		if err := rep.header(); err != nil {
			return abortOn(c, err, stderr)
		}
	}
	if err := b.sweep(rep); err != nil {
		return abortOn(c, fmt.Errorf("%s: %w", o.mode, err), stderr)
	}
	if rep != nil && o.plot != "" {
		title := fmt.Sprintf("osu %s, gorun np=%d", o.mode, c.Size())
		if err := savePlot(o.plot, title, append([]Series{rep.series(o.label)}, overlays...)); err != nil {
			fmt.Fprintf(stderr, "osu: %v\n", err)
			return 1
		}
	}
	return 0
}

// abortOn returns 0 for a nil error; otherwise it reports the error and ends
// the whole job with status 1.
func abortOn(c *gorun.Comm, err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "osu: rank %d: %v\n", c.Rank(), err)
	c.Abort(1)
	return 1 // not reached when Abort ends the process
}

// loadOverlays reads every --overlay file.
func loadOverlays(paths []string) ([]Series, error) {
	var out []Series
	for _, p := range paths {
		s, err := readSeriesFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
