package mpooltest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gorun-mpi/gorun/rndv"
)

// FileRendezvous implements mpool.Rendezvous with a JSON file in dir.
type FileRendezvous struct{}

const name = "mpooltest-segment.json"

// PublishSegment writes s to dir atomically.
func (FileRendezvous) PublishSegment(dir string, s rndv.Segment) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// WaitSegment polls dir for the descriptor until timeout.
func (FileRendezvous) WaitSegment(dir string, timeout time.Duration) (rndv.Segment, error) {
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			var s rndv.Segment
			if err := json.Unmarshal(b, &s); err != nil {
				return rndv.Segment{}, fmt.Errorf("mpooltest: bad descriptor in %s: %w", dir, err)
			}
			return s, nil
		}
		if time.Now().After(deadline) {
			return rndv.Segment{}, fmt.Errorf("mpooltest: no segment descriptor in %s after %v", dir, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}
