package mpool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sys/unix"
)

// ErrNoSpace is wrapped by the error Create returns when the backing
// directory cannot hold the segment.
var ErrNoSpace = errors.New("mpool: not enough space for the segment")

// ErrForeign is wrapped by every error about a segment file that is not
// the one local rank 0 of this job created (another user's file put in its
// place, a symbolic link, a copy): attachers refuse to map it.
var ErrForeign = errors.New("mpool: not this job's segment file")

// Token is the random value the creator writes into the Header and passes,
// with the file's device and inode numbers, through the rndv descriptor.
type Token [16]byte

// String is the token as 32 lowercase hex digits (rndv.Segment.Token).
func (t Token) String() string { return hex.EncodeToString(t[:]) }

// ParseToken reads what String writes.
func ParseToken(s string) (Token, error) {
	var t Token
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(t) {
		return t, fmt.Errorf("mpool: segment token %q; want %d hex digits", s, 2*len(t))
	}
	copy(t[:], b)
	return t, nil
}

func randomToken() Token {
	var t Token
	rand.Read(t[:]) // never fails on Linux (getrandom)
	return t
}

// Identity names the one file the creator made: an attacher maps a file
// only when its device and inode numbers and the Header's token match.
type Identity struct {
	Token    Token
	Dev, Ino uint64
}

// Segment is one mapping of the shared segment in this process.
type Segment struct {
	Path   string
	Layout Layout
	ID     Identity // the file's identity, as created
	// AttachCheck is how often WaitAttached calls its failed func (0:
	// every 50 ms); set it before WaitAttached.
	AttachCheck time.Duration

	mem       mmap.MMap
	hdr       *Header
	closeOnce sync.Once
	closeErr  error
}

// Create makes the file at path (which must not exist, not even as a
// symbolic link), mode 0600, reserves l.Size bytes in it, maps it and
// writes the Header with a new random Token. On error nothing is left
// behind. An existing path is an error matching fs.ErrExist.
func Create(path string, l Layout) (*Segment, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("mpool: create segment: %w", err)
	}
	defer f.Close()
	var st unix.Stat_t
	err = unix.Fchmod(int(f.Fd()), 0o600) // whatever the umask: the attachers check the mode
	if err == nil {
		err = unix.Fstat(int(f.Fd()), &st)
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("mpool: create segment %s: %w", path, err)
	}
	seg, err := reserveAndMap(f, path, l)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	seg.ID = Identity{Token: randomToken(), Dev: st.Dev, Ino: st.Ino}
	seg.hdr.init(&seg.Layout, os.Getpid(), seg.ID.Token)
	return seg, nil
}

func reserveAndMap(f *os.File, path string, l Layout) (*Segment, error) {
	err := unix.Fallocate(int(f.Fd()), 0, 0, l.Size)
	if errors.Is(err, unix.EOPNOTSUPP) {
		// A file system without fallocate: the size is set, but pages are
		// only reserved when touched. Touch them all now.
		if err = f.Truncate(l.Size); err == nil {
			err = touchAll(f, l.Size)
		}
	}
	if errors.Is(err, unix.ENOSPC) {
		return nil, noSpaceError(filepath.Dir(path), l)
	}
	if err != nil {
		return nil, fmt.Errorf("mpool: reserve %s (%d bytes): %w", path, l.Size, err)
	}
	return mapFile(f, path, l)
}

// touchAll writes zeros over the file so that a short file system fails now.
func touchAll(f *os.File, size int64) error {
	zero := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(zero)) {
		n := min(int64(len(zero)), size-off)
		if _, err := f.WriteAt(zero[:n], off); err != nil {
			return err
		}
	}
	return nil
}

func noSpaceError(dir string, l Layout) error {
	var st unix.Statfs_t
	free := "an unknown amount"
	if unix.Statfs(dir, &st) == nil {
		free = FormatBytes(int64(st.Bavail) * st.Bsize)
	}
	return fmt.Errorf("%w: %s has %s free, the segment for %d ranks needs %s; free space there or point btl_sm_backing_directory at a larger directory",
		ErrNoSpace, dir, free, l.NLocal, FormatBytes(l.Size))
}

// Open maps the existing segment at path after checking that it is the
// file the creator made: not a symbolic link, a regular file owned by this
// process's user with mode 0600, with want's device and inode numbers; then
// that its Header matches l and carries want's token. Anything else is
// refused before a byte of the file is trusted (ErrForeign, ErrHeader).
func Open(path string, l Layout, want Identity) (*Segment, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%w: %s is a symbolic link; refusing to map it", ErrForeign, path)
	}
	if err != nil {
		return nil, fmt.Errorf("mpool: open segment: %w", err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("mpool: open segment %s: %w", path, err)
	}
	if err := checkFile(path, &st, want); err != nil {
		return nil, err
	}
	if st.Size != l.Size {
		return nil, fmt.Errorf("%w: %s: file has %d bytes, this rank planned %d; all ranks must use the same btl_sm_* parameters",
			ErrHeader, path, st.Size, l.Size)
	}
	seg, err := mapFile(f, path, l)
	if err != nil {
		return nil, err
	}
	seg.ID = want
	if err := seg.hdr.check(path, &seg.Layout); err != nil {
		seg.Close()
		return nil, err
	}
	if seg.hdr.Token != want.Token {
		seg.Close()
		return nil, fmt.Errorf("%w: %s: the header's token differs from the one local rank 0 published; refusing to use it", ErrForeign, path)
	}
	return seg, nil
}

// checkFile compares the opened file's status with what the creator made.
func checkFile(path string, st *unix.Stat_t, want Identity) error {
	uid := uint32(os.Geteuid())
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("%w: %s is not a regular file (mode %#o); refusing to map it", ErrForeign, path, st.Mode)
	case st.Uid != uid:
		return fmt.Errorf("%w: %s is owned by uid %d, not by this job's user (uid %d); refusing to map it", ErrForeign, path, st.Uid, uid)
	case st.Mode&0o7777 != 0o600:
		return fmt.Errorf("%w: %s has mode %04o, want 0600; refusing to map it", ErrForeign, path, st.Mode&0o7777)
	case st.Dev != want.Dev || st.Ino != want.Ino:
		return fmt.Errorf("%w: %s is device %d inode %d, but local rank 0 created device %d inode %d (the file was replaced); refusing to map it",
			ErrForeign, path, st.Dev, st.Ino, want.Dev, want.Ino)
	}
	return nil
}

// CheckBackingDir refuses a directory in which another local user could
// replace or plant the segment file: one owned by neither this user nor
// root, or writable by others without the sticky bit (/dev/shm and /tmp,
// mode 1777, are fine). A directory that does not exist is not refused
// here (Join falls back to the session directory).
func CheckBackingDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("btl_sm_backing_directory %s: %v", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.IsDir() {
		return nil // not a directory: Join falls back to the session directory
	}
	uid := uint32(os.Geteuid())
	switch {
	case st.Uid != uid && st.Uid != 0:
		return fmt.Errorf("btl_sm_backing_directory %s is owned by uid %d, neither this user (uid %d) nor root; refusing it: another user could replace the shared-memory file there",
			dir, st.Uid, uid)
	case fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0:
		return fmt.Errorf("btl_sm_backing_directory %s has mode %04o: writable by others without the sticky bit; refusing it: another user could replace the shared-memory file there (chmod o-w or +t it)",
			dir, fi.Mode().Perm())
	}
	return nil
}

func mapFile(f *os.File, path string, l Layout) (*Segment, error) {
	mem, err := mmap.MapRegion(f, int(l.Size), mmap.RDWR, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("mpool: map %s (%d bytes): %w", path, l.Size, err)
	}
	s := &Segment{Path: path, Layout: l, mem: mem}
	s.hdr = (*Header)(unsafe.Pointer(&mem[0]))
	return s, nil
}

// Bytes is the whole mapping. It is valid until Close.
func (s *Segment) Bytes() []byte { return s.mem }

// Header is the segment's header.
func (s *Segment) Header() *Header { return s.hdr }

// At returns a pointer to offset off of the segment, for converting to a
// shared structure. off must be CacheLine-aligned and inside the segment.
func (s *Segment) At(off int64) unsafe.Pointer {
	if off <= 0 || off%CacheLine != 0 || off >= int64(len(s.mem)) {
		panic(fmt.Sprintf("mpool: offset %d is not a cache-line-aligned offset inside the %d-byte segment", off, len(s.mem)))
	}
	return unsafe.Pointer(&s.mem[off])
}

// Attach records that this rank has mapped the segment and finished writing
// its own control block. The rank whose Attach completes the count unlinks
// the file. It returns the number of ranks attached so far.
func (s *Segment) Attach() (int, error) {
	n := int(s.hdr.Attached.Add(1))
	if n == s.Layout.NLocal {
		err := os.Remove(s.Path)
		futexWakeAll(&s.hdr.Attached) // the ranks in WaitAttached, once the file is gone
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return n, fmt.Errorf("mpool: unlink %s: %w", s.Path, err)
		}
	}
	return n, nil
}

// WaitAttached waits until every local rank has attached. It returns an
// error naming how many had attached when timeout ran out, or as soon as
// failed reports an error (e.g. a peer process has died); failed is called
// about every attachCheck, not at every look at the counter.
//
// The waiters sleep in the kernel (FUTEX_WAIT on the shared counter) until
// the last Attach wakes them all: with hundreds of ranks on a few cores,
// ranks that poll take the cores from the ranks still attaching, and
// each poll of failed costs a look at every peer (start-up would grow as
// the square of the ranks).
func (s *Segment) WaitAttached(timeout time.Duration, failed func() error) error {
	deadline := time.Now().Add(timeout)
	// The first check after one period: the ranks have only just
	// started, and a check may cost O(ranks) (btl/sm's peer monitor).
	checked := time.Now()
	every := attachCheck
	if s.AttachCheck > 0 {
		every = s.AttachCheck
	}
	for {
		n := s.hdr.Attached.Load()
		if int(n) >= s.Layout.NLocal {
			return nil
		}
		if now := time.Now(); failed != nil && now.Sub(checked) >= every {
			checked = now
			if err := failed(); err != nil {
				return fmt.Errorf("mpool: %d of %d local ranks attached to %s: %w", n, s.Layout.NLocal, s.Path, err)
			}
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("mpool: only %d of %d local ranks attached to %s within %v", n, s.Layout.NLocal, s.Path, timeout)
		}
		futexWait(&s.hdr.Attached, n, min(every, time.Until(deadline)))
	}
}

// attachCheck is how often WaitAttached calls its failed func by default.
const attachCheck = 50 * time.Millisecond

// Futex operations on a word of the shared mapping (not private: the
// waiters are other processes).
const (
	futexWaitOp = 0 // FUTEX_WAIT
	futexWakeOp = 1 // FUTEX_WAKE
)

// futexWait sleeps until w is woken, for at most d, if w still holds val.
func futexWait(w *atomic.Uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(max(int64(d), 1))
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitOp, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// futexWakeAll wakes every process sleeping on w.
func futexWakeAll(w *atomic.Uint32) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakeOp, 1<<30, 0, 0, 0)
}

// Close unmaps the segment. The Bytes and every pointer into them become
// invalid. It does not remove the file (Attach or the launcher does).
func (s *Segment) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.mem.Unmap() })
	return s.closeErr
}

// FormatBytes prints n as B, KiB, MiB or GiB with one decimal.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Remove unlinks the segment's file if it is still there. Ranks call it when
// start-up fails before every rank has attached.
func (s *Segment) Remove() error {
	if err := os.Remove(s.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("mpool: remove %s: %w", s.Path, err)
	}
	return nil
}
