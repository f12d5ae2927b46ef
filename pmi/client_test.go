package pmi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer is a minimal PMI server for n clients, in the manner of
// Slurm's (version 2, strict fullinit) or a PMI-1-only one.
type fakeServer struct {
	n       int
	v1Only  bool
	mapping string

	mu    sync.Mutex
	kvs   map[string]string
	fence *sync.Cond
	in    int // clients inside the current fence
	gen   int
	log   []string
}

func newFakeServer(n int, v1Only bool) *fakeServer {
	s := &fakeServer{n: n, v1Only: v1Only, kvs: map[string]string{}, mapping: fmt.Sprintf("(vector,(0,1,%d))", n)}
	s.fence = sync.NewCond(&s.mu)
	return s
}

func (s *fakeServer) barrier() {
	s.mu.Lock()
	defer s.mu.Unlock()
	gen := s.gen
	s.in++
	if s.in == s.n {
		s.in, s.gen = 0, s.gen+1
		s.fence.Broadcast()
		return
	}
	for gen == s.gen {
		s.fence.Wait()
	}
}

func (s *fakeServer) serve(t *testing.T, conn net.Conn, rank int) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	m, err := ReadV1(r)
	if err != nil || m.Cmd != "init" {
		t.Errorf("server: first message %v, %v", m, err)
		return
	}
	v, _ := m.Get("pmi_version")
	if v == "2" && s.v1Only {
		WriteV1(conn, NewMsg("response_to_init", "rc", "-1", "pmi_version", "1", "pmi_subversion", "1"))
		if m, err = ReadV1(r); err != nil {
			return
		}
		v, _ = m.Get("pmi_version")
	}
	WriteV1(conn, NewMsg("response_to_init", "rc", "0", "pmi_version", v, "pmi_subversion", "0"))
	if v == "1" {
		s.serveV1(conn, r)
		return
	}
	for {
		m, err := ReadV2(r)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.log = append(s.log, m.String())
		s.mu.Unlock()
		var resp Msg
		switch m.Cmd {
		case "fullinit":
			id, _ := m.Get("pmijobid")
			pr, _ := m.Get("pmirank")
			if id != "7.0" || pr != strconv.Itoa(rank) {
				resp = NewMsg("fullinit-response", "rc", "3")
			} else {
				resp = NewMsg("fullinit-response", "rc", "0", "pmi-version", "2", "pmi-subversion", "0",
					"rank", strconv.Itoa(rank), "size", strconv.Itoa(s.n), "appnum", "-1", "debugged", "FALSE", "pmiverbose", "FALSE")
			}
		case "job-getid":
			resp = NewMsg("job-getid-response", "rc", "0", "jobid", "7.0")
		case "kvs-put":
			k, _ := m.Get("key")
			val, _ := m.Get("value")
			s.mu.Lock()
			s.kvs[k] = val
			s.mu.Unlock()
			resp = NewMsg("kvs-put-response", "rc", "0")
		case "kvs-fence":
			s.barrier()
			resp = NewMsg("kvs-fence-response", "rc", "0")
		case "kvs-get":
			k, _ := m.Get("key")
			s.mu.Lock()
			val, ok := s.kvs[k]
			s.mu.Unlock()
			if ok {
				resp = NewMsg("kvs-get-response", "rc", "0", "found", "TRUE", "value", val)
			} else {
				resp = NewMsg("kvs-get-response", "rc", "0", "found", "FALSE")
			}
		case "info-getjobattr":
			if k, _ := m.Get("key"); k == "PMI_process_mapping" {
				resp = NewMsg("info-getjobattr-response", "rc", "0", "found", "TRUE", "value", s.mapping)
			} else {
				resp = NewMsg("info-getjobattr-response", "rc", "0", "found", "FALSE")
			}
		case "finalize":
			WriteV2(conn, NewMsg("finalize-response", "rc", "0"))
			return
		default:
			resp = NewMsg(m.Cmd+"-response", "rc", "1")
		}
		WriteV2(conn, resp)
	}
}

func (s *fakeServer) serveV1(conn net.Conn, r *bufio.Reader) {
	for {
		m, err := ReadV1(r)
		if err != nil {
			return
		}
		var resp Msg
		switch m.Cmd {
		case "get_maxes":
			resp = NewMsg("maxes", "rc", "0", "kvsname_max", "256", "keylen_max", "64", "vallen_max", "1024")
		case "get_my_kvsname":
			resp = NewMsg("my_kvsname", "rc", "0", "kvsname", "8.0")
		case "get_universe_size":
			resp = NewMsg("universe_size", "rc", "0", "size", strconv.Itoa(s.n))
		case "get_appnum":
			resp = NewMsg("appnum", "rc", "0", "appnum", "0")
		case "put":
			k, _ := m.Get("key")
			val, _ := m.Get("value")
			s.mu.Lock()
			s.kvs[k] = val
			s.mu.Unlock()
			resp = NewMsg("put_result", "rc", "0")
		case "barrier_in":
			s.barrier()
			resp = NewMsg("barrier_out", "rc", "0")
		case "get":
			k, _ := m.Get("key")
			s.mu.Lock()
			val, ok := s.kvs[k]
			s.mu.Unlock()
			if k == "PMI_process_mapping" {
				val, ok = s.mapping, true
			}
			if ok {
				resp = NewMsg("get_result", "rc", "0", "value", val)
			} else {
				resp = NewMsg("get_result", "rc", "-1", "msg", "key_not_found")
			}
		case "finalize":
			WriteV1(conn, NewMsg("finalize_ack", "rc", "0"))
			return
		}
		WriteV1(conn, resp)
	}
}

// runJob starts n clients against s and checks a full wire-up from each.
func runJob(t *testing.T, s *fakeServer, env func(rank int) Env) {
	var wg sync.WaitGroup
	for rank := 0; rank < s.n; rank++ {
		a, b := net.Pipe()
		wg.Add(2)
		go func() { defer wg.Done(); s.serve(t, b, rank) }()
		go func() {
			defer wg.Done()
			c, err := Init(a, env(rank), 10*time.Second)
			if err != nil {
				t.Errorf("rank %d: Init: %v", rank, err)
				a.Close()
				return
			}
			wantV := 2
			if s.v1Only {
				wantV = 1
			}
			if c.Rank != rank || c.Size != s.n || c.Version != wantV {
				t.Errorf("rank %d: Init gave rank %d size %d version %d", rank, c.Rank, c.Size, c.Version)
			}
			if err := c.Put("card-"+strconv.Itoa(rank), "addr;"+strconv.Itoa(rank)); err != nil {
				t.Errorf("rank %d: Put: %v", rank, err)
			}
			if err := c.Fence(); err != nil {
				t.Errorf("rank %d: Fence: %v", rank, err)
			}
			for p := 0; p < s.n; p++ {
				v, found, err := c.Get("card-" + strconv.Itoa(p))
				if err != nil || !found || v != "addr;"+strconv.Itoa(p) {
					t.Errorf("rank %d: Get(card-%d) = %q, %v, %v", rank, p, v, found, err)
				}
			}
			if v, found, err := c.Get("nosuch"); err != nil || found {
				t.Errorf("rank %d: Get(nosuch) = %q, %v, %v; want not found", rank, v, found, err)
			}
			m, found, err := c.JobAttr("PMI_process_mapping")
			if err != nil || !found || m != s.mapping {
				t.Errorf("rank %d: JobAttr = %q, %v, %v", rank, m, found, err)
			}
			if err := c.Finalize(); err != nil {
				t.Errorf("rank %d: Finalize: %v", rank, err)
			}
		}()
	}
	wg.Wait()
}

func TestClientV2(t *testing.T) {
	s := newFakeServer(3, false)
	runJob(t, s, func(r int) Env { return Env{Rank: r, Size: -1, JobID: "7.0"} })
	if !strings.Contains(strings.Join(s.log, "\n"), "cmd=fullinit pmijobid=7.0 pmirank=") {
		t.Errorf("fullinit lacks pmijobid/pmirank; server log:\n%s", strings.Join(s.log, "\n"))
	}
}

func TestClientV1Fallback(t *testing.T) {
	s := newFakeServer(2, true)
	runJob(t, s, func(r int) Env { return Env{Rank: r, Size: 2} })
	s = newFakeServer(2, true)
	runJob(t, s, func(r int) Env { return Env{Rank: r, Size: -1} }) // size from get_universe_size
}

func TestClientStrictFullinit(t *testing.T) {
	// Without PMI_JOBID, a Slurm-like server answers rc=3: Init must fail
	// with an error that names the failure.
	s := newFakeServer(1, false)
	a, b := net.Pipe()
	go s.serve(t, b, 0)
	_, err := Init(a, Env{Rank: 0, Size: 1}, 5*time.Second)
	a.Close()
	if err == nil || !strings.Contains(err.Error(), "fullinit") || !strings.Contains(err.Error(), "rc=3") {
		t.Errorf("Init without a job id: %v; want a fullinit rc=3 error", err)
	}
}

func TestClientServerGone(t *testing.T) {
	a, b := net.Pipe()
	go func() {
		r := bufio.NewReader(b)
		ReadV1(r)
		b.Close()
	}()
	_, err := Init(a, Env{Rank: 0, Size: 1, JobID: "1.0"}, 5*time.Second)
	a.Close()
	if err == nil || !strings.Contains(err.Error(), "init") {
		t.Errorf("Init against a vanishing server: %v; want an error naming init", err)
	}
	// A server that never answers: the timeout ends the wait.
	a, b = net.Pipe()
	go io.Copy(io.Discard, b)
	_, err = Init(a, Env{Rank: 0, Size: 1, JobID: "1.0"}, 50*time.Millisecond)
	a.Close()
	b.Close()
	if err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("Init against a silent server: %v; want a timeout error", err)
	}
}

func TestLookupEnv(t *testing.T) {
	t.Setenv("PMI_FD", "")
	tests := []struct {
		fd, rank, size string
		want           Env
		err            bool
	}{
		{"5", "3", "4", Env{FD: 5, Rank: 3, Size: 4, JobID: "7.0"}, false},
		{"x", "3", "4", Env{}, true},
		{"5", "-1", "4", Env{}, true},
		{"5", "1", "0", Env{}, true},
	}
	t.Setenv("PMI_JOBID", "7.0")
	for _, tt := range tests {
		t.Setenv("PMI_FD", tt.fd)
		t.Setenv("PMI_RANK", tt.rank)
		t.Setenv("PMI_SIZE", tt.size)
		e, err := LookupEnv()
		if (err != nil) != tt.err || (err == nil && e != tt.want) {
			t.Errorf("LookupEnv(%s,%s,%s) = %+v, %v", tt.fd, tt.rank, tt.size, e, err)
		}
	}
}

func TestParseProcessMapping(t *testing.T) {
	tests := []struct {
		s    string
		size int
		want []int
	}{
		{"(vector,(0,3,2))", 6, []int{0, 0, 1, 1, 2, 2}},
		{"(vector,(0,3,1))", 6, []int{0, 1, 2, 0, 1, 2}},
		{"(vector,(0,2,1))", 2, []int{0, 1}},
		{"(vector,(0,1,4))", 4, []int{0, 0, 0, 0}},
		{"(vector,(0,2,2),(2,1,1))", 5, []int{0, 0, 1, 1, 2}},
		{" (vector, (0,2,2)) ", 3, []int{0, 0, 1}},
		{"(vector,(1,2,1))", 4, []int{1, 2, 1, 2}},
	}
	for _, tt := range tests {
		got, err := ParseProcessMapping(tt.s, tt.size)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseProcessMapping(%q, %d) = %v, %v; want %v", tt.s, tt.size, got, err, tt.want)
		}
	}
	for _, s := range []string{"", "(vector)", "(vector,(0,3))", "(vector,(0,0,2))", "(vector,(0,2,0))",
		"(vector,(a,1,1))", "(vector,(0,1,1)", "(list,(0,1,1))", "(vector,(0,1,1),)", "(vector,(-1,1,1))"} {
		if _, err := ParseProcessMapping(s, 4); err == nil || !strings.Contains(err.Error(), "PMI_process_mapping") {
			t.Errorf("ParseProcessMapping(%q) error %v; want one naming PMI_process_mapping", s, err)
		}
	}
	if _, err := ParseProcessMapping("(vector,(0,1,1))", 0); err == nil {
		t.Errorf("ParseProcessMapping for 0 ranks succeeded")
	}
}

func FuzzParseProcessMapping(f *testing.F) {
	for _, s := range []string{"(vector,(0,3,2))", "(vector,(0,3,1))", "(vector,(0,2,2),(2,1,1))", "(vector)", "(vector,(0,0,0))"} {
		f.Add(s, 6)
	}
	f.Fuzz(func(t *testing.T, s string, size int) {
		if size < 1 || size > 4096 {
			return
		}
		nodes, err := ParseProcessMapping(s, size)
		if err != nil {
			return
		}
		if len(nodes) != size {
			t.Fatalf("ParseProcessMapping(%q, %d) gave %d entries", s, size, len(nodes))
		}
		for _, n := range nodes {
			if n < 0 {
				t.Fatalf("ParseProcessMapping(%q, %d) gave node %d", s, size, n)
			}
		}
	})
}
