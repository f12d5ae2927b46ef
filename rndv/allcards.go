package rndv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Start-up in time linear in the number of ranks. If every rank waited for
// every card with WaitCards, each of n ranks would read a directory of n
// entries at every poll and open n card files: n² work while the job
// starts, which is itself longer for more ranks, so start-up grew faster
// than n² (-np 512 took 54 s on 2 cores, -np 1024 did not start). Instead
// rank 0 alone waits for the n cards and publishes them all in one file,
// "cards"; every other rank waits for that one file (a stat per poll) and
// reads it once. A rank that ends before Init makes rank 0's WaitCards
// fail, and the launcher then stops the job; rank 0 itself ending before
// Init leaves its gone record, which the others look for at every poll.

// allCardsFile is the name of the all-cards file in the session
// directory; the ranks waiting for it sleep on its wake FIFO (wakeFIFO).
const allCardsFile = "cards"

// AllCardsPath is the all-cards file of the session directory dir.
func AllCardsPath(dir string) string { return filepath.Join(dir, allCardsFile) }

// WaitAllCards returns the cards of ranks 0..n-1, as WaitCards does, for
// rank rank of the job: rank 0 gathers them (WaitCards) and publishes the
// all-cards file; the others wait for it.
func WaitAllCards(dir string, rank, n int, timeout time.Duration) ([]Card, error) {
	if rank == 0 {
		cards, err := WaitCards(dir, n, timeout)
		if err != nil {
			return nil, err
		}
		data, err := FormatAllCards(cards)
		if err == nil {
			err = WriteAtomic(AllCardsPath(dir), data)
		}
		wakeAll(dir, allCardsFile)
		return cards, err
	}
	if n < 1 || n > MaxRanks || rank < 0 || rank >= n {
		return nil, fmt.Errorf("rndv: WaitAllCards for rank %d of %d ranks; allowed: 1..%d ranks", rank, n, MaxRanks)
	}
	deadline := time.Now().Add(timeout)
	// Without a wake FIFO, polls are a stat each; the longest pause grows
	// with the job, so that n waiting ranks cost about the same whatever n.
	maxSleep := max(pollMax, time.Duration(n)*20*time.Microsecond)
	path := AllCardsPath(dir)
	w := openWake(dir, allCardsFile)
	defer w.close()
	if w != nil {
		w.every = fifoPause(n)
	}
	for sleep := pollMin; ; sleep = min(2*sleep, maxSleep) {
		data, err := readLimited(path, int64(n)*maxFileSize)
		if err == nil {
			cards, err := ParseAllCards(data, n)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			return cards, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err := goneError(dir, "gone.0", 0); err != nil {
			return nil, err
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("rndv: timed out after %v waiting for rank 0 to gather the business cards of the %d ranks in %s", timeout, n, path)
		}
		w.wait(min(w.pause(sleep), time.Until(deadline)))
	}
}

// FormatAllCards returns the all-cards file for cards (ranks 0..n-1, in
// order): a first line "gorun-cards 1 <n>", then each card as FormatCard
// writes it.
func FormatAllCards(cards []Card) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "gorun-cards 1 %d\n", len(cards))
	for r, c := range cards {
		if c.Rank != r {
			return nil, fmt.Errorf("rndv: card of rank %d at index %d", c.Rank, r)
		}
		data, err := FormatCard(c)
		if err != nil {
			return nil, err
		}
		b.Write(data)
	}
	return b.Bytes(), nil
}

// ParseAllCards reads what FormatAllCards writes, for a job of n ranks;
// every card is validated as ParseCard does, and must be in rank order.
func ParseAllCards(data []byte, n int) ([]Card, error) {
	head, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok || string(head) != "gorun-cards 1 "+strconv.Itoa(n) {
		return nil, fmt.Errorf("rndv: malformed all-cards file: first line %q; want %q", clipText(head), "gorun-cards 1 "+strconv.Itoa(n))
	}
	cards := make([]Card, 0, n)
	for len(rest) > 0 {
		// A card runs until the next "gorun-card " line.
		end := bytes.Index(rest[1:], []byte("\ngorun-card "))
		var one []byte
		if end < 0 {
			one, rest = rest, nil
		} else {
			one, rest = rest[:end+2], rest[end+2:]
		}
		c, ok := parseCardFast(one)
		if !ok {
			var err error
			if c, err = ParseCard(one); err != nil {
				return nil, fmt.Errorf("rndv: all-cards file, card #%d: %w", len(cards), err)
			}
		}
		if c.Rank != len(cards) {
			return nil, fmt.Errorf("rndv: all-cards file: card #%d is rank %d's", len(cards), c.Rank)
		}
		cards = append(cards, c)
	}
	if len(cards) != n {
		return nil, fmt.Errorf("rndv: all-cards file holds %d cards; want %d", len(cards), n)
	}
	return cards, nil
}

// readLimited reads path, refusing files larger than limit. A missing
// file is fs.ErrNotExist itself (the waiters' common case, so no error is
// built for it). The buffer is the file's size (plus one byte, to see a
// file that grew): every rank reads this file once, and at 1024 ranks
// io.ReadAll's doubling buffers cost each of them 4x the file's pages.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("rndv: %w", err)
	}
	defer f.Close()
	var data []byte
	if st, serr := f.Stat(); serr == nil && st.Size() > 0 && st.Size() <= limit {
		buf := make([]byte, st.Size()+1)
		var n int
		n, err = io.ReadFull(f, buf)
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = nil
		}
		data = buf[:n]
		if err == nil && n == len(buf) { // grew since the Stat: read the rest
			var rest []byte
			rest, err = io.ReadAll(io.LimitReader(f, limit+1-int64(n)))
			data = append(data, rest...)
		}
	} else {
		data, err = io.ReadAll(io.LimitReader(f, limit+1))
	}
	if err != nil {
		return nil, fmt.Errorf("rndv: reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("rndv: %s is larger than %d bytes; not a gorun all-cards file", path, limit)
	}
	return data, nil
}

func clipText(b []byte) string {
	s := string(b)
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}
