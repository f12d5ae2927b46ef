package launcher

import (
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/gorun-mpi/gorun/rndv"
)

// TestRecordGone: a rank that ended with status 0 and no business card gets
// a gone record (so the ranks waiting for its card in Init fail at once);
// a rank that published its card gets none.
func TestRecordGone(t *testing.T) {
	dir := t.TempDir()
	j := &job{sess: &session{dir: dir}, log: hclog.NewNullLogger()}
	card := rndv.Card{Version: rndv.CardVersion, Rank: 0, Pid: os.Getpid(), Caps: []string{"sm"}}
	if err := rndv.PublishCard(dir, card); err != nil {
		t.Fatal(err)
	}
	j.recordGone(0, "exited with status 0")
	j.recordGone(1, "exited with status 0")
	if _, err := os.Lstat(rndv.GonePath(dir, 0)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("rank 0 published its card, yet %s: %v; want no gone record", rndv.GonePath(dir, 0), err)
	}
	g, err := rndv.ReadGone(rndv.GonePath(dir, 1))
	if want := (rndv.Gone{Version: rndv.GoneVersion, Rank: 1, How: "exited with status 0"}); err != nil || g != want {
		t.Errorf("gone record of rank 1 = %+v, %v; want %+v", g, err, want)
	}
}
