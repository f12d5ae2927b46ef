package mpool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unsafe"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sys/unix"
)

// ErrNoSpace is wrapped by the error Create returns when the backing
// directory cannot hold the segment.
var ErrNoSpace = errors.New("mpool: not enough space for the segment")

// Segment is one mapping of the shared segment in this process.
type Segment struct {
	Path   string
	Layout Layout

	mem       mmap.MMap
	hdr       *Header
	closeOnce sync.Once
	closeErr  error
}

// Create makes the file at path (which must not exist), reserves l.Size
// bytes in it, maps it and writes the Header. On error nothing is left
// behind.
func Create(path string, l Layout) (*Segment, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("mpool: create segment: %w", err)
	}
	defer f.Close()
	seg, err := reserveAndMap(f, path, l)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	seg.hdr.init(&seg.Layout, os.Getpid())
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

// Open maps the existing segment at path and checks that its Header matches l.
func Open(path string, l Layout) (*Segment, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("mpool: open segment: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("mpool: open segment: %w", err)
	}
	if st.Size() != l.Size {
		return nil, fmt.Errorf("%w: %s: file has %d bytes, this rank planned %d; all ranks must use the same btl_sm_* parameters",
			ErrHeader, path, st.Size(), l.Size)
	}
	seg, err := mapFile(f, path, l)
	if err != nil {
		return nil, err
	}
	if err := seg.hdr.check(path, &seg.Layout); err != nil {
		seg.Close()
		return nil, err
	}
	return seg, nil
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
		if err := os.Remove(s.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return n, fmt.Errorf("mpool: unlink %s: %w", s.Path, err)
		}
	}
	return n, nil
}

// WaitAttached waits until every local rank has attached. It returns an
// error naming how many had attached when timeout ran out, or as soon as
// failed reports true (e.g. a peer process has died).
func (s *Segment) WaitAttached(timeout time.Duration, failed func() error) error {
	deadline := time.Now().Add(timeout)
	for d := time.Microsecond; ; d = min(2*d, 5*time.Millisecond) {
		n := int(s.hdr.Attached.Load())
		if n >= s.Layout.NLocal {
			return nil
		}
		if failed != nil {
			if err := failed(); err != nil {
				return fmt.Errorf("mpool: %d of %d local ranks attached to %s: %w", n, s.Layout.NLocal, s.Path, err)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mpool: only %d of %d local ranks attached to %s within %v", n, s.Layout.NLocal, s.Path, timeout)
		}
		time.Sleep(d)
	}
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
