package launcher

// The protocol between gorun and its remote helpers, over the launch
// agent's stdin (gorun → helper) and stdout (helper → gorun).
//
// After the bootstrap (see bootstrapScript), the helper writes the line
// helperMagic, then both directions carry frames:
//
//	type  1 byte
//	rank  4 bytes, big endian (or 0 when the frame is not about a rank)
//	len   4 bytes, big endian, at most maxFrame
//	payload
//
// Control payloads (hello, spec, exit, file) are JSON; data payloads
// (output, PMI bytes, stdin, file data) are raw.

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Frame types.
const (
	// helper → gorun
	frHello   byte = 'H' // helloMsg
	frNeed    byte = 'N' // the helper lacks a file: fileMsg (hash)
	frStarted byte = 'S' // rank started: startedMsg
	frStdout  byte = 'o' // a rank's stdout line(s)
	frStderr  byte = 'e' // a rank's stderr line(s)
	frExit    byte = 'X' // a rank ended: exitMsg
	frFatal   byte = 'F' // the helper cannot go on: the payload says why
	frBye     byte = 'B' // the helper has cleaned up and exits

	// gorun → helper
	frSpec     byte = 'J' // specMsg: what to run
	frFile     byte = 'f' // a chunk of the file the helper asked for; empty: the end
	frStdin    byte = 'i' // rank 0's stdin; empty: end of file
	frSignal   byte = 'K' // signal the live ranks: one byte, the signal number
	frShutdown byte = 'Q' // tear down (ranks, files) and exit

	// both ways
	frPMI byte = 'P' // PMI bytes of one rank
)

// maxFrame bounds a frame's payload.
const maxFrame = 1 << 20

// helperMagic is the helper's first line, before any frame.
const helperMagic = "gorun-helper 1"

type frame struct {
	typ     byte
	rank    int
	payload []byte
}

// frameWriter writes whole frames; safe for concurrent use.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (fw *frameWriter) write(typ byte, rank int, payload []byte) error {
	if len(payload) > maxFrame {
		return fmt.Errorf("frame of %d bytes; at most %d", len(payload), maxFrame)
	}
	var hdr [9]byte
	hdr[0] = typ
	binary.BigEndian.PutUint32(hdr[1:5], uint32(rank))
	binary.BigEndian.PutUint32(hdr[5:9], uint32(len(payload)))
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if _, err := fw.w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := fw.w.Write(payload)
	return err
}

func (fw *frameWriter) writeJSON(typ byte, rank int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return fw.write(typ, rank, b)
}

// chunks writes data as frames of at most maxFrame bytes.
func (fw *frameWriter) chunks(typ byte, rank int, data []byte) error {
	for len(data) > 0 {
		n := min(len(data), maxFrame)
		if err := fw.write(typ, rank, data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// readFrame reads one frame; io.EOF means a clean end between frames.
func readFrame(r *bufio.Reader) (frame, error) {
	var hdr [9]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return frame{}, fmt.Errorf("connection closed inside a frame header")
		}
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(hdr[5:9])
	if n > maxFrame {
		return frame{}, fmt.Errorf("frame of %d bytes; at most %d", n, maxFrame)
	}
	rank := binary.BigEndian.Uint32(hdr[1:5])
	if rank >= MaxNP {
		return frame{}, fmt.Errorf("frame for rank %d; at most %d", rank, MaxNP-1)
	}
	f := frame{typ: hdr[0], rank: int(rank), payload: make([]byte, n)}
	if _, err := io.ReadFull(r, f.payload); err != nil {
		return frame{}, fmt.Errorf("connection closed inside a frame of %d bytes", n)
	}
	return f, nil
}

// helloMsg: the helper is up.
type helloMsg struct {
	Host  string // its host name
	Cores int    // its core count (default slots)
	Pid   int
}

// fileMsg names a file by the SHA-256 of its contents.
type fileMsg struct {
	Hash string
	Size int64
}

// specMsg tells a helper what to run.
type specMsg struct {
	JobID     string   // gorun's job id (PMI_JOBID)
	Size      int      // ranks in the job
	Node      int      // this host's index among the hosts with ranks
	Nodes     int      // hosts with ranks
	First     int      // first rank on this host
	Count     int      // ranks on this host
	Path      string   // executable to run, when Program is nil
	Program   *fileMsg // the executable gorun brings (cached by hash)
	Name      string   // base name for a brought executable
	Args      []string // the program's arguments
	Env       []string // added to the helper's environment for every rank
	Dir       string   // working directory (when it exists on the host)
	TagOutput bool
	Stdin     bool // rank 0 is here and gets gorun's stdin frames
	Backing   string
	Bind      bool // bind each rank to its share of the host's CPUs (bind.go)
}

// startedMsg: a rank runs.
type startedMsg struct {
	Pid int
}

// exitMsg: a rank ended.
type exitMsg struct {
	Pid   int
	Code  int    // gorun's status for it: 0, the exit status, or 128+signal
	How   string // "exited with status 3", "killed by signal SIGKILL"
	Abort *int   // the code it passed to Abort, if it did
	Card  bool   // it had joined the wire-up (for the "gone" rule)
}
