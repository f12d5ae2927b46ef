package mpool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/gorun-mpi/gorun/rndv"
)

// Rendezvous passes the segment descriptor from local rank 0 to the others.
// Production code uses RndvDir (the rndv package); tests may pass their own.
type Rendezvous interface {
	PublishSegment(dir string, s rndv.Segment) error
	WaitSegment(dir string, timeout time.Duration) (rndv.Segment, error)
}

// RndvDir is the Rendezvous of the rndv package (files in the session dir).
type RndvDir struct{}

func (RndvDir) PublishSegment(dir string, s rndv.Segment) error { return rndv.PublishSegment(dir, s) }
func (RndvDir) WaitSegment(dir string, timeout time.Duration) (rndv.Segment, error) {
	return rndv.WaitSegment(dir, timeout)
}

// JoinOptions say where the segment lives and who this rank is.
type JoinOptions struct {
	Dir        string // btl_sm_backing_directory; "" means /dev/shm
	SessionDir string // fallback directory, and where the descriptor goes
	JobID      string
	LocalRank  int
	Timeout    time.Duration // how long non-zero ranks wait for the descriptor
	Rendezvous Rendezvous    // nil means RndvDir{}
	Log        hclog.Logger  // nil means no logging
}

// FileName is the name of a segment file of job jobID: its user, its job
// and nameToken, random, so that another local user cannot predict the name
// and create a file of their own there first. The launcher removes
// <dir>/gorun-<uid>-<jobid>-*.seg after a crash, so the form must not change.
func FileName(jobID, nameToken string) string {
	return fmt.Sprintf("gorun-%d-%s-%s.seg", os.Getuid(), jobID, nameToken)
}

// createTries bounds the fresh names Join tries when one is taken.
const createTries = 8

// BackingDir returns dir if it is a writable directory, else sessionDir
// (logging the reason at debug level). A directory that CheckBackingDir
// refuses is an error.
func BackingDir(dir, sessionDir string, log hclog.Logger) (string, error) {
	if dir == "" {
		dir = "/dev/shm"
	}
	if err := CheckBackingDir(dir); err != nil {
		return "", fmt.Errorf("mpool: %w", err)
	}
	st, err := os.Stat(dir)
	switch {
	case err != nil:
	case !st.IsDir():
		err = fmt.Errorf("not a directory")
	default:
		err = unix.Access(dir, unix.W_OK)
	}
	if err == nil {
		if abs, aerr := filepath.Abs(dir); aerr == nil {
			return abs, nil // the descriptor needs an absolute path
		}
		return dir, nil
	}
	if log != nil {
		log.Debug("backing directory unusable; using the session directory", "dir", dir, "error", err, "session_dir", sessionDir)
	}
	return sessionDir, nil
}

// Join creates (local rank 0) or opens (the others) the job's segment. It
// does not Attach: the caller fills its control block first.
func Join(o JoinOptions, l Layout) (*Segment, error) {
	rv := o.Rendezvous
	if rv == nil {
		rv = RndvDir{}
	}
	if o.LocalRank != 0 {
		d, err := rv.WaitSegment(o.SessionDir, o.Timeout)
		if err != nil {
			return nil, fmt.Errorf("mpool: local rank %d waiting for the segment of job %s: %w", o.LocalRank, o.JobID, err)
		}
		if d.Layout != LayoutVersion {
			return nil, fmt.Errorf("%w: descriptor for %s has layout version %d, this build reads version %d", ErrHeader, d.Path, d.Layout, LayoutVersion)
		}
		if d.Size != l.Size {
			return nil, fmt.Errorf("%w: descriptor for %s says %d bytes, this rank planned %d; all ranks must use the same btl_sm_* parameters", ErrHeader, d.Path, d.Size, l.Size)
		}
		tok, err := ParseToken(d.Token)
		if err != nil {
			return nil, err
		}
		return Open(d.Path, l, Identity{Token: tok, Dev: d.Dev, Ino: d.Ino})
	}
	dir, err := BackingDir(o.Dir, o.SessionDir, o.Log)
	if err != nil {
		return nil, err
	}
	seg, err := createUnique(dir, o.JobID, l, o.Log)
	if err != nil {
		return nil, err
	}
	path := seg.Path
	if o.Log != nil {
		o.Log.Debug("segment created", "path", path, "bytes", l.Size, "ranks", l.NLocal)
	}
	desc := rndv.Segment{Version: rndv.SegmentVersion, Path: path, Size: l.Size, Layout: LayoutVersion,
		Token: seg.ID.Token.String(), Dev: seg.ID.Dev, Ino: seg.ID.Ino}
	if err := rv.PublishSegment(o.SessionDir, desc); err != nil {
		seg.Close()
		os.Remove(path)
		return nil, fmt.Errorf("mpool: publish segment %s: %w", path, err)
	}
	return seg, nil
}

// createUnique creates the job's segment in dir under a fresh random name,
// trying another when the name is taken (only another process, e.g. of
// another user, can have taken it).
func createUnique(dir, jobID string, l Layout, log hclog.Logger) (*Segment, error) {
	for try := 1; ; try++ {
		var b [8]byte
		rand.Read(b[:])
		path := filepath.Join(dir, FileName(jobID, hex.EncodeToString(b[:])))
		seg, err := Create(path, l)
		if !errors.Is(err, fs.ErrExist) || try == createTries {
			return seg, err
		}
		if log != nil {
			log.Warn("segment file name already taken; trying another", "path", path)
		}
	}
}
