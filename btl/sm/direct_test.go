package sm

import (
	"fmt"
	"testing"

	"github.com/gorun-mpi/gorun/btl"
)

// taker is a btl.Taker that takes what accept allows and records it.
type taker struct {
	accept bool
	got    []string
}

func (k *taker) Take(src int, _ btl.Tag, data []byte) bool {
	if k.accept {
		k.got = append(k.got, fmt.Sprintf("%d:%s", src, data))
	}
	return k.accept
}

// TestTakeFrom: a waiting receive gets src's next box message when its
// tag is the one asked for and it takes it (then the callback never sees
// it); a message of another tag, or one the taker refuses, stays for the
// usual poll, in order; an empty box says 0; FIFO traffic says -1.
func TestTakeFrom(t *testing.T) {
	cfg := DefaultConfig()
	cfg.FboxThreshold = 1
	mods := newJob(t, 2, cfg)
	const tagA, tagB = btl.Tag(2), btl.Tag(3)
	var cb []string
	for _, tag := range []btl.Tag{tagA, tagB} {
		mods[1].Register(tag, func(src int, data []byte) { cb = append(cb, fmt.Sprintf("%d/%d:%s", tag, src, data)) })
	}
	send := func(tag btl.Tag, s string) {
		t.Helper()
		if _, err := mods[0].Send(1, tag, nil, []byte(s), nil); err != nil {
			t.Fatal(err)
		}
	}
	// The first message sets up the box (threshold 1) and goes by the FIFO.
	send(tagA, "setup")
	if k := (&taker{accept: true}); mods[1].TakeFrom(0, btl.TagsOf(tagA), k) != -1 || len(k.got) != 0 {
		t.Fatalf("TakeFrom with a FIFO slot waiting: took %v; want -1 and nothing taken", k.got)
	}
	pumpUntil(t, mods, func() bool { return len(cb) == 1 })
	if mods[1].peers[0].in == nil {
		t.Fatal("no fast box from rank 0 after the threshold")
	}
	k := &taker{accept: true}
	if n := mods[1].TakeFrom(0, btl.TagsOf(tagA), k); n != 0 {
		t.Fatalf("TakeFrom of an empty box = %d, want 0", n)
	}
	send(tagA, "one")
	send(tagA, "two")
	if n := mods[1].TakeFrom(0, btl.TagsOf(tagA), k); n != 1 || fmt.Sprint(k.got) != "[0:one]" {
		t.Fatalf("TakeFrom = %d, took %v; want 1, [0:one]", n, k.got)
	}
	if n := mods[1].TakeFrom(0, btl.TagsOf(tagB), k); n != -1 {
		t.Fatalf("TakeFrom for another tag = %d, want -1", n)
	}
	if n := mods[1].TakeFrom(0, btl.TagsOf(tagA), &taker{accept: false}); n != -1 {
		t.Fatalf("TakeFrom refused by the taker = %d, want -1", n)
	}
	send(tagB, "three")
	pumpUntil(t, mods, func() bool { return len(cb) == 3 })
	if want := "[2/0:setup 2/0:two 3/0:three]"; fmt.Sprint(cb) != want {
		t.Fatalf("the callback got %v, want %s", cb, want)
	}
	if fmt.Sprint(k.got) != "[0:one]" {
		t.Fatalf("the taker got %v, want [0:one]", k.got)
	}
	if n := mods[1].TakeFrom(0, btl.TagsOf(tagA), k); n != 0 {
		t.Fatalf("TakeFrom of the drained box = %d, want 0", n)
	}
	if got, want := mods[1].peers[0].in.ctl.rd.Load(), mods[1].peers[0].in.r; got != want {
		t.Fatalf("read position published %d after an empty look; want %d", got, want)
	}
	if n := mods[1].TakeFrom(5, btl.TagsOf(tagA), k); n != -1 {
		t.Fatalf("TakeFrom of a rank outside the job = %d, want -1", n)
	}
}
