package launcher

import (
	"strings"
	"testing"
)

// TestErrorsQuoteLittle: huge user input is cut in the launcher's errors.
func TestErrorsQuoteLittle(t *testing.T) {
	huge := strings.Repeat("x", 10<<20)
	errs := map[string]error{}
	_, errs["program"] = findProgram("./" + huge)
	_, errs["--host"] = ParseHosts(huge + "!")
	_, errs["--host slots"] = ParseHosts("a:" + huge)
	_, errs["hostfile word"] = ParseHostfile("hf", []byte("a "+huge+"\n"))
	_, errs["hostfile slots"] = ParseHostfile("hf", []byte("a slots="+huge+"\n"))
	for what, err := range errs {
		if err == nil || len(err.Error()) > 600 {
			t.Errorf("%s: error of %d bytes: %.200v", what, len(errText(err)), err)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
