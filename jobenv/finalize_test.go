package jobenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gorun-mpi/gorun/rndv"
)

// TestRecordFinalize: the Finalize record is the rank's card renamed (no
// new file in the session directory, issue 16 item 11), or an empty record
// for a rank without a card; Unfinalized and Joined read either.
func TestRecordFinalize(t *testing.T) {
	for _, c := range []struct {
		name            string
		card, finalize  bool
		wantUnfinalized bool
		wantJoined      bool
	}{
		{"never joined", false, false, false, false},
		{"joined, not finalized", true, false, true, true},
		{"joined and finalized", true, true, false, true},
		{"finalized without a card", false, true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv(EnvSessionDir, dir)
			t.Setenv(EnvRank, "3")
			if c.card {
				if err := rndv.PublishCard(dir, rndv.Card{Version: rndv.CardVersion, Rank: 3, LocalRank: 3, Pid: 42}); err != nil {
					t.Fatal(err)
				}
			}
			if c.finalize {
				RecordFinalize()
				if _, err := os.Lstat(filepath.Join(dir, "finalized.3")); err != nil {
					t.Fatalf("no Finalize record: %v", err)
				}
				if _, err := os.Lstat(rndv.CardPath(dir, 3)); err == nil {
					t.Fatalf("card still there after RecordFinalize; want it renamed")
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 1 {
					t.Fatalf("session directory holds %d files after RecordFinalize; want 1", len(ents))
				}
			}
			if got := Unfinalized(dir, 3); got != c.wantUnfinalized {
				t.Errorf("Unfinalized = %v; want %v", got, c.wantUnfinalized)
			}
			if got := Joined(dir, 3); got != c.wantJoined {
				t.Errorf("Joined = %v; want %v", got, c.wantJoined)
			}
		})
	}
}
