package pmi

// The PMI-2 server gorun runs for a job that spans several hosts: every
// rank, on whichever host, talks to it over its PMI_FD (relayed by the
// remote helper), so ranks use one client everywhere.

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Server is the key-value space and fence of one job of Size ranks. Puts
// become visible to every rank when the fence that follows them completes,
// as under Slurm. A fence completes when every rank has joined it; it fails
// for everyone when a rank that has not joined it ends (RankGone) or the
// job is over (Close). Safe for concurrent use: one Serve per rank.
type Server struct {
	jobID string
	size  int
	attrs map[string]string // job attributes (PMI_process_mapping, ...)
	node  []int             // node index of each rank (node attributes)

	mu        sync.Mutex
	kvs       map[string]string         // committed by the last fence
	staged    map[string]string         // put since the last fence
	nodeAttrs map[int]map[string]string // info-putnodeattr, per node
	fence     *fence                    // the fence being joined
	gone      map[int]string            // ranks that ended, and how
	inited    map[int]bool              // ranks that sent fullinit
	finalized map[int]bool              // ranks that sent finalize
	closed    bool
}

// fence is one round of kvs-fence.
type fence struct {
	joined map[int]bool
	done   chan struct{}
	err    string // set before done is closed when the fence failed
}

// NewServer returns the server of job jobID with size ranks. node gives
// each rank's node index (len(node) == size); attrs are the job attributes
// info-getjobattr answers (PMI_process_mapping among them).
func NewServer(jobID string, size int, node []int, attrs map[string]string) *Server {
	return &Server{jobID: jobID, size: size, node: node, attrs: attrs,
		kvs: map[string]string{}, staged: map[string]string{}, nodeAttrs: map[int]map[string]string{},
		gone: map[int]string{}, inited: map[int]bool{}, finalized: map[int]bool{}}
}

// maxKVS bounds the keys of a job's key-value space (each value is bounded
// by the message size).
const maxKVS = 1 << 20

// Serve speaks PMI-2 with rank over conn until the rank finalizes, the
// connection ends, or a malformed message arrives. rank is the world rank
// of the process at the other end, known from how it was started; a
// fullinit naming another rank is refused. It returns nil after finalize
// or a clean end of the connection.
func (s *Server) Serve(conn io.ReadWriter, rank int) error {
	br := bufio.NewReader(conn)
	init, err := ReadV1(br)
	if err != nil {
		if err == io.EOF {
			return nil
		}
		return fmt.Errorf("pmi server: rank %d: %w", rank, err)
	}
	if v, _ := init.Get("pmi_version"); init.Cmd != "init" || v != "2" {
		WriteV1(conn, NewMsg("response_to_init", "rc", "1", "pmi_version", "2", "pmi_subversion", "0"))
		return fmt.Errorf("pmi server: rank %d opened with %v; this server speaks PMI-2 only (cmd=init pmi_version=2)", rank, init)
	}
	if err := WriteV1(conn, NewMsg("response_to_init", "rc", "0", "pmi_version", "2", "pmi_subversion", "0")); err != nil {
		return err
	}
	for {
		req, err := ReadV2(br)
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("pmi server: rank %d: %w", rank, err)
		}
		resp, final := s.handle(rank, req)
		if resp.Cmd == "" {
			continue // abort: no answer
		}
		if thr, ok := req.Get("thrid"); ok {
			resp.Args = append(resp.Args, Arg{"thrid", thr})
		}
		if err := WriteV2(conn, resp); err != nil {
			return fmt.Errorf("pmi server: rank %d: answering %s: %w", rank, req.Cmd, err)
		}
		if final {
			return nil
		}
	}
}

// handle answers one request; final is true after finalize.
func (s *Server) handle(rank int, req Msg) (resp Msg, final bool) {
	fail := func(format string, args ...any) Msg {
		return NewMsg(req.Cmd+"-response", "rc", "1", "errmsg", fmt.Sprintf(format, args...))
	}
	get := func(key string) string { v, _ := req.Get(key); return v }
	switch req.Cmd {
	case "fullinit":
		if r, ok := req.Get("pmirank"); ok && r != strconv.Itoa(rank) {
			return fail("pmirank=%s, but this connection belongs to rank %d", r, rank), false
		}
		s.mu.Lock()
		s.inited[rank] = true
		s.mu.Unlock()
		return NewMsg("fullinit-response", "rc", "0", "pmi-version", "2", "pmi-subversion", "0",
			"rank", strconv.Itoa(rank), "size", strconv.Itoa(s.size), "appnum", "0",
			"debugged", "FALSE", "pmiverbose", "FALSE"), false
	case "job-getid":
		return NewMsg("job-getid-response", "rc", "0", "jobid", s.jobID), false
	case "kvs-put":
		key, ok := req.Get("key")
		if !ok || key == "" {
			return fail("kvs-put without a key"), false
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.kvs)+len(s.staged) >= maxKVS {
			return fail("the key-value space is full (%d keys)", maxKVS), false
		}
		s.staged[key] = get("value")
		return NewMsg("kvs-put-response", "rc", "0"), false
	case "kvs-get":
		if id, ok := req.Get("jobid"); ok && id != s.jobID && id != "" {
			return fail("jobid %s; this job is %s", id, s.jobID), false
		}
		s.mu.Lock()
		v, ok := s.kvs[get("key")]
		s.mu.Unlock()
		return found("kvs-get-response", v, ok), false
	case "kvs-fence":
		if err := s.joinFence(rank); err != "" {
			return fail("%s", err), false
		}
		return NewMsg("kvs-fence-response", "rc", "0"), false
	case "info-getjobattr":
		v, ok := s.attrs[get("key")]
		return found("info-getjobattr-response", v, ok), false
	case "info-putnodeattr":
		s.mu.Lock()
		defer s.mu.Unlock()
		n := s.nodeOf(rank)
		if s.nodeAttrs[n] == nil {
			s.nodeAttrs[n] = map[string]string{}
		}
		s.nodeAttrs[n][get("key")] = get("value")
		return NewMsg("info-putnodeattr-response", "rc", "0"), false
	case "info-getnodeattr":
		s.mu.Lock()
		v, ok := s.nodeAttrs[s.nodeOf(rank)][get("key")]
		s.mu.Unlock()
		return found("info-getnodeattr-response", v, ok), false
	case "finalize":
		s.mu.Lock()
		s.finalized[rank] = true
		s.mu.Unlock()
		return NewMsg("finalize-response", "rc", "0"), true
	case "abort":
		return Msg{}, false // the rank exits; its launcher reports it
	}
	return fail("unknown command %q", req.Cmd), false
}

func found(cmd, v string, ok bool) Msg {
	if !ok {
		return NewMsg(cmd, "rc", "0", "found", "FALSE")
	}
	return NewMsg(cmd, "rc", "0", "found", "TRUE", "value", v)
}

func (s *Server) nodeOf(rank int) int {
	if rank >= 0 && rank < len(s.node) {
		return s.node[rank]
	}
	return 0
}

// joinFence adds rank to the current fence and waits for it to complete.
// It returns "" on success, else why the fence failed.
func (s *Server) joinFence(rank int) string {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "the job is ending"
	}
	if s.fence == nil {
		s.fence = &fence{joined: map[int]bool{}, done: make(chan struct{})}
	}
	f := s.fence
	if f.joined[rank] {
		s.mu.Unlock()
		return fmt.Sprintf("rank %d joined the same fence twice", rank)
	}
	f.joined[rank] = true
	if why := s.goneError(f); why != "" {
		s.failFence(why)
	} else if len(f.joined) == s.size {
		for k, v := range s.staged {
			s.kvs[k] = v
		}
		clear(s.staged)
		s.fence = nil
		close(f.done)
	}
	s.mu.Unlock()
	<-f.done
	return f.err
}

// goneError names a rank that ended without joining f ("" if none).
func (s *Server) goneError(f *fence) string {
	for r, how := range s.gone {
		if !f.joined[r] {
			return fmt.Sprintf("rank %d %s before joining the fence", r, how)
		}
	}
	return ""
}

// failFence ends the current fence with an error; s.mu is held.
func (s *Server) failFence(why string) {
	if f := s.fence; f != nil {
		f.err = why
		s.fence = nil
		close(f.done)
	}
}

// RankGone records that rank ended (how: "exited with status 0", ...): a
// fence it has not joined, now or later, fails for every rank.
func (s *Server) RankGone(rank int, how string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone[rank] = how
	if f := s.fence; f != nil && !f.joined[rank] {
		s.failFence(fmt.Sprintf("rank %d %s before joining the fence", rank, how))
	}
}

// Unfinalized reports whether rank wired up (fullinit) and has not
// finalized: a rank that ends so may leave its peers waiting for it. A
// client answers finalize only after the server recorded it, so a rank's
// finalize is seen before its exit.
func (s *Server) Unfinalized(rank int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inited[rank] && !s.finalized[rank]
}

// Close fails the fence in progress and every later one: the job is over.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.failFence("the job is ending")
}
