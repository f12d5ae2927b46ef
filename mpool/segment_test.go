package mpool_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/mpool"
	"github.com/gorun-mpi/gorun/mpool/mpooltest"
)

var small = mpool.Params{CtlSize: 256, Slots: 16, SlotSize: 128, EagerFrags: 4, EagerFragSize: 4160, MaxFrags: 2, MaxFragSize: 8256}

func plan(t *testing.T, n int, p mpool.Params) mpool.Layout {
	t.Helper()
	l, err := mpool.Plan(n, p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestCreateOpenAttachUnlinks(t *testing.T) {
	dir := t.TempDir()
	l := plan(t, 3, small)
	path := filepath.Join(dir, mpool.FileName("job1", "t1"))
	a, err := mpool.Create(path, l)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := mpool.Create(path, l); err == nil {
		t.Fatal("second Create of the same path succeeded")
	}
	b, err := mpool.Open(path, l, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Writes through one mapping are seen through the other.
	a.Bytes()[l.Rank(1).FIFO] = 42
	if got := b.Bytes()[l.Rank(1).FIFO]; got != 42 {
		t.Fatalf("byte written via mapping a reads %d via mapping b", got)
	}
	for i := 1; i <= 3; i++ {
		n, err := a.Attach()
		if err != nil || n != i {
			t.Fatalf("Attach #%d = %d, %v", i, n, err)
		}
		_, statErr := os.Stat(path)
		if gone := errors.Is(statErr, os.ErrNotExist); gone != (i == 3) {
			t.Fatalf("after %d of 3 attaches file gone=%v", i, gone)
		}
	}
	if err := b.WaitAttached(time.Second, nil); err != nil {
		t.Fatal(err)
	}
}

func TestWaitAttachedTimeoutNamesCount(t *testing.T) {
	l := plan(t, 4, small)
	s, err := mpool.Create(filepath.Join(t.TempDir(), "seg"), l)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Attach()
	s.Attach()
	err = s.WaitAttached(20*time.Millisecond, nil)
	if err == nil || !strings.Contains(err.Error(), "2 of 4") {
		t.Fatalf("WaitAttached error = %v, want one naming 2 of 4", err)
	}
	boom := errors.New("peer died")
	if err := s.WaitAttached(time.Minute, func() error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("WaitAttached with failing check = %v, want %v", err, boom)
	}
}

func TestOpenRejectsMismatch(t *testing.T) {
	dir := t.TempDir()
	l := plan(t, 2, small)
	path := filepath.Join(dir, "seg")
	s, err := mpool.Create(path, l)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other := small
	other.Slots = 32
	tests := []struct {
		name string
		l    mpool.Layout
		want string
	}{
		{"other rank count", plan(t, 3, small), "file has"},
		{"other fifo size", func() mpool.Layout { l := plan(t, 2, other); l.Size = s.Layout.Size; return l }(), "btl_sm_fifo_size"},
	}
	for _, tt := range tests {
		_, err := mpool.Open(path, tt.l, s.ID)
		if !errors.Is(err, mpool.ErrHeader) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Open error = %v, want ErrHeader mentioning %q", tt.name, err, tt.want)
		}
	}
	// A corrupt magic or version is refused with its own message.
	s.Header().Version = 99
	if _, err := mpool.Open(path, l, s.ID); err == nil || !strings.Contains(err.Error(), "layout version 99") {
		t.Errorf("Open of a version-99 segment: %v", err)
	}
	s.Header().Magic = 7
	if _, err := mpool.Open(path, l, s.ID); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("Open of a bad-magic segment: %v", err)
	}
}

func TestJoinAndBackingDirFallback(t *testing.T) {
	session := t.TempDir()
	l := plan(t, 2, small)
	missing := filepath.Join(t.TempDir(), "does-not-exist")
	opts := func(rank int) mpool.JoinOptions {
		return mpool.JoinOptions{Dir: missing, SessionDir: session, JobID: "j7", LocalRank: rank,
			Timeout: 5 * time.Second, Rendezvous: mpooltest.FileRendezvous{}}
	}
	var wg sync.WaitGroup
	segs := make([]*mpool.Segment, 2)
	errs := make([]error, 2)
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			segs[r], errs[r] = mpool.Join(opts(r), l)
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		defer segs[r].Close()
	}
	want := segs[0].Path
	if filepath.Dir(want) != session || !strings.HasPrefix(filepath.Base(want), "gorun-"+strconv.Itoa(os.Getuid())+"-j7-") || segs[1].Path != want {
		t.Fatalf("paths %q, %q; want one file gorun-<uid>-j7-*.seg in the session-dir fallback %q", segs[0].Path, segs[1].Path, session)
	}
	segs[0].Attach()
	segs[1].Attach()
	if _, err := os.Stat(want); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("segment still on disk after every rank attached: %v", err)
	}
}

func TestBackingDirUsesWritableDir(t *testing.T) {
	d := t.TempDir()
	if got, err := mpool.BackingDir(d, "/session", nil); got != d || err != nil {
		t.Errorf("BackingDir(%q) = %q, %v", d, got, err)
	}
	f := filepath.Join(d, "file")
	os.WriteFile(f, nil, 0o600)
	if got, err := mpool.BackingDir(f, "/session", nil); got != "/session" || err != nil {
		t.Errorf("BackingDir(a regular file) = %q, %v; want the session dir", got, err)
	}
}

// TestTinyTmpfsClearError mounts a 1 MiB tmpfs and asks for a larger segment.
func TestTinyTmpfsClearError(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	big := small
	big.MaxFrags, big.MaxFragSize = 32, 32832
	l := plan(t, 8, big) // about 8.3 MiB
	path := filepath.Join(dir, mpool.FileName("tiny", "t1"))
	s, err := mpool.Create(path, l)
	if err == nil {
		s.Close()
	}
	if !errors.Is(err, mpool.ErrNoSpace) {
		t.Fatalf("Create on a 1 MiB tmpfs: %v, want ErrNoSpace", err)
	}
	for _, want := range []string{dir, "free", "8 ranks", mpool.FormatBytes(l.Size), "btl_sm_backing_directory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed Create left %s behind", path)
	}
	t.Log(err)
}
