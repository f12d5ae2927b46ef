package remap

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/btl/btltest"
	"github.com/gorun-mpi/gorun/btl/sm"
	"github.com/gorun-mpi/gorun/mpool/mpooltest"
)

var jobs atomic.Int64

// smPair: two sm modules over one segment (local ranks 0 and 1).
func smPair(t *testing.T) [2]*sm.Module {
	cfg := sm.DefaultConfig()
	cfg.Rendezvous = mpooltest.FileRendezvous{}
	cfg.AttachTimeout = 20 * time.Second
	session := t.TempDir()
	id := fmt.Sprintf("r%d-%d", os.Getpid(), jobs.Add(1))
	var mods [2]*sm.Module
	var errs [2]error
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mods[r], errs[r] = sm.NewWithConfig(sm.Job{Rank: r, Size: 2, LocalRank: r, SessionDir: session, JobID: id}, cfg, hclog.NewNullLogger())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mods[0].Close(); mods[1].Close() })
	return mods
}

// The conformance suite through the wrapper: world ranks 3 and 1 of a
// 5-rank job are local ranks 0 and 1 of the sm pair.
func TestConformance(t *testing.T) {
	btltest.Run(t, func(t *testing.T) (a, b btl.Module, ar, br int) {
		p := smPair(t)
		members := []int{3, 1}
		ma, err := New(p[0], 5, members)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := New(p[1], 5, members)
		if err != nil {
			t.Fatal(err)
		}
		return ma, mb, 3, 1
	})
}

func TestTranslation(t *testing.T) {
	p := smPair(t)
	m, err := New(p[0], 5, []int{3, 1})
	if err != nil {
		t.Fatal(err)
	}
	for w, want := range []bool{false, true, false, false, false} {
		if got := m.Reachable(w); got != want {
			t.Errorf("Reachable(%d) = %v; want %v", w, got, want)
		}
	}
	if _, err := m.Send(2, btl.TagPMLMatch, nil, nil, nil); err == nil {
		t.Error("Send to a rank of another machine succeeded")
	}
	if !m.Flushed(4, m.QueueMark(4)+1) || m.PeerRunning(0) {
		t.Error("a rank outside the group has queued sends or runs")
	}
	var _ btl.Sleeper = m
	if _, ok := any(m).(btl.Watcher); ok {
		t.Error("the wrapper claims btl.Watcher")
	}
	for _, members := range [][]int{{0, 0}, {5}, {-1}} {
		if _, err := New(p[0], 5, members); err == nil {
			t.Errorf("New with members %v succeeded", members)
		}
	}
}
