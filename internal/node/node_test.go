package node

import (
	"os"
	"testing"
)

func TestName(t *testing.T) {
	h, _ := os.Hostname()
	if h == "" {
		h = "localhost"
	}
	if got := Name(); got != h {
		t.Fatalf("Name() = %q, want the hostname %q", got, h)
	}
	SetName("node-7")
	if got := Name(); got != "node-7" {
		t.Fatalf("after SetName(\"node-7\"): Name() = %q", got)
	}
	SetName("")
	if got := Name(); got != h {
		t.Fatalf("after SetName(\"\"): Name() = %q, want the hostname %q", got, h)
	}
}
