package rndv

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const goodGone = "gorun-gone 1\nrank 2\nhow exited with status 0\n"

func TestParseGone(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Gone   // when err == ""
		err  string // substring of the error
	}{
		{name: "valid", in: goodGone, want: Gone{Version: 1, Rank: 2, How: "exited with status 0"}},
		{name: "keys in any order", in: "gorun-gone 1\nhow killed by signal SIGKILL\nrank 0\n",
			want: Gone{Version: 1, Rank: 0, How: "killed by signal SIGKILL"}},
		{name: "a card is not a gone record", in: goodCard, err: `want "gorun-gone"`},
		{name: "version 2", in: "gorun-gone 2\nrank 2\nhow x\n", err: "version 2"},
		{name: "rank too large", in: "gorun-gone 1\nrank 4096\nhow x\n", err: `rank "4096"`},
		{name: "negative rank", in: "gorun-gone 1\nrank -1\nhow x\n", err: `rank "-1"`},
		{name: "empty how", in: "gorun-gone 1\nrank 1\nhow \n", err: `how ""`},
		{name: "control character in how", in: "gorun-gone 1\nrank 1\nhow a\tb\n", err: "printable ASCII"},
		{name: "how too long", in: "gorun-gone 1\nrank 1\nhow " + strings.Repeat("x", maxHow+1) + "\n", err: "1..200"},
		{name: "missing how", in: "gorun-gone 1\nrank 1\n", err: `key "how" missing`},
		{name: "truncated", in: "gorun-gone 1\nrank 1\nhow x", err: "newline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseGone([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseGone(%q) = %+v, %v; want an error containing %q", tt.in, g, err, tt.err)
				}
				return
			}
			if err != nil || g != tt.want {
				t.Fatalf("ParseGone(%q) = %+v, %v; want %+v", tt.in, g, err, tt.want)
			}
		})
	}
}

func TestFormatGoneRejectsInvalid(t *testing.T) {
	for _, g := range []Gone{
		{Version: 0, Rank: 0, How: "x"},
		{Version: 1, Rank: -1, How: "x"},
		{Version: 1, Rank: MaxRanks, How: "x"},
		{Version: 1, Rank: 0, How: ""},
		{Version: 1, Rank: 0, How: "two\nlines"},
	} {
		if data, err := FormatGone(g); err == nil {
			t.Errorf("FormatGone(%+v) = %q; want an error", g, data)
		}
	}
}

// TestWaitCardsFailsOnGone: the launcher's record of a rank that ended
// without a card ends the wait at once, and the error names the rank and
// how it ended.
func TestWaitCardsFailsOnGone(t *testing.T) {
	dir := t.TempDir()
	if err := PublishCard(dir, card(0)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond) // while WaitCards polls
		if err := PublishGone(dir, Gone{Version: GoneVersion, Rank: 2, How: "exited with status 0"}); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	_, err := WaitCards(dir, 3, 30*time.Second)
	wg.Wait()
	want := "rndv: rank 2 exited with status 0 before it joined the job"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("WaitCards = %v; want an error containing %q", err, want)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("WaitCards took %v; a gone record must end the wait at once", d)
	}
}

// TestWaitCardsGoneOutsideJob: a gone record of a rank outside 0..n-1 is
// none of this wait's business.
func TestWaitCardsGoneOutsideJob(t *testing.T) {
	dir := t.TempDir()
	if err := PublishCard(dir, card(0)); err != nil {
		t.Fatal(err)
	}
	if err := PublishGone(dir, Gone{Version: GoneVersion, Rank: 5, How: "exited with status 0"}); err != nil {
		t.Fatal(err)
	}
	if cards, err := WaitCards(dir, 1, time.Second); err != nil || len(cards) != 1 {
		t.Fatalf("WaitCards(dir, 1) = %+v, %v; want rank 0's card", cards, err)
	}
}

func TestWaitCardsBadGone(t *testing.T) {
	tests := []struct{ name, file, content, err string }{
		{"malformed", "gone.1", "gorun-gone 1\nrank x\n", "malformed gone record"},
		{"record of another rank", "gone.1", goodGone, "holds the gone record of rank 2; want rank 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := WaitCards(dir, 2, 10*time.Second)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("WaitCards = %v; want an error containing %q", err, tt.err)
			}
		})
	}
}

func TestRankOfGoneName(t *testing.T) {
	tests := []struct {
		name string
		rank int
		ok   bool
	}{
		{"gone.0", 0, true}, {"gone.4095", 4095, true},
		{"gone.01", 0, false}, {"gone.-1", 0, false}, {"gone.", 0, false}, {"card.1", 0, false}, {".gone.1.tmp9", 0, false},
	}
	for _, tt := range tests {
		if r, ok := rankOfName("gone.", tt.name); r != tt.rank || ok != tt.ok {
			t.Errorf("rankOfName(\"gone.\", %q) = %d, %v; want %d, %v", tt.name, r, ok, tt.rank, tt.ok)
		}
	}
}

// FuzzParseGone: no input panics, and whatever parses formats back to a
// file that parses to the same record.
func FuzzParseGone(f *testing.F) {
	f.Add([]byte(goodGone))
	f.Add([]byte("gorun-gone 1\nrank 0\nhow x\n"))
	f.Add([]byte("gorun-gone 1\nrank 0\nrank 0\n"))
	f.Add([]byte("gorun-gone 1\nhow \xff\nrank 1\n"))
	f.Add([]byte("\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseGone(data)
		if err != nil {
			return
		}
		out, err := FormatGone(g)
		if err != nil {
			t.Fatalf("ParseGone(%q) = %+v, which FormatGone rejects: %v", data, g, err)
		}
		if g2, err := ParseGone(out); err != nil || g2 != g {
			t.Fatalf("round trip of %q: got %+v, %v; want %+v", out, g2, err, g)
		}
	})
}
