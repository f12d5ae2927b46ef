package pmi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"
)

// Env is what the process manager tells a process through its environment.
type Env struct {
	FD    int    // PMI_FD: the connected socket to the server
	Rank  int    // PMI_RANK, -1 when unset
	Size  int    // PMI_SIZE, -1 when unset
	JobID string // PMI_JOBID (Slurm: "<job>.<step>"), "" when unset
}

// ErrNoPMI is returned by LookupEnv when PMI_FD is not set.
var ErrNoPMI = errors.New("pmi: PMI_FD is not set")

// LookupEnv reads PMI_FD, PMI_RANK, PMI_SIZE and PMI_JOBID. It returns
// ErrNoPMI when PMI_FD is unset and a clear error when a variable is set
// but malformed.
func LookupEnv() (Env, error) {
	e := Env{Rank: -1, Size: -1, JobID: os.Getenv("PMI_JOBID")}
	if _, ok := os.LookupEnv("PMI_FD"); !ok {
		return e, ErrNoPMI
	}
	for _, v := range []struct {
		name string
		dst  *int
		min  int
	}{{"PMI_FD", &e.FD, 0}, {"PMI_RANK", &e.Rank, 0}, {"PMI_SIZE", &e.Size, 1}} {
		s, ok := os.LookupEnv(v.name)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < v.min {
			return e, fmt.Errorf("pmi: environment variable %s=%q is not an integer ≥ %d", v.name, s, v.min)
		}
		*v.dst = n
	}
	return e, nil
}

// Client is a process's connection to its PMI server. It is not safe for
// concurrent use.
type Client struct {
	conn    io.ReadWriteCloser
	r       *bufio.Reader
	timeout time.Duration

	Version int    // 1 or 2: the protocol the server agreed to
	Rank    int    // this process's rank in the job
	Size    int    // number of processes in the job
	AppNum  int    // application number (-1 when the server gives none)
	JobID   string // the KVS name (PMI-1) or job id (PMI-2)
}

// Dial connects to the server named by e.FD and runs the init handshake
// (see Init). Every exchange, a fence included, must finish within timeout
// (0: no limit).
func Dial(e Env, timeout time.Duration) (*Client, error) {
	f := os.NewFile(uintptr(e.FD), "PMI_FD")
	if f == nil {
		return nil, fmt.Errorf("pmi: PMI_FD=%d is not a valid file descriptor", e.FD)
	}
	conn, err := net.FileConn(f)
	f.Close() // FileConn holds its own duplicate
	if err != nil {
		return nil, fmt.Errorf("pmi: PMI_FD=%d is not a socket: %w", e.FD, err)
	}
	c, err := Init(conn, e, timeout)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// Init runs the handshake on an open connection: PMI-2 (init, fullinit
// carrying pmijobid, pmirank and threaded, job-getid) when the server
// agrees to version 2, PMI-1 (init, get_maxes, get_my_kvsname, rank and
// size from e) when it answers with version 1 or refuses version 2.
func Init(conn io.ReadWriteCloser, e Env, timeout time.Duration) (*Client, error) {
	c := &Client{conn: conn, r: bufio.NewReader(conn), timeout: timeout, AppNum: -1}
	resp, err := c.exchangeV1(NewMsg("init", "pmi_version", "2", "pmi_subversion", "0"), "response_to_init")
	if err != nil {
		return nil, err
	}
	if v, _ := resp.Get("pmi_version"); rcOK(resp) && v == "2" {
		c.Version = 2
		return c, c.initV2(e)
	}
	if v, _ := resp.Get("pmi_version"); !rcOK(resp) || v != "1" {
		// The server refused version 2: ask for version 1.
		resp, err = c.exchangeV1(NewMsg("init", "pmi_version", "1", "pmi_subversion", "1"), "response_to_init")
		if err != nil {
			return nil, err
		}
		if err := rcErr(resp); err != nil {
			return nil, fmt.Errorf("pmi: the server refused PMI versions 2 and 1: %w", err)
		}
	}
	c.Version = 1
	return c, c.initV1(e)
}

func (c *Client) initV2(e Env) error {
	args := []string{}
	if e.JobID != "" {
		args = append(args, "pmijobid", e.JobID)
	}
	if e.Rank >= 0 {
		args = append(args, "pmirank", strconv.Itoa(e.Rank))
	}
	args = append(args, "threaded", "FALSE")
	resp, err := c.exchangeV2(NewMsg("fullinit", args...), "fullinit-response")
	if err != nil {
		return err
	}
	if c.Rank, err = resp.Int("rank"); err != nil {
		return err
	}
	if c.Size, err = resp.Int("size"); err != nil {
		return err
	}
	if n, err := resp.Int("appnum"); err == nil {
		c.AppNum = n
	}
	if c.Size < 1 || c.Rank < 0 || c.Rank >= c.Size {
		return fmt.Errorf("pmi: fullinit-response gives rank %d of size %d", c.Rank, c.Size)
	}
	resp, err = c.exchangeV2(NewMsg("job-getid"), "job-getid-response")
	if err != nil {
		return err
	}
	if id, ok := resp.Get("jobid"); ok && id != "" {
		c.JobID = id
	} else {
		c.JobID = e.JobID
	}
	if c.JobID == "" {
		return fmt.Errorf("pmi: the server gave no job id (job-getid-response %v)", resp)
	}
	return nil
}

func (c *Client) initV1(e Env) error {
	if _, err := c.exchangeV1(NewMsg("get_maxes"), "maxes"); err != nil {
		return err
	}
	resp, err := c.exchangeV1(NewMsg("get_my_kvsname"), "my_kvsname")
	if err != nil {
		return err
	}
	if c.JobID, _ = resp.Get("kvsname"); c.JobID == "" {
		return fmt.Errorf("pmi: my_kvsname response without a kvsname: %v", resp)
	}
	c.Rank, c.Size = e.Rank, e.Size
	if c.Size < 0 {
		resp, err := c.exchangeV1(NewMsg("get_universe_size"), "universe_size")
		if err != nil {
			return err
		}
		if c.Size, err = resp.Int("size"); err != nil {
			return err
		}
	}
	if resp, err := c.exchangeV1(NewMsg("get_appnum"), "appnum"); err == nil {
		if n, err := resp.Int("appnum"); err == nil {
			c.AppNum = n
		}
	} else {
		return err
	}
	if c.Rank < 0 {
		return fmt.Errorf("pmi: the server speaks PMI-1 only and PMI_RANK is not set")
	}
	if c.Size < 1 || c.Rank >= c.Size {
		return fmt.Errorf("pmi: PMI-1 gives rank %d of size %d", c.Rank, c.Size)
	}
	return nil
}

// Put stores key=val in the job's key-value space; other processes see it
// after the next Fence.
func (c *Client) Put(key, val string) error {
	if c.Version == 2 {
		_, err := c.exchangeV2(NewMsg("kvs-put", "key", key, "value", val), "kvs-put-response")
		return err
	}
	_, err := c.exchangeV1(NewMsg("put", "kvsname", c.JobID, "key", key, "value", val), "put_result")
	return err
}

// Fence commits this process's puts and waits until every process of the
// job has called Fence.
func (c *Client) Fence() error {
	if c.Version == 2 {
		_, err := c.exchangeV2(NewMsg("kvs-fence"), "kvs-fence-response")
		return err
	}
	_, err := c.exchangeV1(NewMsg("barrier_in"), "barrier_out")
	return err
}

// Get returns the value another process put under key (before a Fence).
// found is false when the key does not exist.
func (c *Client) Get(key string) (val string, found bool, err error) {
	if c.Version == 2 {
		return c.getV2(NewMsg("kvs-get", "jobid", c.JobID, "srcid", "-1", "key", key), "kvs-get-response")
	}
	return c.getV1(key)
}

// JobAttr returns a job attribute such as PMI_process_mapping.
func (c *Client) JobAttr(key string) (val string, found bool, err error) {
	if c.Version == 2 {
		return c.getV2(NewMsg("info-getjobattr", "key", key), "info-getjobattr-response")
	}
	return c.getV1(key)
}

func (c *Client) getV2(req Msg, want string) (string, bool, error) {
	resp, err := c.roundTrip(req, want, 2)
	if err != nil {
		return "", false, err
	}
	found, _ := resp.Get("found")
	if !rcOK(resp) || found == "FALSE" {
		return "", false, nil
	}
	v, ok := resp.Get("value")
	return v, ok, nil
}

func (c *Client) getV1(key string) (string, bool, error) {
	resp, err := c.roundTrip(NewMsg("get", "kvsname", c.JobID, "key", key), "get_result", 1)
	if err != nil {
		return "", false, err
	}
	if !rcOK(resp) {
		return "", false, nil
	}
	v, ok := resp.Get("value")
	return v, ok, nil
}

// Finalize tells the server this process is done, then closes the
// connection.
func (c *Client) Finalize() error {
	var err error
	if c.Version == 2 {
		_, err = c.exchangeV2(NewMsg("finalize"), "finalize-response")
	} else {
		_, err = c.exchangeV1(NewMsg("finalize"), "finalize_ack")
	}
	if cerr := c.conn.Close(); err == nil {
		err = cerr
	}
	return err
}

// Close closes the connection without finalizing.
func (c *Client) Close() error { return c.conn.Close() }

func (c *Client) exchangeV1(req Msg, want string) (Msg, error) {
	resp, err := c.roundTrip(req, want, 1)
	if err != nil || req.Cmd == "init" {
		return resp, err // init: the caller decides on the version by rc
	}
	return resp, rcErr(resp)
}

func (c *Client) exchangeV2(req Msg, want string) (Msg, error) {
	resp, err := c.roundTrip(req, want, 2)
	if err == nil {
		err = rcErr(resp)
	}
	return resp, err
}

type deadliner interface{ SetDeadline(time.Time) error }

// roundTrip sends req in framing version v and reads the response, which
// must be want.
func (c *Client) roundTrip(req Msg, want string, v int) (Msg, error) {
	if d, ok := c.conn.(deadliner); ok && c.timeout > 0 {
		d.SetDeadline(time.Now().Add(c.timeout))
		defer d.SetDeadline(time.Time{})
	}
	var err error
	if v == 2 {
		err = WriteV2(c.conn, req)
	} else {
		err = WriteV1(c.conn, req)
	}
	if err != nil {
		return Msg{}, fmt.Errorf("pmi: sending %s: %w", req.Cmd, err)
	}
	var resp Msg
	if v == 2 {
		resp, err = ReadV2(c.r)
	} else {
		resp, err = ReadV1(c.r)
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return Msg{}, fmt.Errorf("pmi: no answer to %s within %v", req.Cmd, c.timeout)
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Msg{}, fmt.Errorf("pmi: reading the answer to %s: %w", req.Cmd, err)
	}
	if resp.Cmd != want {
		return resp, fmt.Errorf("pmi: the server answered %s with %q; want %s (%v)", req.Cmd, resp.Cmd, want, resp)
	}
	return resp, nil
}

func rcOK(m Msg) bool {
	rc, ok := m.Get("rc")
	return !ok || rc == "0"
}

func rcErr(m Msg) error {
	if rcOK(m) {
		return nil
	}
	rc, _ := m.Get("rc")
	msg, _ := m.Get("errmsg")
	if msg == "" {
		msg, _ = m.Get("msg")
	}
	if msg != "" {
		return fmt.Errorf("pmi: %s failed: rc=%s: %s", m.Cmd, rc, msg)
	}
	return fmt.Errorf("pmi: %s failed: rc=%s", m.Cmd, rc)
}
