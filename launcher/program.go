package launcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/jobenv"
)

// program is what the ranks run: an executable, or a Go package directory
// or .go file that gorun builds into the session directory first.
type program struct {
	path   string // executable to run (after the build, for a Go target)
	target string // go build target ("./dir" or "file.go"); "" when nothing is built
	name   string // base name of the built binary
}

// findProgram resolves the PROGRAM argument, without building anything:
//   - a name ending in .go is a Go file to build;
//   - an existing directory is a Go package to build;
//   - a path with a slash must be an executable regular file;
//   - a bare name is looked up in $PATH, then in the working directory.
func findProgram(arg string) (program, error) {
	if arg == "" {
		return program{}, errors.New("empty PROGRAM")
	}
	fi, statErr := os.Stat(arg)
	if strings.HasSuffix(arg, ".go") {
		if statErr != nil {
			return program{}, fmt.Errorf("program %s: %v", clip(arg), unwrapPath(statErr))
		}
		if !fi.Mode().IsRegular() {
			return program{}, fmt.Errorf("program %s is not a regular .go file", clip(arg))
		}
		return program{target: arg, name: strings.TrimSuffix(filepath.Base(arg), ".go")}, nil
	}
	if statErr == nil && fi.IsDir() {
		target := arg
		if !filepath.IsAbs(arg) && !strings.HasPrefix(arg, "./") && !strings.HasPrefix(arg, "../") && arg != "." && arg != ".." {
			target = "./" + arg // a bare "dir" would name an import path
		}
		abs, err := filepath.Abs(arg)
		if err != nil {
			return program{}, fmt.Errorf("program %s: %v", clip(arg), err)
		}
		return program{target: target, name: filepath.Base(abs)}, nil
	}
	if !strings.Contains(arg, "/") {
		if p, err := exec.LookPath(arg); err == nil {
			return program{path: p}, nil
		}
		if statErr != nil {
			return program{}, fmt.Errorf("program %s not found: not a file, a directory or a command in $PATH", clip(arg))
		}
	}
	if statErr != nil {
		return program{}, fmt.Errorf("program %s not found: %v", clip(arg), unwrapPath(statErr))
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return program{}, fmt.Errorf("program %s: %v", clip(arg), err)
	}
	if err := checkExecutable(abs, fi); err != nil {
		return program{}, fmt.Errorf("program %s %v", clip(arg), err)
	}
	return program{path: abs}, nil
}

func checkExecutable(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("is not a regular file (%v)", fi.Mode().Type())
	}
	if fi.Mode().Perm()&0o111 == 0 || unix.Access(path, unix.X_OK) != nil {
		return fmt.Errorf("is not executable (mode %v)", fi.Mode().Perm())
	}
	return nil
}

// unwrapPath drops the *PathError wrapping, whose text repeats the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// build runs `go build -o <dir>/bin/<name> <target>` in the working
// directory and points p.path at the result. On failure the error holds
// the compiler's output.
func (p *program) build(ctx context.Context, dir string) error {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, serr := os.Stat(goCmd); runtime.GOROOT() == "" || serr != nil {
			return fmt.Errorf("cannot build %s: the go command is not in $PATH", p.target)
		}
	}
	out := filepath.Join(dir, "bin", p.name)
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", out, p.target)
	// The build dies with gorun (Pdeathsig; the caller's thread lives as
	// long as the build), in a process group of its own that a cancel
	// kills whole; GORUN_SESSION_DIR marks it and its compilers as the
	// job's for the janitor, and GOTMPDIR keeps go's work directory in the
	// session directory, so nothing of it outlives a killed gorun.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Env = append(os.Environ(), jobenv.EnvSessionDir+"="+dir)
	if os.Getenv("GOTMPDIR") == "" {
		gotmp := filepath.Join(dir, "gotmp")
		if err := os.Mkdir(gotmp, 0o700); err == nil {
			cmd.Env = append(cmd.Env, "GOTMPDIR="+gotmp)
		}
	}
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		msg := strings.TrimRight(output.String(), "\n")
		if msg != "" {
			msg = "\n" + msg
		}
		return fmt.Errorf("building %s failed (%v):%s", p.target, err, msg)
	}
	// go build -o of a package that is not main writes an archive, not
	// an executable; starting it would fail with a bare "permission denied".
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("building %s made no executable: it is not a main package (a rank program needs package main with func main)", p.target)
	}
	p.path = out
	return nil
}
