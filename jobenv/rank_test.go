package jobenv

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAbortStatus(t *testing.T) {
	for _, tt := range []struct{ code, want int }{
		{1, 1}, {3, 3}, {255, 255}, {0, 1}, {-1, 1}, {256, 1}, {300, 1},
	} {
		if got := abortStatus(tt.code); got != tt.want {
			t.Errorf("abortStatus(%d) = %d; want %d", tt.code, got, tt.want)
		}
	}
}

func TestParseAbortRecord(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"3\n", 3, true}, {"-7\n", -7, true}, {"300\n", 300, true},
		{"3", 0, false}, {"", 0, false}, {"x\n", 0, false}, {"3\n\n", 0, false},
	} {
		got, err := parseAbortRecord([]byte(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseAbortRecord(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestAbortInsideJob: Abort records its code for the launcher and exits
// with the contract's status.
func TestAbortInsideJob(t *testing.T) {
	for _, tt := range []struct{ code, status int }{{3, 3}, {0, 1}, {300, 1}} {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), envHelper+"=abort:"+strconv.Itoa(tt.code), EnvRank+"=2", EnvSessionDir+"="+dir)
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != tt.status {
			t.Errorf("Abort(%d): process ended with %v; want exit status %d", tt.code, err, tt.status)
		}
		if got, err := ReadAbort(dir, 2); err != nil || got != tt.code {
			t.Errorf("Abort(%d): record = %d, %v; want %d", tt.code, got, err, tt.code)
		}
	}
}

func TestAbortOutsideJob(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envHelper+"=abort:0")
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("Abort(0) outside gorun ended with %v; want exit status 1", err)
	}
}

// TestLifelineEOFEndsRank: when the write end of the lifeline closes (the
// launcher died), a rank that called Watch removes the session
// directory and the job's /dev/shm file, and exits with status 1.
func TestLifelineEOFEndsRank(t *testing.T) {
	userDir := t.TempDir()
	jobID := "123-0badf00d"
	dir := filepath.Join(userDir, jobID)
	os.Mkdir(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "card.0"), []byte("x"), 0o600)
	shm := filepath.Join("/dev/shm", "gorun-"+strconv.Itoa(os.Getuid())+"-"+jobID+"-0123abcd.seg")
	if err := os.WriteFile(shm, nil, 0o600); err != nil {
		t.Skipf("cannot create %s: %v", shm, err)
	}
	t.Cleanup(func() { os.Remove(shm) })

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envHelper+"=lifeline", EnvRank+"=0", EnvLifelineFD+"=3",
		EnvSessionDir+"="+dir, EnvJobID+"="+jobID)
	cmd.ExtraFiles = []*os.File{r}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		w.Close()
		cmd.Wait()
		t.Fatalf("helper said %q; want \"ready\"", line)
	}
	w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("rank ended with %v; want exit status 1", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("rank still runs 10 s after its lifeline closed")
	}
	for _, p := range []string{dir, shm, userDir} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: %v; want it removed", p, err)
		}
	}
}

func TestWatchRejectsBadLifeline(t *testing.T) {
	for _, v := range []string{"x", "1", "999"} {
		t.Setenv(EnvLifelineFD, v)
		err := watchLifeline()
		if err == nil || !strings.Contains(err.Error(), EnvLifelineFD) {
			t.Errorf("watchLifeline with %s=%s = %v; want an error naming the variable", EnvLifelineFD, v, err)
		}
	}
}
