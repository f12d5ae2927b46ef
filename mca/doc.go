// Package mca declares, resolves and hands out gorun's run-time parameters
// (Open MPI's "Modular Component Architecture" parameters).
//
// Its one job: turn declared parameters plus the user's settings into one
// immutable, validated Set of values, each remembering where it came from,
// and fill each component's configuration struct from it.
//
// # How to declare a parameter
//
// Every parameter is declared once, in its component, as a package-level
// var: name, default, range or allowed values, the configuration field it
// fills, and a one-line help that does not repeat the default. Rules that
// tie parameters together go in the same declaration:
//
//	type Config struct {
//		EagerLimit  int // btl_tcp_eager_limit
//		MaxSendSize int // btl_tcp_max_send_size
//		Timeout     int // btl_tcp_timeout, seconds
//	}
//
//	var Params = mca.Declare("btl_tcp", []mca.Field[Config]{
//		mca.Size("btl_tcp_eager_limit", "64k", 0, 16<<20, func(c *Config) *int { return &c.EagerLimit },
//			"largest payload sent eagerly; at most btl_tcp_max_send_size"),
//		mca.Size("btl_tcp_max_send_size", "128k", 1<<10, 64<<20, func(c *Config) *int { return &c.MaxSendSize },
//			"largest payload of one fragment"),
//		mca.Int("btl_tcp_timeout", "30", 1, 3600, func(c *Config) *int { return &c.Timeout },
//			"seconds without an answer before a peer counts as lost"),
//	}, mca.Rule[Config]{
//		Names: []string{"btl_tcp_eager_limit", "btl_tcp_max_send_size"},
//		Check: func(c *Config) string {
//			if c.EagerLimit > c.MaxSendSize {
//				return "the eager limit must not exceed the max send size"
//			}
//			return ""
//		},
//	})
//
// Then Params.Config(set) is the component's Config from a resolved Set,
// Params.Defaults() its Config at the defaults (tests, DefaultConfig), and
// Params.Validate(&c) checks a hand-built Config against the same ranges
// and rules. Nothing else names the parameter: gorun-info lists it, the
// launcher resolves and checks it, and a bad value or a combination that
// breaks a Rule stops gorun with exit 2 before any rank starts, naming every
// parameter involved. Constructors: Int and Size (integer fields; max 0 =
// no upper bound), Bool, String, Enum, List, Selector (a framework selector
// such as btl, filling a Selection). A renamed parameter keeps its old name
// with .Deprecated("old_name"). The package holding the declaration must be
// linked into cmd/gorun (the root package imports every component).
//
// # Resolution
//
// The launcher calls Resolve once (flags, environment, parameter files,
// defaults), prints the warnings, stops on an error, and hands the result
// to every rank as Set.Encode in the environment variable EnvResolved; ranks
// call Load, which decodes it (or, for a singleton started without gorun,
// resolves on its own).
//
// Sources, strongest first: --mca flags (a later flag overrides an earlier
// one), environment GORUN_MCA_<name> (name case-sensitive as declared),
// <WorkDir>/gorun-mca-params.conf, <Home>/.gorun/mca-params.conf, the
// default. Source strings are "flag", "env:GORUN_MCA_<name>", "file:PATH"
// and "default".
//
// Invariants:
//   - Every value in a Set has been parsed and validated against its Param,
//     and a Set from Resolve satisfies every declared Rule; a Set never
//     changes after it is built, so concurrent reads are safe.
//   - Every value assigned by any source is validated, even one that a
//     stronger source overrides: a bad value anywhere is an error, and the
//     first one found (checking flags, env, the working-directory file, then
//     the home file) is reported as a *ParamError; a broken Rule is a
//     *RuleError.
//   - Invalid values are rejected, never clamped or rewritten.
//   - An unknown parameter name is never an error, only a warning naming the
//     closest known parameter.
//   - Declare panics on a programmer error (duplicate name, invalid
//     default, defaults that break a Rule). Input from outside (flags, env,
//     files, Decode) never panics.
//   - Error messages quote at most 80 bytes of any value or input line.
//
// The package does no I/O beyond reading the two parameter files, and
// logging through the loggers Logger returns.
package mca
