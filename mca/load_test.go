package mca

import (
	"bytes"
	"strings"
	"testing"
)

// These tests use the default registry and the process environment, so they
// do not run in parallel.

func TestLoadDecodesResolved(t *testing.T) {
	s, _, err := Resolve(Inputs{Flags: [][2]string{{"btl", "self"}, {"pml_base_verbose", "debug"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvResolved, s.Encode())
	t.Setenv("GORUN_MCA_pml_base_verbose", "trace") // already folded into the launcher's Set: ignored
	got, warns, err := Load()
	if err != nil || len(warns) != 0 {
		t.Fatalf("Load: %v, %q", err, warns)
	}
	if got.Selected("btl", "sm") || got.getString("pml_base_verbose") != "debug" || got.sourceOf("btl") != "flag" {
		t.Errorf("Load = %s", got.Encode())
	}

	t.Setenv(EnvResolved, "garbage")
	if _, _, err := Load(); err == nil || !strings.Contains(err.Error(), EnvResolved) {
		t.Errorf("Load with garbage = %v; want an error naming %s", err, EnvResolved)
	}
	if _, _, err := defaultRegistry.Decode("garbage"); err == nil {
		t.Error("Decode(garbage) = nil error")
	}
}

func TestLoadSingletonResolves(t *testing.T) {
	home, wd := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Chdir(wd)
	writeFile(t, home, HomeFile, "rndv_base_verbose = info\nbtl_nope = 1\n")
	t.Setenv("GORUN_MCA_launcher_base_verbose", "error")
	s, warns, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if s.getString("rndv_base_verbose") != "info" || !strings.HasPrefix(s.sourceOf("rndv_base_verbose"), "file:") ||
		s.getString("launcher_base_verbose") != "error" {
		t.Errorf("Load = %s", s.Encode())
	}
	if len(warns) != 1 || !strings.Contains(warns[0], `unknown parameter "btl_nope"`) {
		t.Errorf("warnings = %q", warns)
	}

	t.Setenv("GORUN_MCA_btl", "self,^sm")
	if _, _, err := Load(); err == nil {
		t.Error("Load with GORUN_MCA_btl=self,^sm: nil error")
	}
}

func TestLoggerLevel(t *testing.T) {
	tests := []struct {
		level           string
		warn, info, dbg bool
	}{
		{"off", false, false, false},
		{"error", false, false, false},
		{"warn", true, false, false},
		{"info", true, true, false},
		{"debug", true, true, true},
		{"trace", true, true, true},
	}
	for _, tt := range tests {
		s, _, err := Resolve(Inputs{Flags: [][2]string{{"btl_base_verbose", tt.level}}})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		l := LoggerTo(s, "btl", &buf)
		l.Warn("w-msg")
		l.Info("i-msg")
		l.Debug("d-msg")
		out := buf.String()
		if strings.Contains(out, "w-msg") != tt.warn || strings.Contains(out, "i-msg") != tt.info ||
			strings.Contains(out, "d-msg") != tt.dbg {
			t.Errorf("level %s: output %q", tt.level, out)
		}
		if tt.warn && !strings.Contains(out, "btl: w-msg") {
			t.Errorf("level %s: output %q lacks the logger name", tt.level, out)
		}
	}
	if l := Logger(defaultRegistry.Defaults(), "pml"); l.Name() != "pml" || !l.IsWarn() || l.IsInfo() {
		t.Errorf("Logger(defaults, pml): name %q, warn %v info %v", l.Name(), l.IsWarn(), l.IsInfo())
	}
	mustPanic(t, "Logger of an unknown framework", func() { Logger(defaultRegistry.Defaults(), "nosuch") })
}
