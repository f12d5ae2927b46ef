package jobenv

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveJobFilesRecordLast: the session directory's launcher record
// is removed last, so that a removal cut short after any number of steps
// leaves it whenever anything else is left.
func TestRemoveJobFilesRecordLast(t *testing.T) {
	names := []string{"card.0", "card.1", LauncherFile, "segment", ".cards.wake", "abort.1"}
	for steps := 0; steps <= len(names); steps++ {
		dir := filepath.Join(t.TempDir(), "1-0000abcd")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		done := 0
		removeAll = func(p string) error {
			if done == steps {
				return nil // the remover was killed here
			}
			done++
			return os.RemoveAll(p)
		}
		RemoveJobFiles(dir, os.Getuid(), "1-0000abcd", "")
		removeAll = os.RemoveAll
		left, _ := os.ReadDir(dir)
		_, recErr := os.Stat(filepath.Join(dir, LauncherFile))
		if len(left) > 0 && recErr != nil {
			t.Errorf("cut after %d removals: %d entries left without the launcher record", steps, len(left))
		}
		if steps == len(names) {
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("a whole removal left %s: %v", dir, err)
			}
		}
	}
}
