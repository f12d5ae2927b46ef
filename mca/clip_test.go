package mca

import (
	"strings"
	"testing"
)

// TestErrorsQuoteLittle: a 10 MB value, name or file line is cut in every
// error and warning, never echoed whole.
func TestErrorsQuoteLittle(t *testing.T) {
	huge := strings.Repeat("x", 10<<20)
	dir := t.TempDir()
	r := newTestRegistry(t)
	check := func(what string, msgs ...string) {
		t.Helper()
		for _, m := range msgs {
			if len(m) > 1000 || len(m) == 0 {
				t.Errorf("%s: message of %d bytes: %.200s", what, len(m), m)
			}
		}
	}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	_, w, err := r.Resolve(Inputs{Flags: [][2]string{{"btl_sm_fifo_size", huge}}})
	check("bad value", append(w, errText(err))...)
	_, w, err = r.Resolve(Inputs{Flags: [][2]string{{"btl", "^" + huge}}})
	check("excluded unknown component", w...)
	_, w, err = r.Resolve(Inputs{Environ: []string{"GORUN_MCA_" + huge + "=1"}})
	check("unknown name", w...)
	_, _, err = r.Resolve(Inputs{Environ: []string{"GORUN_MCA_btl_sm_fifo_size=" + huge}})
	check("bad env value", errText(err))
	writeFile(t, dir, WorkDirFile, huge+"\n")
	_, _, err = r.Resolve(Inputs{WorkDir: dir})
	check("file line without =", errText(err))
	writeFile(t, dir, WorkDirFile, huge+"- = 1\n")
	_, _, err = r.Resolve(Inputs{WorkDir: dir})
	check("file line with a bad name", errText(err))
	_, _, err = r.Decode(encodingHeader + ";" + huge)
	check("decode", errText(err))
	re := &RuleError{Params: []RuleParam{{Name: "a", Value: huge, Source: "env:" + EnvPrefix + huge}}, Need: "n"}
	check("rule", re.Error())
}
