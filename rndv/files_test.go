package rndv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func card(rank int) Card {
	return Card{Version: CardVersion, Rank: rank, LocalRank: rank, Pid: 100 + rank, Caps: []string{"sm"}}
}

// TestWaitCardsConcurrentPublishers: ranks publish while the waiter polls;
// it returns every card, indexed by rank, and no temporary file is left.
func TestWaitCardsConcurrentPublishers(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	for r := n - 1; r >= 0; r-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(r) * time.Millisecond)
			if err := PublishCard(dir, card(r)); err != nil {
				t.Errorf("PublishCard(rank %d) = %v", r, err)
			}
		}()
	}
	cards, err := WaitCards(dir, n, 10*time.Second)
	wg.Wait()
	if err != nil {
		t.Fatalf("WaitCards(%d) = %v", n, err)
	}
	for r, c := range cards {
		if c.Rank != r || c.Pid != 100+r {
			t.Errorf("cards[%d] = %+v; want the card of rank %d", r, c, r)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != n {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("dir holds %v; want exactly %d card files", names, n)
	}
}

func TestWaitCardsTimeoutNamesMissingRanks(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []int{0, 1, 2, 4} {
		if err := PublishCard(dir, card(r)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := WaitCards(dir, 6, 20*time.Millisecond)
	want := fmt.Sprintf("rndv: timed out after 20ms waiting for the business cards of ranks 3, 5 in %s", dir)
	if err == nil || err.Error() != want {
		t.Fatalf("WaitCards = %v; want %q", err, want)
	}
}

func TestListMissing(t *testing.T) {
	many := make([]bool, 40)
	many[0] = true
	tests := []struct {
		have []bool
		want string
	}{
		{[]bool{true, false}, "rank 1"},
		{[]bool{false, true, false}, "ranks 0, 2"},
		{many, "ranks 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 and 23 more"},
	}
	for _, tt := range tests {
		if got := listMissing(tt.have); got != tt.want {
			t.Errorf("listMissing(%v) = %q; want %q", tt.have, got, tt.want)
		}
	}
}

func TestWaitCardsRejectsBadFiles(t *testing.T) {
	tests := []struct {
		name, file, content, err string
	}{
		{"malformed card", "card.0", "gorun-card 1\nrank x\n", "malformed card"},
		{"card of another rank", "card.0", string(mustFormat(t, card(1))), "holds the card of rank 1; want rank 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := WaitCards(dir, 2, 10*time.Second)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("WaitCards = %v; want an error containing %q", err, tt.err)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("WaitCards waited for its timeout; a bad card must fail at once")
			}
		})
	}
}

func TestWaitCardsIgnoresOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"card.01", "card.-1", "card.7", ".card.0.tmp123", "launcher", "segment"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("junk"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := PublishCard(dir, card(0)); err != nil {
		t.Fatal(err)
	}
	cards, err := WaitCards(dir, 1, time.Second)
	if err != nil || len(cards) != 1 || cards[0].Pid != 100 {
		t.Fatalf("WaitCards(dir, 1) = %+v, %v; want rank 0's card only", cards, err)
	}
}

func TestWaitCardsBadArguments(t *testing.T) {
	for _, n := range []int{0, -1, MaxRanks + 1} {
		if _, err := WaitCards(t.TempDir(), n, time.Millisecond); err == nil {
			t.Errorf("WaitCards(n=%d) = nil error; want one", n)
		}
	}
	if _, err := WaitCards(filepath.Join(t.TempDir(), "nope"), 1, time.Millisecond); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WaitCards on a missing dir = %v; want fs.ErrNotExist", err)
	}
}

func TestSegmentPublishWait(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadSegment(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadSegment before publishing = %v; want fs.ErrNotExist", err)
	}
	_, err := WaitSegment(dir, 10*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "timed out after 10ms waiting for the segment descriptor") {
		t.Fatalf("WaitSegment on an empty dir = %v; want a timeout error", err)
	}
	want := Segment{Version: SegmentVersion, Path: filepath.Join(dir, "x.seg"), Size: 4096, Layout: 2, Token: "00112233445566778899aabbccddeeff", Dev: 1, Ino: 2}
	go func() {
		time.Sleep(5 * time.Millisecond)
		if err := PublishSegment(dir, want); err != nil {
			t.Errorf("PublishSegment = %v", err)
		}
	}()
	got, err := WaitSegment(dir, 10*time.Second)
	if err != nil || got != want {
		t.Fatalf("WaitSegment = %+v, %v; want %+v", got, err, want)
	}
	if err := PublishSegment(dir, Segment{Version: SegmentVersion, Path: "rel", Size: 1}); err == nil {
		t.Errorf("PublishSegment with a relative path succeeded")
	}
}

func TestWaitSegmentMalformed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(SegmentPath(dir), []byte("gorun-segment 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := WaitSegment(dir, 10*time.Second); err == nil || !strings.Contains(err.Error(), "malformed segment descriptor") {
		t.Fatalf("WaitSegment = %v; want a malformed-descriptor error", err)
	}
}

func TestReadCardOversized(t *testing.T) {
	path := filepath.Join(t.TempDir(), "card.0")
	if err := os.WriteFile(path, make([]byte, maxFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCard(path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("ReadCard(oversized) = %v; want a size error", err)
	}
}

func mustFormat(t testing.TB, c Card) []byte {
	t.Helper()
	b, err := FormatCard(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
