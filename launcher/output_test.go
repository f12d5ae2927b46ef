package launcher

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// writeLog records each Write call separately.
type writeLog struct {
	mu     sync.Mutex
	writes []string
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestForwardLines(t *testing.T) {
	long := strings.Repeat("x", maxLine+10)
	tests := []struct {
		name, in, prefix string
		want             []string // one entry per Write
	}{
		{"untagged lines", "a\nb\n", "", []string{"a\n", "b\n"}},
		{"untagged last line kept as is", "a\nb", "", []string{"a\n", "b"}},
		{"tagged lines", "a\n\nb\n", "[3] ", []string{"[3] a\n", "[3] \n", "[3] b\n"}},
		{"tagged last line without newline gets one", "a\nlast", "[0] ", []string{"[0] a\n", "[0] last\n"}},
		{"empty input", "", "[0] ", nil},
		{"a long line is chunked, prefixed once", long + "\nz\n", "[1] ",
			[]string{"[1] " + long[:maxLine], long[maxLine:] + "\n", "[1] z\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w writeLog
			forwardLines(strings.NewReader(tt.in), &sink{w: &w}, tt.prefix)
			if fmt.Sprint(w.writes) != fmt.Sprint(tt.want) || len(w.writes) != len(tt.want) {
				t.Errorf("forwardLines(%.40q, %q) wrote %.200q; want %.200q", tt.in, tt.prefix, w.writes, tt.want)
			}
		})
	}
}

// TestForwardLinesNeverInterleave: many ranks writing to one sink at once;
// every Write is exactly one whole line of one rank.
func TestForwardLinesNeverInterleave(t *testing.T) {
	var w writeLog
	s := &sink{w: &w}
	const ranks, lines = 8, 200
	var wg sync.WaitGroup
	for r := 0; r < ranks; r++ {
		var in bytes.Buffer
		for i := 0; i < lines; i++ {
			fmt.Fprintf(&in, "rank %d line %d %s\n", r, i, strings.Repeat("y", i))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			forwardLines(&in, s, fmt.Sprintf("[%d] ", r))
		}()
	}
	wg.Wait()
	if len(w.writes) != ranks*lines {
		t.Fatalf("%d writes; want %d", len(w.writes), ranks*lines)
	}
	next := make([]int, ranks)
	for _, line := range w.writes {
		var r, r2, i int
		var ys string
		if _, err := fmt.Sscanf(line, "[%d] rank %d line %d %s\n", &r, &r2, &i, &ys); err != nil && i != 0 {
			t.Fatalf("malformed write %q: %v", line, err)
		}
		if r != r2 || i != next[r] || !strings.HasSuffix(line, strings.Repeat("y", i)+"\n") {
			t.Fatalf("write %q: want rank %d's line %d, whole", line, r, next[r])
		}
		next[r]++
	}
}
