package mpool

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Magic identifies a gorun segment ("gorunSEG" read as a little-endian word).
const Magic uint64 = 0x4745536e75726f67

// LayoutVersion is the version of the Header and of Plan's arithmetic. Bump it
// whenever either changes; attachers refuse any other version.
const LayoutVersion uint32 = 5 // 2: sm control blocks in 128-byte line pairs; 3: the creator's Token; 4: fast boxes; 5: Finalize's barrier words

// ErrHeader is wrapped by every error about a segment whose Header does not
// match what this rank expects.
var ErrHeader = errors.New("mpool: segment header mismatch")

// Header sits at offset 0 of the segment. Cache line 0 is written once by the
// creator before the descriptor is published and only read afterwards; the
// attach counter has a line of its own because every rank writes it, which
// it shares with Finalize's barrier (Arrived, Released; btl/sm/barrier.go),
// written by every rank once at its end.
type Header struct {
	Magic      uint64 // Magic
	Version    uint32 // LayoutVersion
	NLocal     uint32 // ranks sharing the segment
	Size       uint64 // bytes of the segment
	CreatorPid uint64 // pid of local rank 0, for error messages
	Token      Token  // random, chosen by the creator; attachers compare it with the descriptor's
	_          [16]byte

	// Line 1: the Params the creator planned with, so an attacher whose
	// parameters differ is told which one.
	CtlSize, Slots, SlotSize  uint64
	EagerFrags, EagerFragSize uint64
	MaxFrags, MaxFragSize     uint64
	_                         [8]byte
	Attached                  atomic.Uint32 // line 2: ranks that called Attach
	Arrived                   atomic.Uint32 // ranks that entered Finalize's barrier
	Released                  atomic.Uint32 // 1 once every rank has arrived
	_                         [52]byte
	Boxes, BoxSize            uint64   // line 3: fast boxes per rank and their size
	_                         [48]byte // rest of line 3: reserved
}

// Compile-time check that Header fits in HeaderSize.
var _ [HeaderSize - unsafe.Sizeof(Header{})]byte

func (h *Header) init(l *Layout, pid int, tok Token) {
	p := &l.Params
	h.Token = tok
	h.Version = LayoutVersion
	h.NLocal = uint32(l.NLocal)
	h.Size = uint64(l.Size)
	h.CreatorPid = uint64(pid)
	h.CtlSize, h.Slots, h.SlotSize = uint64(p.CtlSize), uint64(p.Slots), uint64(p.SlotSize)
	h.EagerFrags, h.EagerFragSize = uint64(p.EagerFrags), uint64(p.EagerFragSize)
	h.MaxFrags, h.MaxFragSize = uint64(p.MaxFrags), uint64(p.MaxFragSize)
	h.Boxes, h.BoxSize = uint64(p.Boxes), uint64(p.BoxSize)
	// Magic last: a reader that sees it sees the rest (all of this happens
	// before the descriptor is published, which orders it anyway).
	atomic.StoreUint64(&h.Magic, Magic)
}

// check compares the Header with the layout this rank planned.
func (h *Header) check(path string, l *Layout) error {
	if m := atomic.LoadUint64(&h.Magic); m != Magic {
		return fmt.Errorf("%w: %s: magic %#x, want %#x (not a gorun segment, or not initialized)", ErrHeader, path, m, Magic)
	}
	if h.Version != LayoutVersion {
		return fmt.Errorf("%w: %s: layout version %d, this build reads version %d; all ranks must run the same gorun build", ErrHeader, path, h.Version, LayoutVersion)
	}
	if int(h.NLocal) != l.NLocal {
		return fmt.Errorf("%w: %s: made for %d local ranks, this rank expects %d", ErrHeader, path, h.NLocal, l.NLocal)
	}
	p := &l.Params
	fields := [...]struct {
		name      string
		seg, mine uint64
	}{
		{"control block size", h.CtlSize, uint64(p.CtlSize)},
		{"FIFO slots (btl_sm_fifo_size)", h.Slots, uint64(p.Slots)},
		{"FIFO slot size", h.SlotSize, uint64(p.SlotSize)},
		{"eager fragments (btl_sm_free_list_max)", h.EagerFrags, uint64(p.EagerFrags)},
		{"eager fragment size (btl_sm_eager_limit)", h.EagerFragSize, uint64(p.EagerFragSize)},
		{"max-size fragments (btl_sm_free_list_max)", h.MaxFrags, uint64(p.MaxFrags)},
		{"max-size fragment size (btl_sm_max_send_size)", h.MaxFragSize, uint64(p.MaxFragSize)},
		{"fast boxes per rank (btl_sm_fbox_max)", h.Boxes, uint64(p.Boxes)},
		{"fast box size (btl_sm_fbox_size)", h.BoxSize, uint64(p.BoxSize)},
		{"segment size", h.Size, uint64(l.Size)},
	}
	for _, f := range fields {
		if f.seg != f.mine {
			return fmt.Errorf("%w: %s: %s is %d in the segment (created by pid %d) but %d in this rank; all ranks must use the same btl_sm_* parameters",
				ErrHeader, path, f.name, f.seg, h.CreatorPid, f.mine)
		}
	}
	return nil
}
