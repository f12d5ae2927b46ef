package sm

import (
	"fmt"
	"time"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/mca"
	"github.com/gorun-mpi/gorun/mpool"
)

// Config is the resolved configuration of one sm module.
type Config struct {
	EagerLimit     int    // btl_sm_eager_limit
	MaxSendSize    int    // btl_sm_max_send_size
	InlineLimit    int    // btl_sm_inline_limit
	FIFOSize       int    // btl_sm_fifo_size
	FreeListNum    int    // btl_sm_free_list_num
	FreeListMax    int    // btl_sm_free_list_max
	FreeListInc    int    // btl_sm_free_list_inc
	MaxFrags       int    // btl_sm_max_frags (0: see MaxFragCount)
	LazyFree       int    // btl_sm_fifo_lazy_free
	BackingDir     string // btl_sm_backing_directory
	SegmentMinSize int64  // btl_sm_segment_min_size
	SingleCopy     string // btl_sm_single_copy: "auto" or "none"
	FboxThreshold  int    // btl_sm_fbox_threshold
	FboxMax        int    // btl_sm_fbox_max
	FboxSize       int    // btl_sm_fbox_size

	// Not MCA parameters.
	AttachTimeout time.Duration    // how long New waits for the other ranks; 0 means 60 s
	Rendezvous    mpool.Rendezvous // segment descriptor exchange; nil means rndv
}

// Params declares btl/sm's parameters, each bound to its Config field, and
// the rules between them, which gorun checks before any rank starts.
var Params = mca.Declare("btl_sm", []mca.Field[Config]{
	mca.Size("btl_sm_eager_limit", "4k", 0, 1<<20, func(c *Config) *int { return &c.EagerLimit },
		"largest payload sent eagerly in one fragment (the PML header does not count); at most btl_sm_max_send_size"),
	mca.Size("btl_sm_max_send_size", "32k", 1<<10, 16<<20, func(c *Config) *int { return &c.MaxSendSize },
		"largest payload of one fragment; larger messages travel in pieces of this size"),
	mca.Size("btl_sm_inline_limit", "512", 0, 1<<20, func(c *Config) *int { return &c.InlineLimit },
		"largest payload sent inline across consecutive FIFO slots (no fragment, no ack); at most what a quarter of the FIFO's slots carry: 30 × btl_sm_fifo_size − 88 bytes (32 below 8 slots)"),
	mca.Int("btl_sm_fifo_size", "256", 2, 1<<20, func(c *Config) *int { return &c.FIFOSize },
		"slots in each rank's receive FIFO; a power of two"),
	mca.Int("btl_sm_free_list_num", "8", 1, 1<<16, func(c *Config) *int { return &c.FreeListNum },
		"fragments of each kind (eager, max-size) a rank puts in circulation at start; at most btl_sm_free_list_max"),
	mca.Int("btl_sm_free_list_max", "32", 1, 1<<16, func(c *Config) *int { return &c.FreeListMax },
		"fragments of each kind a rank may own; all are reserved in the segment"),
	mca.Int("btl_sm_max_frags", "0", 0, 1<<16, func(c *Config) *int { return &c.MaxFrags },
		"max-size fragments (btl_sm_max_send_size each) a rank may own, all reserved in the segment; 0: btl_sm_free_list_max, twice that when at most 4 ranks share the node (a one-way window of 64 messages of 8-32 KiB then has a fragment for each: osu bw 8-16 KiB +7 to +13%, mr +5%; 1.1 MiB more segment per rank)"),
	mca.Int("btl_sm_free_list_inc", "8", 1, 1<<16, func(c *Config) *int { return &c.FreeListInc },
		"fragments added to a rank's free list when it runs empty"),
	mca.Int("btl_sm_fifo_lazy_free", "32", 1, 1<<19, func(c *Config) *int { return &c.LazyFree },
		"FIFO slots a busy receiver releases in one batch; at most half of btl_sm_fifo_size"),
	mca.String("btl_sm_backing_directory", "/dev/shm", func(c *Config) *string { return &c.BackingDir },
		"directory of the shared-memory file; the session directory is used if it is missing or read-only; one owned by another user (not root) or writable by others without the sticky bit is refused"),
	mca.Size("btl_sm_segment_min_size", "0", 0, 64<<30, func(c *Config) *int64 { return &c.SegmentMinSize },
		"lower bound on the shared segment's size"),
	mca.Enum("btl_sm_single_copy", "auto", []string{"auto", "none"}, func(c *Config) *string { return &c.SingleCopy },
		"use process_vm_readv for large messages when the kernel permits it (auto) or never (none)"),
	mca.Int("btl_sm_fbox_threshold", "16", 1, 1<<30, func(c *Config) *int { return &c.FboxThreshold },
		"messages a rank sends to one peer before it gives the pair a fast box (a ring in the peer's region that it fills without atomics)"),
	mca.Int("btl_sm_fbox_max", "32", 0, 1<<16, func(c *Config) *int { return &c.FboxMax },
		"fast boxes each rank's region holds, so at most this many senders get one (the segment reserves min(this, ranks-1) per rank); 0 disables fast boxes"),
	mca.Size("btl_sm_fbox_size", "0", 0, boxSizeLimit, func(c *Config) *int { return &c.FboxSize },
		"bytes of one fast box's ring, a power of two of at least 1k; messages up to a quarter of it, at most 8k (a ping-pong's rendezvous up to 16k plus a 64-byte header), travel in it; "+
			"0: by the ranks on the node, 256k while a rank's boxes take at most 1m in all (up to 5 ranks), halved until they do, down to 32k "+
			"(from 18 ranks): a box that holds a whole window of messages of up to 4 KiB saves the sends that overflow it to the FIFO "+
			"(osu bw 512 B-4 KiB +28 to +91% against 32k)"),
},
	mca.Rule[Config]{Names: []string{"btl_sm_eager_limit", "btl_sm_max_send_size"}, Check: func(c *Config) string {
		if c.EagerLimit > c.MaxSendSize {
			return "an eager message is one fragment, so the eager limit must not exceed the max send size"
		}
		return ""
	}},
	mca.Rule[Config]{Names: []string{"btl_sm_fifo_size"}, Check: func(c *Config) string {
		if c.FIFOSize&(c.FIFOSize-1) != 0 {
			return "the FIFO size must be a power of two"
		}
		return ""
	}},
	mca.Rule[Config]{Names: []string{"btl_sm_inline_limit", "btl_sm_fifo_size"}, Check: func(c *Config) string {
		if most := c.maxInlineLimit(); c.InlineLimit > most {
			return fmt.Sprintf("an inline message takes at most a quarter of the FIFO's slots; allowed: btl_sm_inline_limit 0..%d with btl_sm_fifo_size=%d", most, c.FIFOSize)
		}
		return ""
	}},
	mca.Rule[Config]{Names: []string{"btl_sm_fifo_lazy_free", "btl_sm_fifo_size"}, Check: func(c *Config) string {
		if c.LazyFree > c.FIFOSize/2 {
			return "a receiver releases at most half of its FIFO at once"
		}
		return ""
	}},
	mca.Rule[Config]{Names: []string{"btl_sm_fbox_size"}, Check: func(c *Config) string {
		if c.FboxSize != 0 && (c.FboxSize < 1<<10 || c.FboxSize&(c.FboxSize-1) != 0) {
			return "the fast box size must be 0 (by the ranks on the node) or a power of two of at least 1k"
		}
		return ""
	}},
	mca.Rule[Config]{Names: []string{"btl_sm_free_list_num", "btl_sm_free_list_max"}, Check: func(c *Config) string {
		if c.FreeListNum > c.FreeListMax {
			return "a rank cannot start with more fragments than it may own"
		}
		return ""
	}},
	mca.Rule[Config]{Names: []string{"btl_sm_free_list_num", "btl_sm_max_frags"}, Check: func(c *Config) string {
		if c.MaxFrags != 0 && c.FreeListNum > c.MaxFrags {
			return "a rank cannot start with more max-size fragments than it may own (0: the default)"
		}
		return ""
	}},
)

// DefaultConfig is the configuration the parameter defaults give.
func DefaultConfig() Config { return Params.Defaults() }

// ConfigFrom reads the btl_sm_* parameters from p and checks the rules
// between them.
func ConfigFrom(p *mca.Set) (Config, error) { return Params.Config(p) }

// Validate checks a Config that need not come from mca against the same
// declarations: each parameter's range and the rules between them.
func (c *Config) Validate() error { return Params.Validate(c) }

// maxInlineLimit is the largest btl_sm_inline_limit FIFOSize allows (a
// rule refuses more; it used to be capped silently): what a quarter of the
// FIFO (at least one slot) carries, less the largest header, so that one
// message never takes more than a quarter of the FIFO.
func (c *Config) maxInlineLimit() int {
	k := c.FIFOSize / 4
	if k < 2 {
		return max(0, inlineMax-btl.MaxHeader)
	}
	return inlineMax + (k-1)*contBytes - btl.MaxHeader
}

// EagerFragSize and MaxFragSize are the fragment sizes: payload limit plus
// the largest header, rounded up to a cache line.
func (c *Config) EagerFragSize() int64 { return roundUp(int64(c.EagerLimit) + btl.MaxHeader) }
func (c *Config) MaxFragSize() int64   { return roundUp(int64(c.MaxSendSize) + btl.MaxHeader) }

// Boxes is the number of fast boxes in each rank's region for a job of n
// ranks: btl_sm_fbox_max, but no more than there are other ranks.
func (c *Config) Boxes(n int) int { return max(0, min(c.FboxMax, n-1)) }

// Fast box sizes (BoxSize): the default spreads boxBudget bytes of ring
// over a rank's boxes, each between boxSizeMin and boxSizeMax bytes.
// boxSizeLimit bounds btl_sm_fbox_size; boxMsgCap bounds the messages a
// box takes whatever its size.
const (
	boxBudget    = 1 << 20
	boxSizeMin   = 32 << 10
	boxSizeMax   = 256 << 10
	boxSizeLimit = 1 << 20
	// boxMsgCap: larger messages (rendezvous first fragments) went
	// faster in fragments than in a box that took them (osu bw 8-32 KiB
	// -7 to -22% with a 128 KiB box taking up to 32 KiB; a box that took
	// a one-way stream's 8 KiB and its header, osu bw and mr 8 KiB -5 to
	// -7%).
	boxMsgCap = 8 << 10
	// boxSerialCap bounds the records a sender asks the box to take as a
	// ping-pong's (btl.LockedSender.TrySendBytesLocked's serial): a
	// rendezvous that carries up to 16 KiB (pml_ob1_serial_carry_max) to
	// a receiver that waits for it, which a blocking Recv takes from the
	// box directly, where through a fragment it went slower than the
	// receiver's single-copy read (osu lat 16 KiB near: 2.58 us in the
	// box, 3.10 in a fragment, 2.96 read; Open MPI 2.79).
	boxSerialCap = 16<<10 + btl.MaxHeader
)

// BoxSize is the ring size of a fast box in a job of n ranks on the node:
// btl_sm_fbox_size, or by default boxSizeMax halved while the rank's boxes
// (Boxes) would take more than boxBudget, down to boxSizeMin. osu's window
// of 64 messages fits a 256 KiB box up to 4 KiB each, where a 32 KiB one
// overflowed into the FIFO from 512 B (osu bw 512 B-4 KiB +28 to +91%,
// bibw 256 B-8 KiB +18 to +81%, mr +15 to +59%; 1-64 B and latency
// unchanged); at 64 ranks (32 boxes) it is 32 KiB, as before.
func (c *Config) BoxSize(n int) int {
	if c.FboxSize > 0 {
		return c.FboxSize
	}
	s, b := boxSizeMax, c.Boxes(n)
	for s > boxSizeMin && s*b > boxBudget {
		s /= 2
	}
	return s
}

// BoxMsgMax is the largest message (hdr+payload) that travels in a fast
// box in a job of n ranks on the node: a quarter of the box, at most
// boxMsgCap.
func (c *Config) BoxMsgMax(n int) int { return min(c.BoxSize(n)/4, boxMsgCap) }

// BoxSerialMax is BoxMsgMax for a ping-pong's records (serial sends): a
// quarter of the box, at most boxSerialCap. It is also the largest record
// a receiver accepts from a box.
func (c *Config) BoxSerialMax(n int) int { return min(c.BoxSize(n)/4, boxSerialCap) }

// BoxStride is the bytes one fast box takes in the segment in a job of n
// ranks on the node.
func (c *Config) BoxStride(n int) int64 { return boxCtlSize + int64(c.BoxSize(n)) }

// smallJobRanks is the most ranks on a node for which MaxFragCount's
// default doubles btl_sm_free_list_max.
const smallJobRanks = 4

// MaxFragCount is the max-size fragments a rank owns in a job of n ranks on
// the node: btl_sm_max_frags, or by default btl_sm_free_list_max, twice
// that in a job of at most smallJobRanks ranks. A one-way window of
// messages above the eager limit (osu bw's 64 Isends of 8-32 KiB, each a
// rendezvous that carries its payload, or FRAGs) holds a fragment per
// message until the receiver has copied it out: with 32, half the window
// waits in the sender's pending queue and is copied by its Progress as
// fragments come back. At 64 ranks the segment stays what it was.
func (c *Config) MaxFragCount(n int) int {
	switch {
	case c.MaxFrags > 0:
		return c.MaxFrags
	case n <= smallJobRanks:
		return 2 * c.FreeListMax
	}
	return c.FreeListMax
}

// LayoutParams is the mpool sizing this configuration implies for a job of
// n ranks.
func (c *Config) LayoutParams(n int) mpool.Params {
	return mpool.Params{
		CtlSize: ctlSize, Slots: int64(c.FIFOSize), SlotSize: elemSize,
		Boxes: int64(c.Boxes(n)), BoxSize: c.BoxStride(n),
		EagerFrags: int64(c.FreeListMax), EagerFragSize: c.EagerFragSize(),
		MaxFrags: int64(c.MaxFragCount(n)), MaxFragSize: c.MaxFragSize(),
		MinSize: c.SegmentMinSize,
	}
}

func roundUp(n int64) int64 { return (n + mpool.CacheLine - 1) &^ (mpool.CacheLine - 1) }
