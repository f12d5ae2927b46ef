package mca

import (
	"io"
	"os"

	"github.com/hashicorp/go-hclog"
)

// Load returns the Set a rank runs with. Under gorun (EnvResolved set) it
// decodes the launcher's Set, so every rank sees exactly what the launcher
// validated and its warnings are not printed once per rank. A singleton
// started without gorun resolves on its own from os.Environ(), the working
// directory and $HOME, as the launcher would (without flags).
func Load() (*Set, []string, error) {
	if enc, ok := os.LookupEnv(EnvResolved); ok {
		return defaultRegistry.Decode(enc)
	}
	wd, _ := os.Getwd()         // no working directory: skip its file
	home, _ := os.UserHomeDir() // no $HOME: skip its file
	return defaultRegistry.Resolve(Inputs{Environ: os.Environ(), WorkDir: wd, Home: home})
}

// Verbose levels of the <framework>_base_verbose parameters, quietest first.
var verboseLevels = []string{"off", "error", "warn", "info", "debug", "trace"}

// Logger returns framework's logger: go-hclog, named framework, writing to
// stderr, at the level of the enum parameter <framework>_base_verbose. It
// panics when that parameter is not in s (a programmer error).
func Logger(s *Set, framework string) hclog.Logger { return LoggerTo(s, framework, os.Stderr) }

// LoggerTo is Logger writing to w.
func LoggerTo(s *Set, framework string, w io.Writer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:   framework,
		Level:  hclog.LevelFromString(s.getString(framework + "_base_verbose")),
		Output: w,
	})
}
