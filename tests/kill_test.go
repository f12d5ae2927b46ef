package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorun-mpi/gorun/tests/jobtest"
)

// TestKillGorunLeavesNothing (issue 16 item 7): kill -9 of gorun, while it
// builds the program and while the ranks run (with a 2 GiB segment): within
// the contract's 15 s no process of the job is left (no rank, no `go
// build`), no session directory and no shared-memory file, without any
// next gorun run to clean up.
func TestKillGorunLeavesNothing(t *testing.T) {
	t.Parallel()
	t.Run("during the build", func(t *testing.T) {
		t.Parallel()
		mark := t.TempDir()
		tmp := t.TempDir()
		p := jobtest.Job{Args: []string{"-np", "2", filepath.Join(jobtest.ModuleRoot(), "tests", "progs", "hello")}, TMPDIR: tmp,
			Linger: 15 * time.Second,
			Env:    []string{"PATH=" + fakeGo(t, mark) + ":" + os.Getenv("PATH"), "FAKEGO_MARK=" + mark, "FAKEGO_PROG=" + jobtest.Prog("hello")}}.Start(t)
		waitFile(t, filepath.Join(mark, "pid"))
		data, _ := os.ReadFile(filepath.Join(mark, "pid"))
		buildPid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatalf("fake go's pid file: %q", data)
		}
		p.Signal(syscall.SIGKILL)
		p.Wait()
		start := time.Now()
		for alive(buildPid) && time.Since(start) < 15*time.Second {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(buildPid) {
			t.Errorf("the build (pid %d) still runs 15 s after gorun was killed", buildPid)
			syscall.Kill(buildPid, syscall.SIGKILL)
		}
		jobtest.CheckClean(t, tmp, p.Pid(), 15*time.Second-time.Since(start))
	})
	t.Run("while the ranks run", func(t *testing.T) {
		t.Parallel()
		tmp := t.TempDir()
		p := jobtest.Job{Args: []string{"-np", "3", "--mca", "btl_sm_segment_min_size", "2g", actor(), "hang"}, TMPDIR: tmp,
			Linger: 15 * time.Second}.Start(t)
		p.Lines(3, "ready ")
		p.Signal(syscall.SIGKILL)
		p.Wait()
		jobtest.CheckClean(t, tmp, p.Pid(), 15*time.Second)
	})
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
