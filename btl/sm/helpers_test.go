package sm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/mpool/mpooltest"
)

var jobSeq atomic.Int64

// testLog is a logger that counts error lines (bad slots are logged).
type testLog struct {
	hclog.Logger
	errors atomic.Int32
}

func (l *testLog) Error(msg string, args ...any) { l.errors.Add(1); l.Logger.Error(msg, args...) }

// newJob starts n modules in this process over one segment, as ranks
// 0..n-1, and closes them at cleanup, checking no segment file is left.
func newJob(t testing.TB, n int, cfg Config) []*Module {
	t.Helper()
	session := t.TempDir()
	if cfg.Rendezvous == nil {
		cfg.Rendezvous = mpooltest.FileRendezvous{}
	}
	cfg.AttachTimeout = 20 * time.Second
	jobID := fmt.Sprintf("t%d-%d", os.Getpid(), jobSeq.Add(1))
	mods := make([]*Module, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			job := Job{Rank: r, Size: n, LocalRank: r, SessionDir: session, JobID: jobID}
			mods[r], errs[r] = NewWithConfig(job, cfg, hclog.NewNullLogger())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	path := mods[0].SegmentPath()
	t.Cleanup(func() {
		for _, m := range mods {
			m.Close()
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("segment %s still exists after every rank attached", path)
		}
	})
	if filepath.Dir(path) != cfg.BackingDir && cfg.BackingDir != "" {
		t.Logf("segment in %s (fallback from %s)", filepath.Dir(path), cfg.BackingDir)
	}
	return mods
}

func newPair(t *testing.T) (a, b btl.Module, ar, br int) {
	m := newJob(t, 2, DefaultConfig())
	return m[0], m[1], 0, 1
}

// smallConfig makes FIFOs and pools tiny so that pending paths are hit.
func smallConfig() Config {
	c := DefaultConfig()
	c.FIFOSize, c.LazyFree = 4, 2
	c.InlineLimit = c.maxInlineLimit() // the most this FIFO allows
	c.FreeListNum, c.FreeListMax, c.FreeListInc, c.MaxFrags = 1, 2, 1, 2
	return c
}

func smallPair(t *testing.T) (a, b btl.Module, ar, br int) {
	m := newJob(t, 2, smallConfig())
	return m[0], m[1], 0, 1
}

// pumpUntil progresses every module until done() or 20 s.
func pumpUntil(t testing.TB, mods []*Module, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; !done(); i++ {
		for _, m := range mods {
			m.Progress()
		}
		if i%1024 == 0 && time.Now().After(deadline) {
			t.Fatal("no progress within 20 s")
		}
	}
}

type doneRec struct {
	n   atomic.Int32
	err error
}

func (d *doneRec) SendDone(err error) { d.n.Add(1); d.err = err }
