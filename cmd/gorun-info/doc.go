// Command gorun-info lists gorun's MCA parameters: for each, its name, the
// value a run would use now, where that value comes from ("default",
// "file:PATH", "env:GORUN_MCA_NAME" or "flag"), its default and a one-line
// help.
//
//	gorun-info [--param NAME] [--json] [--mca NAME VALUE]...
//
// --param NAME shows one parameter in detail (an unknown NAME exits 2 and
// names the closest known one); --json prints a JSON array of objects
// {name, type, value, source, default, help, allowed} for tools, where
// allowed says in words what the parameter accepts; --mca NAME VALUE
// (repeatable, like gorun's) previews a setting.
//
// Invariant: values are resolved by mca.Resolve from the same inputs the
// gorun launcher uses (flags, environment, working directory, $HOME), and
// every parameter gorun knows is visible because the same packages are
// linked in: the root package (which imports every component) and the
// launcher. Exit status: 0, or 2 for a usage
// error, an unknown --param or an invalid value.
package main
