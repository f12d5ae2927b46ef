package rndv

import (
	"bytes"
	"errors"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dirWatch lets a rank that waits for a file of the session directory
// sleep until that file appears (inotify) instead of polling: with many
// ranks on few cores, polling ranks take the cores from the ranks they
// wait for. Events for other names (the cards of other ranks, temporary
// files) are read and ignored, so n waiting ranks are not all woken by
// each of n publications. Without inotify (refused, or too many watches),
// wait is a plain sleep and the callers keep polling.
type dirWatch struct {
	fd  int
	buf [4096]byte
}

// watchPoll is how long a watching waiter sleeps between its own checks
// of the file, in case an event was missed (e.g. a queue overflow).
const watchPoll = 250 * time.Millisecond

// newDirWatch watches dir for files renamed into it; nil when
// inotify is unavailable. Create it before the first check of the file,
// so that no event falls between the check and the watch.
func newDirWatch(dir string) *dirWatch {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	// Every rndv file is published by a rename (WriteAtomic): one event each.
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO); err != nil {
		unix.Close(fd)
		return nil
	}
	return &dirWatch{fd: fd}
}

func (w *dirWatch) close() {
	if w != nil {
		unix.Close(w.fd)
	}
}

// pause returns how long a waiter sleeps: sleep when polling, longer when
// watching (an event ends the wait early).
func (w *dirWatch) pause(sleep time.Duration) time.Duration {
	if w == nil {
		return sleep
	}
	return watchPoll
}

// wait blocks for at most d, or until events name files for which match
// is true. It returns those names, all of them that the events read so
// far carry; none (a nil slice) when d ran out, when the event queue
// overflowed, or without inotify: the caller then looks at the whole
// directory.
func (w *dirWatch) wait(d time.Duration, match func(name string) bool) []string {
	if w == nil {
		time.Sleep(d)
		return nil
	}
	deadline := time.Now().Add(d)
	for {
		rem := time.Until(deadline)
		if rem <= 0 {
			return nil
		}
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(rem/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			time.Sleep(rem)
			return nil
		}
		if n == 0 {
			return nil
		}
		k, err := unix.Read(w.fd, w.buf[:])
		if err != nil {
			continue // EAGAIN: another reader of the same fd; never here
		}
		var names []string
		for off := 0; off+unix.SizeofInotifyEvent <= k; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			end := off + unix.SizeofInotifyEvent + int(ev.Len)
			if end > k {
				break
			}
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				return nil
			}
			if name := string(bytes.TrimRight(w.buf[off+unix.SizeofInotifyEvent:end], "\x00")); match(name) {
				names = append(names, name)
			}
			off = end
		}
		if names != nil {
			return names
		}
	}
}
