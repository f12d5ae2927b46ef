// Package testuser creates a second local user for tests that play a
// hostile local user against gorun. It needs root; without it the test is
// skipped with a message saying so.
//
// Invariant: every user it creates has a name unique to the test run
// (gorun-t<pid>-<random>) and is removed, with its group, at the test's
// cleanup, whether the test passed or not.
package testuser

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"testing"
)

// User is a local user made for one test.
type User struct {
	Name     string
	Uid, Gid int
}

// New creates a user without a home directory or login shell, removed at
// t's cleanup. It skips t when not running as root or without useradd.
func New(t testing.TB) User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a second local user (useradd); skipped")
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("useradd is not installed; cannot create a second local user; skipped")
	}
	var b [3]byte
	rand.Read(b[:])
	name := "gorun-t" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
	if len(name) > 31 {
		name = name[:31]
	}
	out, err := exec.Command("useradd", "-M", "-U", "-s", "/usr/sbin/nologin", name).CombinedOutput()
	if err != nil {
		t.Fatalf("useradd %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v: %s", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("looking up the new user %s: %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return User{Name: name, Uid: uid, Gid: gid}
}

// Chown gives path to u (not following a symbolic link).
func (u User) Chown(t testing.TB, path string) {
	t.Helper()
	if err := os.Lchown(path, u.Uid, u.Gid); err != nil {
		t.Fatal(err)
	}
}
