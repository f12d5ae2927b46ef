package launcher

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
)

// maxLine bounds the bytes held for one line. A longer line is forwarded in
// chunks of this size; NB: another rank's line may then land between two
// chunks (the alternative, holding the sink until the newline, would let
// one rank stall every other rank's output).
const maxLine = 64 << 10

// sink is one of gorun's output streams, shared by every rank's forwarder
// and by gorun's own messages. mu serializes writes so that each line goes
// out in one piece.
//
// A write that fails (the reader of a pipe is gone: `gorun ... | head`)
// makes the sink discard everything after it, as Open MPI's output
// forwarding does: the forwarders keep draining the ranks' pipes, so no
// rank blocks or gets SIGPIPE, the job runs to its end and gorun cleans up
// as always (Run turns SIGPIPE into an EPIPE error, see ignoreSIGPIPE).
type sink struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool // a write failed; later output is discarded
}

func (s *sink) write(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if _, err := s.w.Write(b); err != nil {
		s.closed = true // nowhere to report a failed write of the user's output
	}
}

// printf writes one message line of gorun's own.
func (s *sink) printf(format string, args ...any) {
	s.write(fmt.Appendf(nil, format+"\n", args...))
}

// forwardLines copies r to s line by line until r ends. With a non-empty
// prefix, every line is prefixed, and a last line without a newline gets
// one, so that it cannot merge with the next rank's line.
func forwardLines(r io.Reader, s *sink, prefix string) {
	br := bufio.NewReaderSize(r, maxLine)
	atStart := true
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			buf = buf[:0]
			if atStart {
				buf = append(buf, prefix...)
			}
			buf = append(buf, chunk...)
			atStart = chunk[len(chunk)-1] == '\n'
			if !atStart && err != nil && !errors.Is(err, bufio.ErrBufferFull) && prefix != "" {
				buf = append(buf, '\n')
			}
			s.write(buf)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// clip shortens what the user gave (a program path, a --host list, a host
// file's word) for an error message: at most 256 bytes of it are quoted,
// enough for any sensible path or host list.
func clip(s string) string {
	const max = 256
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
