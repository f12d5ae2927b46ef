package tests

import (
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// hotInlines are the small functions of the message paths whose speed
// depends on the compiler inlining them, by package: a change that pushes
// one past the inliner's budget (80) turns it into a call per message
// without any test failing, as 53b9f75 did to dataRecord (a call per
// fast-box record in the receiver's poll until 7c27b9e). Each entry is the
// name as `go build -gcflags=-m` prints it in "can inline NAME".
var hotInlines = map[string][]string{
	"./btl/sm": {
		"dataRecord",          // pollBox: every data record's header
		"recordOf",            // pollBox: the record's fields
		"recordKind",          // put, putMatch: a record's kind and space
		"recordSpace",         // dataRecord, recordKind: a record's ring space
		"(*boxOut).fits",      // put, putMatch: room at the write position
		"(*Module).burstNext", // sendBox, boxMatch: line or half-line record
		"storeSeq",            // every publish: a release store, not an XCHG
	},
	"./pml": {
		"(*matchHdr).plainMatch",    // onMatch: every eager message's header
		"(*Comm).sendOK",            // every send's argument check
		"(*Comm).recvOK",            // every receive's argument check
		"(*Comm).WorldRank",         // every send
		"(*PML).returnCreditLocked", // every eager delivery
	},
	"./pml/match": {
		"(*Engine).context", // every match: the context used last
	},
	"./internal/memcpy": {
		"Copy", // every payload copy: its short case is copy()
	},
}

// hotCalls are calls that must be inlined at the site: a function that
// can inline may still be called where the caller is too big.
var hotCalls = map[string][]string{
	"./btl/sm": {"dataRecord"}, // into pollBox (and parseBoxHeader)
}

// TestHotPathsInline checks that the message paths' small functions still
// inline (hotInlines, hotCalls).
func TestHotPathsInline(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("the inlining list is kept for amd64 (internal/memcpy's Copy differs elsewhere); GOARCH is %s", runtime.GOARCH)
	}
	t.Parallel()
	for pkg, names := range hotInlines {
		cmd := exec.Command("go", "build", "-gcflags=-m", pkg)
		cmd.Dir = jobtest.ModuleRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go build -gcflags=-m %s: %v\n%s", pkg, err, out)
		}
		for _, name := range names {
			re := regexp.MustCompile(`(?m): can inline ` + regexp.QuoteMeta(name) + `( |$)`)
			if !re.Match(out) {
				t.Errorf("%s: %s no longer inlines (go build -gcflags=-m=2 %s says why): it is on a per-message path", pkg, name, pkg)
			}
		}
		for _, name := range hotCalls[pkg] {
			if !strings.Contains(string(out), ": inlining call to "+name+"\n") {
				t.Errorf("%s: no call to %s is inlined any more", pkg, name)
			}
		}
	}
}
