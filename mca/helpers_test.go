package mca

import (
	"os"
	"path/filepath"
	"testing"
)

// testTable has one parameter of every type.
func testTable() []Param {
	return []Param{
		{Name: "btl", Type: TypeSelector, Default: "self,sm", Allowed: []string{"self", "sm"}, Help: "BTLs"},
		{Name: "btl_sm_eager_limit", Type: TypeSize, Default: "4k", Max: 1 << 30, Help: "eager limit"},
		{Name: "btl_sm_fifo_size", Type: TypeInt, Default: "64", Min: 1, Max: 4096, Help: "FIFO slots"},
		{Name: "pml_base_warn", Type: TypeBool, Default: "true", Help: "warn"},
		{Name: "rndv_base_dir", Type: TypeString, Default: "", Help: "dir"},
		{Name: "btl_base_verbose", Type: TypeEnum, Default: "warn", Allowed: verboseLevels, Help: "level"},
		{Name: "launcher_base_env", Type: TypeList, Default: "", Help: "env to pass"},
	}
}

func newTestRegistry(t testing.TB) *registry {
	t.Helper()
	r := newRegistry()
	r.Register("test", testTable())
	return r
}

// writeFile writes content to dir/rel, creating directories.
func writeFile(t testing.TB, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// mustPanic runs f and returns the panic message, failing if f does not panic.
func mustPanic(t *testing.T, what string, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Fatalf("%s did not panic", what)
		}
		msg, _ = r.(string)
	}()
	f()
	return ""
}
