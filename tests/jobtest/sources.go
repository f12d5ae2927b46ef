package jobtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// statSources looks at every Go source file of the module (and go.mod,
// go.sum) from the test process itself, once, when its first job starts
// (inside a test: go test's file log only runs from then on). The jobs run
// the launcher and rank programs that Setup built with `go build`, which
// go test's result cache does not see: without this, `go test ./...`
// after a change to the runtime reported the tests' last result,
// "(cached)", instead of running them. go test does record the files a
// test stats, and runs the test again when one of them changes.
// (Importing the runtime's packages into the test binary does not do it:
// the linker drops what the binary never calls, so the binary, and the
// cached result, stay as they were.)
var statSources = sync.OnceFunc(func() {
	root := ModuleRoot()
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
		case d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "docs"):
			return filepath.SkipDir
		case !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod" || d.Name() == "go.sum"):
			os.Stat(path)
		}
		return nil
	})
})
