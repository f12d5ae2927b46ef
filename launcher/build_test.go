package launcher

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBuildLibraryPackage: a Go package that is not main builds (go build
// -o writes an archive) but is no program: the error says so instead of
// letting the rank's start fail with "permission denied".
func TestBuildLibraryPackage(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not in $PATH")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	for name, data := range map[string]string{
		"go.mod":       "module example.com/m\n\ngo 1.22\n",
		"lib/lib.go":   "package lib\n\nfunc F() int { return 1 }\n",
		"prog/main.go": "package main\n\nfunc main() {}\n",
	} {
		os.MkdirAll(dir+"/"+name[:strings.LastIndex(name, "/")+1], 0o755)
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	lib := program{target: "./lib", name: "lib"}
	err := lib.build(context.Background(), out)
	if want := "building ./lib made no executable: it is not a main package"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("build(./lib) = %v; want an error containing %q", err, want)
	}
	prog := program{target: "./prog", name: "prog"}
	if err := prog.build(context.Background(), out); err != nil || prog.path == "" {
		t.Errorf("build(./prog) = %v, path %q; want an executable", err, prog.path)
	}
}

// TestBuildInterruptSaysWhy: a signal during the build stops it; gorun
// exits 128+N with one line naming the target and the signal.
func TestBuildInterruptSaysWhy(t *testing.T) {
	bin := t.TempDir()
	// A "go" that would build for a minute; exec, so the kill reaches it.
	if err := os.WriteFile(bin+"/go", []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	var stderr strings.Builder
	j := &job{stderr: &sink{w: &stderr}, sess: &session{dir: t.TempDir()}}
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGINT
	start := time.Now()
	status, ok := j.build(&program{target: "./prog", name: "prog"}, sigs)
	if ok || status != 130 || stderr.String() != "gorun: build of ./prog interrupted by SIGINT\n" {
		t.Errorf("build = %d, %v, stderr %q; want 130, false and the interrupt line", status, ok, stderr.String())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the interrupted build took %v to stop", d)
	}
}
