package pmi

import (
	"bufio"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawRank is one rank's side of a connection to a Server, speaking the
// wire protocol by hand.
type rawRank struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
	err  chan error
}

func dialServer(t *testing.T, s *Server, rank int) *rawRank {
	a, b := net.Pipe()
	rr := &rawRank{t: t, conn: a, r: bufio.NewReader(a), err: make(chan error, 1)}
	go func() { rr.err <- s.Serve(b, rank); b.Close() }()
	t.Cleanup(func() { a.Close() })
	return rr
}

func (rr *rawRank) init() {
	if err := WriteV1(rr.conn, NewMsg("init", "pmi_version", "2", "pmi_subversion", "0")); err != nil {
		rr.t.Fatal(err)
	}
	m, err := ReadV1(rr.r)
	if err != nil || m.Cmd != "response_to_init" {
		rr.t.Fatalf("init: %v, %v", m, err)
	}
}

func (rr *rawRank) call(cmd string, kv ...string) Msg {
	if err := WriteV2(rr.conn, NewMsg(cmd, kv...)); err != nil {
		rr.t.Errorf("%s: %v", cmd, err)
		return Msg{}
	}
	m, err := ReadV2(rr.r)
	if err != nil {
		rr.t.Errorf("%s: reading the answer: %v", cmd, err)
	}
	return m
}

func val(m Msg, key string) string { v, _ := m.Get(key); return v }

// TestServerWireUp: three ranks init, put a card each, fence, read every
// card and the process mapping, finalize.
func TestServerWireUp(t *testing.T) {
	const size = 3
	s := NewServer("job.0", size, []int{0, 0, 1}, map[string]string{"PMI_process_mapping": "(vector,(0,1,2),(1,1,1))"})
	var wg sync.WaitGroup
	for r := range size {
		rr := dialServer(t, s, r)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rr.init()
			m := rr.call("fullinit", "pmijobid", "job.0", "pmirank", strconv.Itoa(r), "threaded", "FALSE")
			if val(m, "rc") != "0" || val(m, "rank") != strconv.Itoa(r) || val(m, "size") != "3" {
				t.Errorf("rank %d: fullinit: %v", r, m)
			}
			if m := rr.call("job-getid"); val(m, "jobid") != "job.0" {
				t.Errorf("rank %d: job-getid: %v", r, m)
			}
			rr.call("kvs-put", "key", "card-"+strconv.Itoa(r), "value", "addr;"+strconv.Itoa(r))
			if m := rr.call("kvs-get", "jobid", "job.0", "srcid", "-1", "key", "card-"+strconv.Itoa(r)); val(m, "found") != "FALSE" {
				t.Errorf("rank %d: a put is visible before the fence: %v", r, m)
			}
			if m := rr.call("kvs-fence"); val(m, "rc") != "0" {
				t.Errorf("rank %d: fence: %v", r, m)
			}
			for p := range size {
				m := rr.call("kvs-get", "jobid", "job.0", "srcid", "-1", "key", "card-"+strconv.Itoa(p))
				if val(m, "found") != "TRUE" || val(m, "value") != "addr;"+strconv.Itoa(p) {
					t.Errorf("rank %d: card of %d: %v", r, p, m)
				}
			}
			if m := rr.call("info-getjobattr", "key", "PMI_process_mapping"); val(m, "value") != "(vector,(0,1,2),(1,1,1))" {
				t.Errorf("rank %d: mapping: %v", r, m)
			}
			if m := rr.call("info-getjobattr", "key", "nope"); val(m, "found") != "FALSE" {
				t.Errorf("rank %d: unknown attribute: %v", r, m)
			}
			if !s.Unfinalized(r) {
				t.Errorf("rank %d: wired up but not finalized, and Unfinalized is false", r)
			}
			if m := rr.call("finalize"); val(m, "rc") != "0" {
				t.Errorf("rank %d: finalize: %v", r, m)
			}
			if err := <-rr.err; err != nil {
				t.Errorf("rank %d: Serve: %v", r, err)
			}
			if s.Unfinalized(r) {
				t.Errorf("rank %d: finalized, and Unfinalized is true", r)
			}
		}()
	}
	wg.Wait()
}

// TestServerNodeAttrs: node attributes are shared by the ranks of one node
// only.
func TestServerNodeAttrs(t *testing.T) {
	s := NewServer("j", 3, []int{0, 0, 1}, nil)
	rs := []*rawRank{dialServer(t, s, 0), dialServer(t, s, 1), dialServer(t, s, 2)}
	for _, rr := range rs {
		rr.init()
	}
	rs[0].call("info-putnodeattr", "key", "seg", "value", "x")
	if m := rs[1].call("info-getnodeattr", "key", "seg", "wait", "FALSE"); val(m, "value") != "x" {
		t.Errorf("same node: %v", m)
	}
	if m := rs[2].call("info-getnodeattr", "key", "seg", "wait", "FALSE"); val(m, "found") != "FALSE" {
		t.Errorf("other node: %v", m)
	}
}

// TestServerErrors: a wrong pmirank, an unknown command and a rank that
// ends before a fence get clear errors; thrid is echoed.
func TestServerErrors(t *testing.T) {
	s := NewServer("j", 2, []int{0, 0}, nil)
	r0 := dialServer(t, s, 0)
	r0.init()
	if m := r0.call("fullinit", "pmirank", "1"); val(m, "rc") == "0" || !strings.Contains(val(m, "errmsg"), "belongs to rank 0") {
		t.Errorf("wrong pmirank: %v", m)
	}
	if m := r0.call("frobnicate", "thrid", "7"); val(m, "rc") == "0" || val(m, "thrid") != "7" || !strings.Contains(val(m, "errmsg"), "unknown command") {
		t.Errorf("unknown command: %v", m)
	}
	done := make(chan Msg)
	go func() { done <- r0.call("kvs-fence") }()
	// Rank 1 never connects and ends: the fence rank 0 waits in fails.
	for s.pendingFence() == nil {
		runtime.Gosched()
	}
	s.RankGone(1, "exited with status 0")
	if m := <-done; val(m, "rc") == "0" || !strings.Contains(val(m, "errmsg"), "rank 1 exited with status 0 before joining the fence") {
		t.Errorf("fence with a gone rank: %v", m)
	}
	if m := r0.call("kvs-fence"); val(m, "rc") == "0" {
		t.Errorf("a later fence with a gone rank succeeded: %v", m)
	}
	s.Close()
}

// TestServerRefusesPMI1: the server speaks PMI-2 only and says so.
func TestServerRefusesPMI1(t *testing.T) {
	s := NewServer("j", 1, []int{0}, nil)
	rr := dialServer(t, s, 0)
	WriteV1(rr.conn, NewMsg("init", "pmi_version", "1", "pmi_subversion", "1"))
	if m, err := ReadV1(rr.r); err != nil || val(m, "rc") == "0" {
		t.Errorf("PMI-1 init: %v, %v; want a refusal", m, err)
	}
	if err := <-rr.err; err == nil || !strings.Contains(err.Error(), "PMI-2 only") {
		t.Errorf("Serve: %v", err)
	}
}

// FuzzServe: no byte stream from a rank panics the server or hangs it
// (fences are not reachable: the job has one rank).
func FuzzServe(f *testing.F) {
	f.Add([]byte("cmd=init pmi_version=2 pmi_subversion=0\n14    cmd=kvs-fence;"))
	f.Add([]byte("cmd=init pmi_version=2 pmi_subversion=0\n27    cmd=kvs-put;key=a;value=b;"))
	f.Add([]byte("cmd=init pmi_version=1\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s := NewServer("j", 1, []int{0}, map[string]string{"a": "b"})
		conn := &fuzzConn{in: strings.NewReader(string(in))}
		s.Serve(conn, 0)
	})
}

type fuzzConn struct {
	in *strings.Reader
}

func (c *fuzzConn) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c *fuzzConn) Write(p []byte) (int, error) { return len(p), nil }

// pendingFence returns the fence being joined (tests).
func (s *Server) pendingFence() *fence {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fence
}

// TestServerWithClient: the package's own client wires up against the
// server: the exchange gorun's ranks make on every host.
func TestServerWithClient(t *testing.T) {
	const size = 4
	s := NewServer("gorun.7", size, []int{0, 0, 1, 1}, map[string]string{"PMI_process_mapping": "(vector,(0,2,2))"})
	var wg sync.WaitGroup
	for r := range size {
		a, b := net.Pipe()
		go func() { s.Serve(b, r); b.Close() }()
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Init(a, Env{Rank: r, Size: size, JobID: "gorun.7"}, 10*time.Second)
			if err != nil {
				t.Errorf("rank %d: Init: %v", r, err)
				a.Close()
				return
			}
			if c.Version != 2 || c.Rank != r || c.Size != size || c.JobID != "gorun.7" {
				t.Errorf("rank %d: client %+v", r, c)
			}
			if err := c.Put("card-"+strconv.Itoa(r), "x"+strconv.Itoa(r)); err != nil {
				t.Errorf("rank %d: Put: %v", r, err)
			}
			if err := c.Fence(); err != nil {
				t.Errorf("rank %d: Fence: %v", r, err)
			}
			for p := range size {
				if v, ok, err := c.Get("card-" + strconv.Itoa(p)); err != nil || !ok || v != "x"+strconv.Itoa(p) {
					t.Errorf("rank %d: Get(card-%d) = %q, %v, %v", r, p, v, ok, err)
				}
			}
			m, _, err := c.JobAttr("PMI_process_mapping")
			if nodes, perr := ParseProcessMapping(m, size); err != nil || perr != nil || nodes[r] != r/2 {
				t.Errorf("rank %d: mapping %q: %v, %v, %v", r, m, nodes, err, perr)
			}
			if err := c.Finalize(); err != nil {
				t.Errorf("rank %d: Finalize: %v", r, err)
			}
		}()
	}
	wg.Wait()
}
