package rndv

import (
	"errors"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// wakeFIFO lets every rank waiting for one file published by one rank
// (the all-cards file, the segment descriptor) sleep in the kernel until
// it is published, however many ranks wait: each waiter holds the read end
// of a FIFO beside the file, and the publisher, after the rename, opens
// the FIFO for writing and closes it, which ends every waiter's poll
// (POLLHUP). inotify would do too, but a user may hold only 128 inotify
// instances (fs.inotify.max_user_instances), far fewer than ranks. A
// waiter still re-checks the file every watchPoll, in case it opened the
// FIFO after the publisher closed it.
type wakeFIFO struct {
	fd    int
	path  string
	every time.Duration // the pause between re-checks; watchPoll unless set
}

// fifoPause is the pause between a FIFO holder's own checks of a file that
// n ranks wait for (WaitAllCards): watchPoll, longer beyond 64 ranks. The
// publisher, and the launcher when rank 0 ends before Init (PublishGone),
// wake the waiters, so the checks are only a fallback; each check wakes a
// sleeping Go process (several thread switches), and n ranks rechecking
// every watchPoll while the launcher starts the rest of the job took a
// tenth of the machine at 1024 ranks on two cores (issue 16 item 11).
func fifoPause(n int) time.Duration {
	return max(watchPoll, time.Duration(n)*4*time.Millisecond)
}

func wakePath(dir, name string) string { return filepath.Join(dir, "."+name+".wake") }

// openWake opens the read end of name's wake FIFO in dir (making the FIFO
// if needed); nil when that fails (the caller then polls). Open it before
// the first check of the file.
func openWake(dir, name string) *wakeFIFO {
	path := wakePath(dir, name)
	if err := unix.Mkfifo(path, 0o600); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil
	}
	w := &wakeFIFO{fd: -1, path: path}
	if !w.reopen() {
		return nil
	}
	return w
}

// reopen opens the read end afresh: a read end that has seen its writers
// come and go reports POLLHUP at once from then on.
func (w *wakeFIFO) reopen() bool {
	if w.fd >= 0 {
		unix.Close(w.fd)
	}
	var st unix.Stat_t
	fd, err := unix.Open(w.path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err == nil && (unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO) {
		unix.Close(fd)
		err = unix.EINVAL
	}
	if err != nil {
		w.fd = -1
		return false
	}
	w.fd = fd
	return true
}

func (w *wakeFIFO) close() {
	if w != nil && w.fd >= 0 {
		unix.Close(w.fd)
	}
}

// pause is how long a waiter sleeps: sleep when polling, longer when it
// holds a FIFO (the publisher ends the wait early).
func (w *wakeFIFO) pause(sleep time.Duration) time.Duration {
	if w == nil {
		return sleep
	}
	if w.every > 0 {
		return w.every
	}
	return watchPoll
}

// wait blocks for at most d, or until the publisher wakes us.
func (w *wakeFIFO) wait(d time.Duration) {
	if w == nil || w.fd < 0 {
		time.Sleep(d)
		return
	}
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(d/time.Millisecond)+1)
	switch {
	case errors.Is(err, unix.EINTR):
	case err != nil:
		time.Sleep(d)
	case n > 0:
		w.reopen()
	}
}

// wakeAll wakes every rank waiting on name's FIFO in dir, if any.
func wakeAll(dir, name string) {
	fd, err := unix.Open(wakePath(dir, name), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err == nil {
		unix.Close(fd) // ENXIO (no reader) or ENOENT: nobody waits
	}
}
