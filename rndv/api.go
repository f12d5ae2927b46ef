package rndv

// This file fixes the API other packages code against; bodies are replaced
// by the implementation.

import (
	"errors"
	"time"
)

var errStub = errors.New("rndv: not implemented yet")

// CardVersion is the version of the business-card format written by this build.
const CardVersion = 1

// Card is a rank's business card, published once at Init.
type Card struct {
	Version   int      // CardVersion
	Rank      int      // world rank
	LocalRank int      // index among the ranks on this machine
	Pid       int      // process id
	Caps      []string // capabilities, e.g. "sm", "cma" (process_vm_readv works)
	Addr      string   // reserved for a future network transport; empty today
}

// PublishCard writes c into dir atomically (temp file + rename).
func PublishCard(dir string, c Card) error { return errStub }

// WaitCards waits until the cards of ranks 0..n-1 are all in dir and returns
// them indexed by rank. On timeout the error names the missing ranks.
func WaitCards(dir string, n int, timeout time.Duration) ([]Card, error) { return nil, errStub }

// SegmentVersion is the version of the segment-descriptor format.
const SegmentVersion = 1

// Segment describes the shared-memory segment created by local rank 0.
type Segment struct {
	Version int    // SegmentVersion
	Path    string // file backing the segment (in /dev/shm or the session dir)
	Size    int64  // bytes
	Layout  uint32 // layout version of the segment's contents (mpool's)
}

// PublishSegment writes the descriptor into dir atomically.
func PublishSegment(dir string, s Segment) error { return errStub }

// WaitSegment waits for the descriptor in dir; on timeout the error says so.
func WaitSegment(dir string, timeout time.Duration) (Segment, error) { return Segment{}, errStub }
