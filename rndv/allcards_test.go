package rndv

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWaitAllCards: n ranks publish their cards and wait; rank 0 gathers
// them into the all-cards file and every rank gets the same n cards.
func TestWaitAllCards(t *testing.T) {
	for _, n := range []int{1, 2, 33} {
		dir := t.TempDir()
		got := make([][]Card, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for r := n - 1; r >= 0; r-- { // rank 0 last: the others wait for it
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := PublishCard(dir, Card{Version: CardVersion, Rank: r, LocalRank: r, Pid: 100 + r, Caps: []string{"sm"}}); err != nil {
					errs[r] = err
					return
				}
				got[r], errs[r] = WaitAllCards(dir, r, n, 20*time.Second)
			}()
			time.Sleep(time.Millisecond)
		}
		wg.Wait()
		for r := 0; r < n; r++ {
			if errs[r] != nil {
				t.Fatalf("n=%d rank %d: %v", n, r, errs[r])
			}
			if len(got[r]) != n {
				t.Fatalf("n=%d rank %d: %d cards", n, r, len(got[r]))
			}
			for i, c := range got[r] {
				if c.Rank != i || c.Pid != 100+i {
					t.Fatalf("n=%d rank %d: card %d = %+v", n, r, i, c)
				}
			}
		}
	}
}

// TestWaitAllCardsRankZeroGone: when rank 0 ended before Init (its gone
// record), the others fail at once instead of at the timeout.
func TestWaitAllCardsRankZeroGone(t *testing.T) {
	dir := t.TempDir()
	if err := PublishGone(dir, Gone{Version: GoneVersion, Rank: 0, How: "exited with status 0"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := WaitAllCards(dir, 1, 2, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "rank 0 exited with status 0 before it joined") || time.Since(start) > 30*time.Second {
		t.Fatalf("WaitAllCards = %v after %v; want rank 0's gone error at once", err, time.Since(start))
	}
	if _, err := WaitAllCards(t.TempDir(), 1, 2, 20*time.Millisecond); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("WaitAllCards without rank 0 = %v; want a timeout", err)
	}
}

func TestAllCardsRoundTrip(t *testing.T) {
	cards := []Card{
		{Version: CardVersion, Rank: 0, LocalRank: 0, Pid: 7, Caps: []string{"sm", "cma"}, Addr: "127.0.0.1:4000"},
		{Version: CardVersion, Rank: 1, LocalRank: 1, Pid: 8},
	}
	data, err := FormatAllCards(cards)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseAllCards(data, 2)
	if err != nil || len(back) != 2 || back[0].Addr != cards[0].Addr || back[1].Pid != 8 || len(back[0].Caps) != 2 {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	for _, bad := range []string{"", "gorun-cards 1 3\n", strings.Replace(string(data), "rank 1\n", "rank 0\n", 1), string(data) + "x"} {
		if _, err := ParseAllCards([]byte(bad), 2); err == nil {
			t.Errorf("ParseAllCards(%q) accepted", bad)
		}
	}
}

// FuzzParseAllCards: never panics; what it accepts formats back the same.
func FuzzParseAllCards(f *testing.F) {
	f.Add([]byte("gorun-cards 1 1\ngorun-card 1\nrank 0\nlocal_rank 0\npid 1\ncaps sm\naddr \n"), 1)
	f.Add([]byte("gorun-cards 1 2\ngorun-card 1\nrank 0\nlocal_rank 0\npid 1\ncaps \naddr \ngorun-card 1\nrank 1\nlocal_rank 1\npid 2\ncaps \naddr \n"), 2)
	f.Add([]byte("gorun-cards 1 0\n"), 0)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		cards, err := ParseAllCards(data, n)
		if err != nil {
			return
		}
		again, err := FormatAllCards(cards)
		if err != nil {
			t.Fatalf("accepted cards do not format: %v", err)
		}
		if back, err := ParseAllCards(again, n); err != nil || len(back) != len(cards) {
			t.Fatalf("reformatted cards do not parse: %v", err)
		}
	})
}

// FuzzParseCardFast: the all-cards file's fast card reader accepts only
// what ParseCard accepts, with the same card, and never panics.
func FuzzParseCardFast(f *testing.F) {
	f.Add([]byte("gorun-card 1\nrank 0\nlocal_rank 0\npid 1\ncaps sm\naddr \n"))
	f.Add([]byte("gorun-card 1\nrank 4095\nlocal_rank 12\npid 4194304\ncaps sm,cma\naddr 10.0.0.1:7000\n"))
	f.Add([]byte("gorun-card 1\nrank 01\nlocal_rank 0\npid 1\ncaps \naddr \n"))
	f.Add([]byte("gorun-card 1\nrank 1\nlocal_rank 0\npid 0\ncaps \naddr \n"))
	f.Add([]byte("gorun-card 1\nlocal_rank 0\nrank 1\npid 5\ncaps \naddr \n"))
	f.Add([]byte("gorun-card 1\nrank 1\nlocal_rank 0\npid 5\ncaps ,\naddr a b\n"))
	f.Add([]byte("gorun-card 1\nrank 1\nlocal_rank 0\npid 5\ncaps \naddr\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := parseCardFast(data)
		slow, err := ParseCard(data)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("fast reader accepted %q, ParseCard refuses it: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast reader %+v, ParseCard %+v", data, fast, slow)
		}
	})
}

// TestParseCardFastTakesFormatCard: every card FormatCard writes takes the
// fast path (else the all-cards file would be read the slow way).
func TestParseCardFastTakesFormatCard(t *testing.T) {
	for _, c := range []Card{
		{Version: CardVersion, Rank: 0, LocalRank: 0, Pid: 1},
		{Version: CardVersion, Rank: 1023, LocalRank: 1023, Pid: 4194304, Caps: []string{"sm"}},
		{Version: CardVersion, Rank: 7, LocalRank: 3, Pid: 99, Caps: []string{"sm", "cma"}, Addr: "[::1]:4000"},
	} {
		data, err := FormatCard(c)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parseCardFast(data)
		if !ok || !reflect.DeepEqual(got, c) {
			t.Fatalf("parseCardFast(%q) = %+v, %v; want %+v", data, got, ok, c)
		}
	}
}

// TestWaitAllCardsWokenByRankZeroGone: a rank already waiting for the
// all-cards file is woken by rank 0's gone record (the launcher's
// PublishGone wakes the FIFO), not left to its next own check, which in a
// large job comes seconds later (fifoPause).
func TestWaitAllCardsWokenByRankZeroGone(t *testing.T) {
	dir := t.TempDir()
	const n = MaxRanks
	done := make(chan error, 1)
	go func() {
		_, err := WaitAllCards(dir, 1, n, time.Minute)
		done <- err
	}()
	for { // the waiter holds the FIFO's read end once the FIFO exists
		if _, err := os.Stat(wakePath(dir, allCardsFile)); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // past its first checks, into the long pause
	if err := PublishGone(dir, Gone{Version: GoneVersion, Rank: 0, How: "exited with status 0"}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "rank 0 exited with status 0 before it joined") {
			t.Fatalf("WaitAllCards = %v; want rank 0's gone error", err)
		}
	case <-time.After(fifoPause(n) / 2):
		t.Fatalf("the waiter was not woken by rank 0's gone record within %v (its own check comes every %v)", fifoPause(n)/2, fifoPause(n))
	}
}

// TestReadLimited: the file whole, whatever its size up to the limit; a
// larger file refused; a missing one fs.ErrNotExist.
func TestReadLimited(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{1, 511, 512, 513, 70000} {
		path := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("x"), size)
		if err := os.WriteFile(path, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readLimited(path, 70000)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("size %d: %d bytes, %v; want the file", size, len(got), err)
		}
		if size > 1 {
			if _, err := readLimited(path, int64(size-1)); err == nil || !strings.Contains(err.Error(), "larger than") {
				t.Errorf("size %d, limit %d: %v; want refused", size, size-1, err)
			}
		}
	}
	if _, err := readLimited(filepath.Join(dir, "none"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v; want fs.ErrNotExist", err)
	}
}
