package mpool

import (
	"errors"
	"fmt"
)

// CacheLine is the alignment of every region and shared structure.
const CacheLine = 64

// PageSize is the granularity the segment size is rounded up to.
const PageSize = 4096

// HeaderSize is the space reserved for the Header at offset 0.
const HeaderSize = 256

// MaxLocal is the largest number of ranks one segment serves.
const MaxLocal = 1 << 16

// maxSegment bounds the segment size (1 TiB) so that no sum overflows.
const maxSegment = 1 << 40

// ErrLayout is wrapped by every error Plan returns.
var ErrLayout = errors.New("mpool: invalid layout")

// Params sizes one rank's region. Plan rejects values it cannot lay out;
// it never rounds or clamps them.
type Params struct {
	CtlSize       int64 // bytes of the rank's control block; a multiple of CacheLine
	Slots         int64 // receive-FIFO slots; a power of two, 2..1<<20
	SlotSize      int64 // bytes per FIFO slot; a multiple of CacheLine
	EagerFrags    int64 // eager fragments owned by the rank
	EagerFragSize int64 // bytes per eager fragment; a multiple of CacheLine
	MaxFrags      int64 // max-size fragments owned by the rank
	MaxFragSize   int64 // bytes per max-size fragment; a multiple of CacheLine
	Boxes         int64 // fast boxes in the rank's region (btl/sm: min(btl_sm_fbox_max, ranks-1))
	BoxSize       int64 // bytes per fast box; a multiple of CacheLine (0 when Boxes is 0)
	MinSize       int64 // the segment is at least this large (btl_sm_segment_min_size)
}

// Region is one rank's part of the segment, as absolute offsets.
type Region struct {
	Ctl   int64 // control block
	FIFO  int64 // first FIFO slot
	Box   int64 // first fast box
	Eager int64 // first eager fragment
	Max   int64 // first max-size fragment
	End   int64 // first byte after the region
}

// Layout is the complete plan of a segment. It is a value computed by Plan
// from (nLocal, Params) alone, so every rank computes the same one.
type Layout struct {
	NLocal int
	Params Params
	Stride int64 // bytes per rank region
	Size   int64 // bytes of the whole segment, a multiple of PageSize
}

// Plan computes the layout of a segment for nLocal ranks.
func Plan(nLocal int, p Params) (Layout, error) {
	if nLocal < 1 || nLocal > MaxLocal {
		return Layout{}, fmt.Errorf("%w: %d local ranks; allowed 1..%d", ErrLayout, nLocal, MaxLocal)
	}
	if err := checkMultiple("control block size", p.CtlSize, false); err != nil {
		return Layout{}, err
	}
	if p.Slots < 2 || p.Slots > 1<<20 || p.Slots&(p.Slots-1) != 0 {
		return Layout{}, fmt.Errorf("%w: %d FIFO slots; allowed a power of two in 2..%d", ErrLayout, p.Slots, 1<<20)
	}
	if err := checkMultiple("FIFO slot size", p.SlotSize, false); err != nil {
		return Layout{}, err
	}
	if p.SlotSize > 1<<16 {
		return Layout{}, fmt.Errorf("%w: FIFO slot size %d; allowed at most %d", ErrLayout, p.SlotSize, 1<<16)
	}
	if err := checkFrags("eager", p.EagerFrags, p.EagerFragSize); err != nil {
		return Layout{}, err
	}
	if err := checkFrags("max-size", p.MaxFrags, p.MaxFragSize); err != nil {
		return Layout{}, err
	}
	if p.Boxes < 0 || p.Boxes > MaxLocal {
		return Layout{}, fmt.Errorf("%w: %d fast boxes per rank; allowed 0..%d", ErrLayout, p.Boxes, MaxLocal)
	}
	if err := checkMultiple("fast box size", p.BoxSize, p.Boxes == 0); err != nil {
		return Layout{}, err
	}
	if p.BoxSize > 1<<24 {
		return Layout{}, fmt.Errorf("%w: fast box size %d; allowed at most %d", ErrLayout, p.BoxSize, 1<<24)
	}
	if p.MinSize < 0 || p.MinSize > maxSegment {
		return Layout{}, fmt.Errorf("%w: minimum size %d; allowed 0..%d", ErrLayout, p.MinSize, int64(maxSegment))
	}
	// Each term is below 2^40 (checked), so the sum cannot overflow int64.
	stride := p.CtlSize + p.Slots*p.SlotSize + p.Boxes*p.BoxSize + p.EagerFrags*p.EagerFragSize + p.MaxFrags*p.MaxFragSize
	if stride > maxSegment/int64(nLocal) {
		return Layout{}, fmt.Errorf("%w: %d ranks of %d bytes each exceed %d bytes", ErrLayout, nLocal, stride, int64(maxSegment))
	}
	size := roundUp(HeaderSize+int64(nLocal)*stride, PageSize)
	if m := roundUp(p.MinSize, PageSize); m > size {
		size = m
	}
	return Layout{NLocal: nLocal, Params: p, Stride: stride, Size: size}, nil
}

// Rank returns the region of local rank i (0 ≤ i < NLocal).
func (l *Layout) Rank(i int) Region {
	base := HeaderSize + int64(i)*l.Stride
	p := &l.Params
	r := Region{Ctl: base, FIFO: base + p.CtlSize}
	r.Box = r.FIFO + p.Slots*p.SlotSize
	r.Eager = r.Box + p.Boxes*p.BoxSize
	r.Max = r.Eager + p.EagerFrags*p.EagerFragSize
	r.End = r.Max + p.MaxFrags*p.MaxFragSize
	return r
}

// RankOf returns the local rank whose region holds offset off, or -1 when
// off lies in the Header or beyond the last region.
func (l *Layout) RankOf(off int64) int {
	if off < HeaderSize || l.Stride == 0 {
		return -1
	}
	i := (off - HeaderSize) / l.Stride
	if i >= int64(l.NLocal) {
		return -1
	}
	return int(i)
}

func checkMultiple(what string, v int64, zeroOK bool) error {
	if (v == 0 && zeroOK) || (v > 0 && v%CacheLine == 0 && v <= maxSegment) {
		return nil
	}
	return fmt.Errorf("%w: %s %d; allowed a positive multiple of %d up to %d", ErrLayout, what, v, CacheLine, int64(maxSegment))
}

func checkFrags(kind string, n, size int64) error {
	if n < 0 || n > 1<<24 {
		return fmt.Errorf("%w: %d %s fragments; allowed 0..%d", ErrLayout, n, kind, 1<<24)
	}
	if err := checkMultiple(kind+" fragment size", size, n == 0); err != nil {
		return err
	}
	if n*size > maxSegment {
		return fmt.Errorf("%w: %d %s fragments of %d bytes exceed %d bytes", ErrLayout, n, kind, size, int64(maxSegment))
	}
	return nil
}

func roundUp(v, to int64) int64 { return (v + to - 1) / to * to }
