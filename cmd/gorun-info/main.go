package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/spf13/pflag"

	_ "github.com/gorun-mpi/gorun"          // links in every component, so their parameters are registered
	_ "github.com/gorun-mpi/gorun/launcher" // and the launcher's (rank programs do not link it)
	"github.com/gorun-mpi/gorun/mca"
)

func main() {
	wd, _ := os.Getwd()         // none: skip the working-directory file, as gorun does
	home, _ := os.UserHomeDir() // none: skip the home file
	os.Exit(run(os.Args[1:], os.Environ(), wd, home, os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK    = 0
	exitUsage = 2 // bad arguments, unknown --param, invalid parameter value
)

// run is the whole command, with its inputs explicit for tests.
func run(args, environ []string, wd, home string, stdout, stderr io.Writer) int {
	mcaFlags, rest, err := splitMCA(args)
	if err != nil {
		fmt.Fprintf(stderr, "gorun-info: %v\n", err)
		return exitUsage
	}
	fs := pflag.NewFlagSet("gorun-info", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	param := fs.String("param", "", "show only parameter `NAME`, in detail")
	asJSON := fs.Bool("json", false, "print a JSON array of {name,type,value,source,default,help,allowed}")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: gorun-info [--param NAME] [--json] [--mca NAME VALUE]...\n")
		fmt.Fprintf(stderr, "      --mca NAME VALUE      preview a parameter setting, as gorun --mca would (repeatable)\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "gorun-info: %v\n", err)
		fs.Usage()
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gorun-info: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return exitUsage
	}

	set, warns, err := mca.Resolve(mca.Inputs{Flags: mcaFlags, Environ: environ, WorkDir: wd, Home: home})
	for _, w := range warns {
		fmt.Fprintf(stderr, "gorun-info: %s\n", w)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gorun-info: %v\n", err)
		return exitUsage
	}

	values := set.All()
	if fs.Changed("param") {
		v, ok := set.Lookup(*param)
		if !ok {
			fmt.Fprintf(stderr, "gorun-info: unknown parameter %q; did you mean %q?\n", clip(*param), mca.Closest(*param))
			return exitUsage
		}
		values = []mca.Value{v}
	}
	switch {
	case *asJSON:
		err = writeJSON(stdout, values)
	case fs.Changed("param"):
		err = writeDetail(stdout, values[0])
	default:
		err = writeTable(stdout, values)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gorun-info: %v\n", err)
		return 1
	}
	return exitOK
}

// splitMCA takes every "--mca NAME VALUE" (or Open MPI's "-mca") out of
// args, in order, and returns the rest for pflag, which has no flags with
// two values.
func splitMCA(args []string) (flags [][2]string, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if a != "--mca" && a != "-mca" {
			rest = append(rest, a)
			continue
		}
		if i+2 >= len(args) {
			return nil, nil, fmt.Errorf("%s needs NAME and VALUE (got %d argument(s) after it)", a, len(args)-i-1)
		}
		flags = append(flags, [2]string{args[i+1], args[i+2]})
		i += 2
	}
	return flags, rest, nil
}

// jsonParam is one element of --json output.
type jsonParam struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Value   string `json:"value"`
	Source  string `json:"source"`
	Default string `json:"default"`
	Help    string `json:"help"`
	Allowed string `json:"allowed"`
}

func writeJSON(w io.Writer, values []mca.Value) error {
	out := make([]jsonParam, 0, len(values))
	for _, v := range values {
		out = append(out, jsonParam{
			Name: v.Param.Name, Type: v.Param.Type.String(), Value: v.Value, Source: v.Source,
			Default: v.Param.Default, Help: v.Param.Help, Allowed: v.Allowed(),
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func writeTable(w io.Writer, values []mca.Value) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tSOURCE\tDEFAULT\tHELP")
	for _, v := range values {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Param.Name, show(v.Value), v.Source, show(v.Param.Default), v.Param.Help)
	}
	return tw.Flush()
}

func writeDetail(w io.Writer, v mca.Value) error {
	_, err := fmt.Fprintf(w, "name:     %s\ntype:     %s\nvalue:    %s\nsource:   %s\ndefault:  %s\nallowed:  %s\nhelp:     %s\n",
		v.Param.Name, v.Param.Type, show(v.Value), v.Source, show(v.Param.Default), v.Allowed(), v.Param.Help)
	return err
}

// show quotes a value that would be invisible or ambiguous in a table:
// empty, or holding white space or control characters.
func show(s string) string {
	if s == "" || strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// clip shortens what the user typed for an error message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
