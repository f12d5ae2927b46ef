package rndv

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
)

// GoneVersion is the version of the gone-record format written by this build.
const GoneVersion = 1

// maxHow bounds Gone.How, a short phrase such as "exited with status 0".
const maxHow = 200

// Gone is the launcher's record that a rank ended without publishing its
// business card: it will never join, so the ranks waiting for its card at
// Init can stop waiting at once instead of at rndv_base_timeout.
type Gone struct {
	Version int    // GoneVersion
	Rank    int    // world rank that ended
	How     string // how it ended, in the launcher's words ("exited with status 0")
}

var goneKeys = []string{"rank", "how"}

// Validate checks every field of g against the format's rules.
func (g Gone) Validate() error {
	switch {
	case g.Version != GoneVersion:
		return fmt.Errorf("rndv: gone record version %d; this build reads version %d only", g.Version, GoneVersion)
	case g.Rank < 0 || g.Rank >= MaxRanks:
		return fmt.Errorf("rndv: gone record rank %d; allowed: 0..%d", g.Rank, MaxRanks-1)
	case g.How == "" || len(g.How) > maxHow || !validText(g.How, true):
		return fmt.Errorf("rndv: gone record how %q; allowed: 1..%d printable ASCII characters", g.How, maxHow)
	}
	return nil
}

// FormatGone returns the record's file contents for g, which must be valid:
//
//	gorun-gone 1
//	rank 3
//	how exited with status 0
func FormatGone(g Gone) ([]byte, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return []byte(fmt.Sprintf("gorun-gone %d\nrank %d\nhow %s\n", g.Version, g.Rank, g.How)), nil
}

// ParseGone reads a record written by FormatGone. It returns an error,
// never panics, on malformed input.
func ParseGone(data []byte) (Gone, error) {
	f, err := parseFields(data, "gorun-gone", goneKeys)
	if err != nil {
		return Gone{}, fmt.Errorf("rndv: malformed gone record: %v", err)
	}
	if f.version != GoneVersion {
		return Gone{}, fmt.Errorf("rndv: gone record version %d; this build reads version %d only", f.version, GoneVersion)
	}
	g := Gone{Version: f.version, How: f.kv["how"]}
	if g.Rank, err = parseDecimal(f.kv["rank"], 0, MaxRanks-1); err != nil {
		return Gone{}, fmt.Errorf("rndv: gone record rank %q: %v", f.kv["rank"], err)
	}
	if err := g.Validate(); err != nil {
		return Gone{}, err
	}
	return g, nil
}

// GonePath is the file of rank's gone record in dir.
func GonePath(dir string, rank int) string {
	return filepath.Join(dir, "gone."+strconv.Itoa(rank))
}

// PublishGone records, for the launcher, that g.Rank ended without a card.
// The caller must have seen that the rank's card is absent after the rank
// ended: a card and a gone record of the same rank never coexist. Rank 0's
// record wakes the ranks waiting for the all-cards file, which rank 0 will
// never write (rank 0 itself watches the directory for the others').
func PublishGone(dir string, g Gone) error {
	data, err := FormatGone(g)
	if err != nil {
		return err
	}
	if err := WriteAtomic(GonePath(dir, g.Rank), data); err != nil {
		return err
	}
	if g.Rank == 0 {
		wakeAll(dir, allCardsFile)
	}
	return nil
}

// ReadGone reads and validates one gone record. A missing record is an
// error matching fs.ErrNotExist.
func ReadGone(path string) (Gone, error) {
	data, err := readBounded(path)
	if err != nil {
		return Gone{}, err
	}
	g, err := ParseGone(data)
	if err != nil {
		return Gone{}, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// goneError is WaitCards' error for a rank that will never publish its card.
func goneError(dir, name string, rank int) error {
	path := filepath.Join(dir, name)
	g, err := ReadGone(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // not a record after all (removed under us)
	}
	if err != nil {
		return err
	}
	if g.Rank != rank {
		return fmt.Errorf("rndv: %s holds the gone record of rank %d; want rank %d", path, g.Rank, rank)
	}
	return fmt.Errorf("rndv: rank %d %s before it joined the job with gorun.Init (its business card is missing); the job cannot start", rank, g.How)
}
