package tcp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Handshake messages (fixed sizes):
//
//	acceptor → connector  challenge: magic(8) nonceA(16)
//	connector → acceptor  hello:     magic(8) rankC(4) rankA(4) nonceC(16) mac(32)
//	acceptor → connector  proof:     mac(32)
//
// hello's mac = HMAC-SHA256(secret, "c2a" nonceA nonceC rankC rankA),
// proof's mac = HMAC-SHA256(secret, "a2c" nonceA nonceC rankA rankC).
const (
	magic        = "GRTCP\x00\x01\x00"
	nonceLen     = 16
	macLen       = sha256.Size
	challengeLen = len(magic) + nonceLen
	helloLen     = len(magic) + 8 + nonceLen + macLen
	// MinSecret is the shortest secret accepted.
	MinSecret = 16
)

// errAuth is wrapped by every handshake failure that is the peer's fault.
var errAuth = errors.New("authentication failed")

// NewSecret returns a fresh random per-job secret.
func NewSecret() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("btl/tcp: crypto/rand failed: " + err.Error())
	}
	return b
}

func mac(secret []byte, dir string, nonceA, nonceC []byte, r1, r2 int) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(dir))
	h.Write(nonceA)
	h.Write(nonceC)
	var b [8]byte
	binary.LittleEndian.PutUint32(b[:4], uint32(r1))
	binary.LittleEndian.PutUint32(b[4:], uint32(r2))
	h.Write(b[:])
	return h.Sum(nil)
}

// parseHello checks a hello message against the acceptor's nonce; it
// returns the connector's rank. It never panics on any input.
func parseHello(secret, nonceA, msg []byte, self, size int) (int, []byte, error) {
	if len(msg) != helloLen || string(msg[:len(magic)]) != magic {
		return -1, nil, fmt.Errorf("%w: not a gorun tcp hello", errAuth)
	}
	p := msg[len(magic):]
	rc := int(binary.LittleEndian.Uint32(p))
	ra := int(binary.LittleEndian.Uint32(p[4:]))
	nonceC := p[8 : 8+nonceLen]
	got := p[8+nonceLen:]
	if !hmac.Equal(got, mac(secret, "c2a", nonceA, nonceC, rc, ra)) {
		return -1, nil, fmt.Errorf("%w: the hello does not prove the job's secret", errAuth)
	}
	if ra != self {
		return -1, nil, fmt.Errorf("%w: the hello is for rank %d, this is rank %d", errAuth, ra, self)
	}
	if rc < 0 || rc >= size {
		return -1, nil, fmt.Errorf("%w: the hello comes from rank %d of a %d-rank job", errAuth, rc, size)
	}
	return rc, nonceC, nil
}

// acceptHandshake runs the acceptor's side on c; it returns the
// connector's rank. admit (may be nil) decides, before the acceptor proves
// itself, whether an authenticated rank may connect.
func acceptHandshake(c net.Conn, secret []byte, self, size int, timeout time.Duration, admit func(rank int) error) (int, error) {
	c.SetDeadline(time.Now().Add(timeout))
	defer c.SetDeadline(time.Time{})
	var ch [challengeLen]byte
	copy(ch[:], magic)
	nonceA := ch[len(magic):]
	if _, err := rand.Read(nonceA); err != nil {
		return -1, err
	}
	if _, err := c.Write(ch[:]); err != nil {
		return -1, fmt.Errorf("sending the challenge: %w", err)
	}
	var hello [helloLen]byte
	if _, err := io.ReadFull(c, hello[:]); err != nil {
		return -1, fmt.Errorf("%w: reading the hello: %v", errAuth, err)
	}
	rc, nonceC, err := parseHello(secret, nonceA, hello[:], self, size)
	if err != nil {
		return -1, err
	}
	if admit != nil {
		if err := admit(rc); err != nil {
			return -1, err
		}
	}
	if _, err := c.Write(mac(secret, "a2c", nonceA, nonceC, self, rc)); err != nil {
		return -1, fmt.Errorf("sending the proof: %w", err)
	}
	return rc, nil
}

// connectHandshake runs the connector's side on c, towards rank peer.
func connectHandshake(c net.Conn, secret []byte, self, peer int, timeout time.Duration) error {
	c.SetDeadline(time.Now().Add(timeout))
	defer c.SetDeadline(time.Time{})
	var ch [challengeLen]byte
	if _, err := io.ReadFull(c, ch[:]); err != nil {
		return fmt.Errorf("reading the challenge: %w", err)
	}
	if string(ch[:len(magic)]) != magic {
		return fmt.Errorf("%w: rank %d's address answers with something that is not a gorun tcp challenge", errAuth, peer)
	}
	nonceA := ch[len(magic):]
	var hello [helloLen]byte
	copy(hello[:], magic)
	p := hello[len(magic):]
	binary.LittleEndian.PutUint32(p, uint32(self))
	binary.LittleEndian.PutUint32(p[4:], uint32(peer))
	nonceC := p[8 : 8+nonceLen]
	if _, err := rand.Read(nonceC); err != nil {
		return err
	}
	copy(p[8+nonceLen:], mac(secret, "c2a", nonceA, nonceC, self, peer))
	if _, err := c.Write(hello[:]); err != nil {
		return fmt.Errorf("sending the hello: %w", err)
	}
	var proof [macLen]byte
	if _, err := io.ReadFull(c, proof[:]); err != nil {
		return fmt.Errorf("reading rank %d's proof: %w", peer, err)
	}
	if !hmac.Equal(proof[:], mac(secret, "a2c", nonceA, nonceC, peer, self)) {
		return fmt.Errorf("%w: the process at rank %d's address does not prove the job's secret", errAuth, peer)
	}
	return nil
}
