package tcp

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/gorun-mpi/gorun/btl"
)

// syncBuf is a log sink safe for the accept goroutines.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// recordedHello runs a connector's handshake against a fake acceptor and
// returns the hello bytes it sent (what an eavesdropper would capture).
func recordedHello(t *testing.T, secret []byte, self, peer int) []byte {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	got := make(chan []byte, 1)
	go func() {
		ch := append([]byte(magic), bytes.Repeat([]byte{7}, nonceLen)...)
		b.Write(ch)
		hello := make([]byte, helloLen)
		io.ReadFull(b, hello)
		got <- hello
		b.Close()
	}()
	connectHandshake(a, secret, self, peer, time.Second)
	return <-got
}

// TestStrangers: garbage, a wrong secret, a replayed hello and a silent
// connection are all closed by the acceptor and logged at warn; the job's
// own connections keep working.
func TestStrangers(t *testing.T) {
	secret := NewSecret()
	cfg := testConfig()
	cfg.TimeoutSec = 4 // bounds the silent stranger's handshake (and the connect phase)
	var logs syncBuf
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})
	m0, err := Listen(Job{Rank: 0, Size: 2, Secret: secret}, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer m0.Close()
	m1, err := Listen(Job{Rank: 1, Size: 2, Secret: secret}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m1.Close()
	addrs := []string{m0.Addr(), m1.Addr()}

	strangers := []struct {
		name string
		send func(c net.Conn)
	}{
		{"garbage", func(c net.Conn) { c.Write(bytes.Repeat([]byte("GET / HTTP/1.0\r\n"), 8)) }},
		{"wrong secret", func(c net.Conn) { connectHandshake(c, NewSecret(), 1, 0, time.Second) }},
		{"replayed hello", func(c net.Conn) {
			ch := make([]byte, challengeLen)
			io.ReadFull(c, ch)
			c.Write(recordedHello(t, secret, 1, 0))
		}},
		{"silent", func(c net.Conn) {}},
	}
	// Strangers arrive before and during the connect phase.
	var wg sync.WaitGroup
	for _, s := range strangers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp4", m0.Addr())
			if err != nil {
				t.Errorf("%s: %v", s.name, err)
				return
			}
			defer c.Close()
			s.send(c)
			// The module closes the connection: the read ends with EOF
			// or a reset, never with data that proves the secret.
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			rest, _ := io.ReadAll(c)
			if len(rest) > challengeLen {
				t.Errorf("%s: got %d bytes after the challenge", s.name, len(rest))
			}
		}()
	}
	var cwg sync.WaitGroup
	for _, m := range []*Module{m0, m1} {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			if err := m.Connect(addrs); err != nil {
				t.Error(err)
			}
		}()
	}
	cwg.Wait()
	wg.Wait()
	// After setup, a valid-looking connection from a job rank is refused too.
	c, err := net.Dial("tcp4", m0.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if err := connectHandshake(c, secret, 1, 0, 5*time.Second); err == nil {
		t.Errorf("a second connection from rank 1 completed the handshake")
	}
	c.Close()
	// The job's own connection works.
	var got int
	m1.Register(btl.TagPMLMatch, func(int, []byte) { got++ })
	if _, err := m0.Send(1, btl.TagPMLMatch, []byte("hi"), nil, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for got == 0 && time.Now().Before(deadline) {
		m0.Progress()
		m1.Progress()
	}
	if got != 1 {
		t.Fatalf("the job's connection delivered %d messages; want 1", got)
	}
	m0.Close() // waits for the handshake goroutines: the log is complete
	out := logs.String()
	if n := strings.Count(out, "did not authenticate"); n != len(strangers)+1 {
		t.Errorf("%d warnings about dropped connections; want %d:\n%s", n, len(strangers)+1, out)
	}
	for _, want := range []string{"not a gorun tcp hello", "does not prove the job's secret", "not expected to connect"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestHandshakeMutual(t *testing.T) {
	// A connector refuses an acceptor that does not know the secret.
	secret := NewSecret()
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		acceptHandshake(b, NewSecret(), 0, 2, time.Second, nil)
		b.Close()
	}()
	if err := connectHandshake(a, secret, 1, 0, time.Second); err == nil {
		t.Fatal("connector accepted an acceptor with another secret")
	}
}

func FuzzParseHello(f *testing.F) {
	secret := bytes.Repeat([]byte{1}, 32)
	nonceA := bytes.Repeat([]byte{2}, nonceLen)
	good := append([]byte(magic), make([]byte, 8+nonceLen)...)
	good[len(magic)] = 1
	good = append(good, mac(secret, "c2a", nonceA, good[len(magic)+8:], 1, 0)...)
	f.Add(good)
	f.Add([]byte(magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, msg []byte) {
		rank, _, err := parseHello(secret, nonceA, msg, 0, 4)
		if err == nil && (rank < 0 || rank >= 4) {
			t.Fatalf("parseHello accepted rank %d", rank)
		}
		if err == nil && !bytes.Equal(msg, good) {
			t.Fatalf("parseHello accepted a message other than the one valid hello: %x", msg)
		}
	})
}
