package rndv

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Polling backs off from pollMin to pollMax: a job whose ranks start
// together is usually complete within the first few polls, and a slow one
// costs one directory read every 5 ms.
const (
	pollMin = 50 * time.Microsecond
	pollMax = 5 * time.Millisecond
)

// PublishCard writes c into dir atomically (temp file + rename).
func PublishCard(dir string, c Card) error {
	data, err := FormatCard(c)
	if err != nil {
		return err
	}
	return WriteAtomic(CardPath(dir, c.Rank), data)
}

// ReadCard reads and validates one card file.
func ReadCard(path string) (Card, error) {
	data, err := readBounded(path)
	if err != nil {
		return Card{}, err
	}
	c, err := ParseCard(data)
	if err != nil {
		return Card{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// WaitCards waits until the cards of ranks 0..n-1 are all in dir and returns
// them indexed by rank. On timeout the error names the missing ranks. A card
// that is present but malformed, or whose rank differs from its file name,
// is an error at once; so is the launcher's gone record (PublishGone) of a
// rank whose card is missing, since that rank will never publish one.
func WaitCards(dir string, n int, timeout time.Duration) ([]Card, error) {
	if n < 1 || n > MaxRanks {
		return nil, fmt.Errorf("rndv: WaitCards for %d ranks; allowed: 1..%d", n, MaxRanks)
	}
	cards := make([]Card, n)
	have := make([]bool, n)
	missing := n
	deadline := time.Now().Add(timeout)
	w := newDirWatch(dir)
	defer w.close()
	isRecord := func(name string) bool { return strings.HasPrefix(name, "card.") || strings.HasPrefix(name, "gone.") }
	// names are the files to look at: the whole directory at first, then
	// the records the watch's events name (each publication is one rename
	// event, and the watch exists before the first listing), or the whole
	// directory again when the watch has no names to give. Listing the
	// directory at every event cost rank 0 O(n) per card, O(n²) in all.
	var names []string
	for sleep := pollMin; ; sleep = min(2*sleep, pollMax) {
		if names == nil {
			entries, err := os.ReadDir(dir)
			if err != nil {
				return nil, fmt.Errorf("rndv: reading business cards: %w", err)
			}
			names = make([]string, len(entries))
			for i, e := range entries {
				names[i] = e.Name()
			}
		}
		for _, name := range names {
			if err := takeCard(dir, name, cards, have, &missing); err != nil {
				return nil, err
			}
		}
		if missing == 0 {
			return cards, nil
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("rndv: timed out after %v waiting for the business cards of %s in %s",
				timeout, listMissing(have), dir)
		}
		names = w.wait(min(w.pause(sleep), time.Until(deadline)), isRecord)
	}
}

// takeCard looks at one file of the session directory for WaitCards: a
// gone record of a rank without a card is an error, a card not yet taken
// is read into cards.
func takeCard(dir, name string, cards []Card, have []bool, missing *int) error {
	n := len(cards)
	if r, ok := rankOfName("gone.", name); ok && r < n && !have[r] {
		if err := goneError(dir, name, r); err != nil {
			return err
		}
	}
	r, ok := rankOfName("card.", name)
	if !ok || r >= n || have[r] {
		return nil
	}
	c, err := ReadCard(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if c.Rank != r {
		return fmt.Errorf("rndv: %s holds the card of rank %d; want rank %d", filepath.Join(dir, name), c.Rank, r)
	}
	cards[r], have[r] = c, true
	*missing--
	return nil
}

// listMissing names the ranks whose card is missing, at most 16 of them:
// "rank 3" or "ranks 3, 5" or "ranks 0, 1, ... and 30 more".
func listMissing(have []bool) string {
	const show = 16
	var names []string
	more := 0
	for r, ok := range have {
		if ok {
			continue
		}
		if len(names) < show {
			names = append(names, fmt.Sprint(r))
		} else {
			more++
		}
	}
	s := "ranks " + strings.Join(names, ", ")
	if len(names) == 1 {
		s = "rank " + names[0]
	}
	if more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// PublishSegment writes the descriptor into dir atomically.
func PublishSegment(dir string, s Segment) error {
	data, err := FormatSegment(s)
	if err != nil {
		return err
	}
	if err := WriteAtomic(SegmentPath(dir), data); err != nil {
		return err
	}
	wakeAll(dir, segmentFile)
	return nil
}

// ReadSegment reads and validates the descriptor in dir. A missing
// descriptor is an error matching fs.ErrNotExist.
func ReadSegment(dir string) (Segment, error) {
	path := SegmentPath(dir)
	data, err := readBounded(path)
	if err != nil {
		return Segment{}, err
	}
	s, err := ParseSegment(data)
	if err != nil {
		return Segment{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// WaitSegment waits for the descriptor in dir; on timeout the error says so.
// A descriptor that is present but malformed is an error at once.
func WaitSegment(dir string, timeout time.Duration) (Segment, error) {
	deadline := time.Now().Add(timeout)
	w := openWake(dir, segmentFile)
	defer w.close()
	for sleep := pollMin; ; sleep = min(2*sleep, pollMax) {
		s, err := ReadSegment(dir)
		if !errors.Is(err, fs.ErrNotExist) {
			return s, err
		}
		if !time.Now().Before(deadline) {
			return Segment{}, fmt.Errorf("rndv: timed out after %v waiting for the segment descriptor %s", timeout, SegmentPath(dir))
		}
		w.wait(min(w.pause(sleep), time.Until(deadline)))
	}
}

// WriteAtomic writes data to a temporary file beside path, then renames it
// over path: a reader sees the old file, no file, or the whole new one,
// never a partial write. The launcher uses it for its own records too.
func WriteAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("rndv: writing %s: %w", path, err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("rndv: writing %s: %w", path, err)
	}
	return nil
}

// readBounded reads path, refusing files larger than maxFileSize.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rndv: %w", err)
	}
	defer f.Close()
	buf := make([]byte, maxFileSize+1)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("rndv: reading %s: %w", path, err)
	}
	if n > maxFileSize {
		return nil, fmt.Errorf("rndv: %s is larger than %d bytes; not a gorun rendezvous file", path, maxFileSize)
	}
	return buf[:n], nil
}
