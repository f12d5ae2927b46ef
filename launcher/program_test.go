package launcher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindProgram(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.Mkdir("pkg", 0o755)
	os.WriteFile("pkg/main.go", []byte("package main\nfunc main() {}\n"), 0o644)
	os.WriteFile("exe", []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile("plain", []byte("x"), 0o644)
	os.Mkdir("dir.go", 0o755)
	tests := []struct {
		arg                string
		path, target, name string
		err                string
	}{
		{arg: "pkg", target: "./pkg", name: "pkg"},
		{arg: "./pkg", target: "./pkg", name: "pkg"},
		{arg: "pkg/", target: "./pkg/", name: "pkg"},
		{arg: ".", target: ".", name: filepath.Base(dir)},
		{arg: dir + "/pkg", target: dir + "/pkg", name: "pkg"},
		{arg: "pkg/main.go", target: "pkg/main.go", name: "main"},
		{arg: "./exe", path: filepath.Join(dir, "exe")},
		{arg: "exe", path: filepath.Join(dir, "exe")}, // not in $PATH: the working directory
		{arg: "sh", path: mustLookPath(t, "sh")},
		{arg: "./plain", err: "program ./plain is not executable (mode -rw-r--r--)"},
		{arg: "./missing", err: "program ./missing not found: no such file or directory"},
		{arg: "missing", err: "program missing not found: not a file, a directory or a command in $PATH"},
		{arg: "missing.go", err: "program missing.go: no such file or directory"},
		{arg: "dir.go", err: "is not a regular .go file"},
		{arg: "", err: "empty PROGRAM"},
	}
	for _, tt := range tests {
		p, err := findProgram(tt.arg)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("findProgram(%q) = %+v, %v; want an error containing %q", tt.arg, p, err, tt.err)
			}
			continue
		}
		if err != nil || p.path != tt.path || p.target != tt.target || p.name != tt.name {
			t.Errorf("findProgram(%q) = %+v, %v; want path %q, target %q, name %q", tt.arg, p, err, tt.path, tt.target, tt.name)
		}
	}
}

func mustLookPath(t *testing.T, name string) string {
	t.Helper()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	t.Skipf("%s not in $PATH", name)
	return ""
}
