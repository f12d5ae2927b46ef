package launcher

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	fw := &frameWriter{w: &buf}
	fw.write(frPMI, 7, []byte("cmd=init"))
	fw.writeJSON(frExit, 4095, exitMsg{Pid: 9, Code: 3, How: "exited with status 3"})
	fw.write(frBye, 0, nil)
	fw.chunks(frStdout, 1, make([]byte, maxFrame+1))
	br := bufio.NewReader(&buf)
	for _, want := range []struct {
		typ  byte
		rank int
		n    int
	}{{frPMI, 7, 8}, {frExit, 4095, -1}, {frBye, 0, 0}, {frStdout, 1, maxFrame}, {frStdout, 1, 1}} {
		f, err := readFrame(br)
		if err != nil || f.typ != want.typ || f.rank != want.rank || want.n >= 0 && len(f.payload) != want.n {
			t.Errorf("readFrame = %c %d %d bytes, %v; want %c %d %d", f.typ, f.rank, len(f.payload), err, want.typ, want.rank, want.n)
		}
	}
	if err := fw.write(frStdout, 0, make([]byte, maxFrame+1)); err == nil {
		t.Error("an oversized frame was written")
	}
}

// FuzzReadFrame: no byte stream panics the reader or makes it allocate
// past maxFrame.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte("P\x00\x00\x00\x01\x00\x00\x00\x02hi"))
	f.Add([]byte("P\xff\xff\xff\xff\x00\x00\x00\x00"))
	f.Add([]byte("P\x00\x00\x00\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReader(bytes.NewReader(in))
		for {
			fr, err := readFrame(br)
			if err != nil {
				return
			}
			if len(fr.payload) > maxFrame || fr.rank >= MaxNP {
				t.Fatalf("frame %c rank %d with %d bytes", fr.typ, fr.rank, len(fr.payload))
			}
		}
	})
}

// TestShQuote: a quoted string reaches sh as one word, unchanged.
func TestShQuote(t *testing.T) {
	for _, s := range []string{"", "plain", "it's", `a "b" $c \d`, "'", "''\n'"} {
		out, err := exec.Command("sh", "-c", "printf %s "+shQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("sh got %q, %v; want %q", out, err, s)
		}
	}
	if sc := bootstrapScript("abc", 12); !strings.Contains(sc, "head -c 12") || !strings.Contains(sc, "exec \"$f\" "+HelperFlag) {
		t.Errorf("bootstrap script:\n%s", sc)
	}
}
