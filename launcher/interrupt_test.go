package launcher

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer that Run and the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestRunInterruptSaysWhy: SIGINT to gorun ends the job with 130 and one
// line on stderr naming the signal (no rank is reported as failed).
func TestRunInterruptSaysWhy(t *testing.T) {
	pr, pw := io.Pipe()
	var stderr syncBuffer
	o := Options{NP: 2, Program: os.Args[0], Stdout: pw, Stderr: &stderr,
		Environ: append(os.Environ(), envHelper+"=lifeline"), TempDir: t.TempDir()}
	status := make(chan int, 1)
	go func() {
		status <- Run(o)
		pw.Close()
	}()
	ready := 0
	sc := bufio.NewScanner(pr)
	for ready < 2 && sc.Scan() {
		if sc.Text() == "ready" {
			ready++
		}
	}
	go io.Copy(io.Discard, pr)
	if ready < 2 {
		t.Fatalf("the ranks did not start; stderr %q", stderr.String())
	}
	// Run has called signal.Notify before starting the ranks: the signal
	// goes to it, not to the test binary's default handler.
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-status:
		if got != 130 || stderr.String() != "gorun: job interrupted by SIGINT\n" {
			t.Errorf("status %d, stderr %q; want 130 and exactly the interrupt line", got, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Run still runs 10 s after SIGINT; stderr %q", stderr.String())
	}
	if entries, _ := os.ReadDir(o.TempDir); len(entries) != 0 {
		t.Errorf("after Run, TMPDIR holds %v; want it empty", entries)
	}
	if strings.Contains(stderr.String(), "gorun: rank") {
		t.Errorf("a rank stopped by gorun was reported as failed: %q", stderr.String())
	}
}
