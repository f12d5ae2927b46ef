package sm

import (
	"fmt"
	"time"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/mca"
	"github.com/gorun-mpi/gorun/mpool"
)

// Params is btl/sm's parameter table, registered with mca at init.
var Params = []mca.Param{
	{Name: "btl_sm_eager_limit", Type: mca.TypeSize, Default: "4k", Min: 0, Max: 1 << 20,
		Help: "largest payload sent eagerly in one fragment (the PML header does not count)"},
	{Name: "btl_sm_max_send_size", Type: mca.TypeSize, Default: "32k", Min: 1 << 10, Max: 16 << 20,
		Help: "largest payload of one fragment; larger messages travel in pieces of this size"},
	{Name: "btl_sm_inline_limit", Type: mca.TypeSize, Default: "512", Min: 0, Max: 1 << 20,
		Help: "largest payload sent inline across consecutive FIFO slots (no fragment, no ack); capped so that a message takes at most a quarter of btl_sm_fifo_size"},
	{Name: "btl_sm_fifo_size", Type: mca.TypeInt, Default: "256", Min: 2, Max: 1 << 20,
		Help: "slots in each rank's receive FIFO; a power of two"},
	{Name: "btl_sm_free_list_num", Type: mca.TypeInt, Default: "8", Min: 1, Max: 1 << 16,
		Help: "fragments of each kind (eager, max-size) a rank puts in circulation at start"},
	{Name: "btl_sm_free_list_max", Type: mca.TypeInt, Default: "32", Min: 1, Max: 1 << 16,
		Help: "fragments of each kind a rank may own; all are reserved in the segment"},
	{Name: "btl_sm_free_list_inc", Type: mca.TypeInt, Default: "8", Min: 1, Max: 1 << 16,
		Help: "fragments added to a rank's free list when it runs empty"},
	{Name: "btl_sm_fifo_lazy_free", Type: mca.TypeInt, Default: "32", Min: 1, Max: 1 << 19,
		Help: "FIFO slots a busy receiver releases in one batch; at most half of btl_sm_fifo_size"},
	{Name: "btl_sm_backing_directory", Type: mca.TypeString, Default: "/dev/shm",
		Help: "directory of the shared-memory file; the session directory is used if it is unusable"},
	{Name: "btl_sm_segment_min_size", Type: mca.TypeSize, Default: "0", Min: 0, Max: 64 << 30,
		Help: "lower bound on the shared segment's size"},
	{Name: "btl_sm_spin_count", Type: mca.TypeInt, Default: "1000", Min: 0, Max: 1 << 30,
		Help: "progress polls before a waiting rank sleeps until a sender wakes it"},
	{Name: "btl_sm_single_copy", Type: mca.TypeEnum, Default: "auto", Allowed: []string{"auto", "none"},
		Help: "use process_vm_readv for large messages when the kernel permits it (auto) or never (none)"},
}

func init() { mca.Register("btl_sm", Params) }

// Config is the resolved configuration of one sm module.
type Config struct {
	EagerLimit     int    // btl_sm_eager_limit
	MaxSendSize    int    // btl_sm_max_send_size
	InlineLimit    int    // btl_sm_inline_limit
	FIFOSize       int    // btl_sm_fifo_size
	FreeListNum    int    // btl_sm_free_list_num
	FreeListMax    int    // btl_sm_free_list_max
	FreeListInc    int    // btl_sm_free_list_inc
	LazyFree       int    // btl_sm_fifo_lazy_free
	BackingDir     string // btl_sm_backing_directory
	SegmentMinSize int64  // btl_sm_segment_min_size
	SpinCount      int    // btl_sm_spin_count; the PML's business, exported here
	SingleCopy     string // btl_sm_single_copy: "auto" or "none"

	// Not MCA parameters.
	AttachTimeout time.Duration    // how long New waits for the other ranks; 0 means 60 s
	Rendezvous    mpool.Rendezvous // segment descriptor exchange; nil means rndv
}

// DefaultConfig is the configuration the parameter defaults give.
func DefaultConfig() Config {
	return Config{
		EagerLimit: 4 << 10, MaxSendSize: 32 << 10, InlineLimit: 512, FIFOSize: 256,
		FreeListNum: 8, FreeListMax: 32, FreeListInc: 8, LazyFree: 32,
		BackingDir: "/dev/shm", SpinCount: 1000, SingleCopy: "auto",
	}
}

// ConfigFrom reads the btl_sm_* parameters from p and validates them together.
func ConfigFrom(p *mca.Set) (Config, error) {
	c := Config{
		EagerLimit:     int(p.Size("btl_sm_eager_limit")),
		MaxSendSize:    int(p.Size("btl_sm_max_send_size")),
		InlineLimit:    int(p.Size("btl_sm_inline_limit")),
		FIFOSize:       int(p.Int("btl_sm_fifo_size")),
		FreeListNum:    int(p.Int("btl_sm_free_list_num")),
		FreeListMax:    int(p.Int("btl_sm_free_list_max")),
		FreeListInc:    int(p.Int("btl_sm_free_list_inc")),
		LazyFree:       int(p.Int("btl_sm_fifo_lazy_free")),
		BackingDir:     p.String("btl_sm_backing_directory"),
		SegmentMinSize: p.Size("btl_sm_segment_min_size"),
		SpinCount:      int(p.Int("btl_sm_spin_count")),
		SingleCopy:     p.String("btl_sm_single_copy"),
	}
	return c, c.Validate()
}

// Validate checks the rules that tie parameters together (each one's own
// range is mca's job, but Validate rechecks what the layout depends on, since
// a Config need not come from mca).
func (c *Config) Validate() error {
	bad := func(format string, a ...any) error { return fmt.Errorf("btl/sm: "+format, a...) }
	switch {
	case c.EagerLimit < 0:
		return bad("btl_sm_eager_limit=%d; allowed 0..btl_sm_max_send_size", c.EagerLimit)
	case c.MaxSendSize < 1 || c.MaxSendSize > 16<<20:
		return bad("btl_sm_max_send_size=%d; allowed 1..%d", c.MaxSendSize, 16<<20)
	case c.EagerLimit > c.MaxSendSize:
		return bad("btl_sm_eager_limit=%d is above btl_sm_max_send_size=%d; allowed at most the max send size", c.EagerLimit, c.MaxSendSize)
	case c.FIFOSize < 2 || c.FIFOSize > 1<<20 || c.FIFOSize&(c.FIFOSize-1) != 0:
		return bad("btl_sm_fifo_size=%d; allowed a power of two in 2..%d", c.FIFOSize, 1<<20)
	case c.InlineLimit < 0 || c.InlineLimit > 1<<20:
		return bad("btl_sm_inline_limit=%d; allowed 0..%d", c.InlineLimit, 1<<20)
	case c.LazyFree < 1 || c.LazyFree > c.FIFOSize/2:
		return bad("btl_sm_fifo_lazy_free=%d; allowed 1..%d (half of btl_sm_fifo_size=%d)", c.LazyFree, c.FIFOSize/2, c.FIFOSize)
	case c.FreeListMax < 1 || c.FreeListMax > 1<<16:
		return bad("btl_sm_free_list_max=%d; allowed 1..%d", c.FreeListMax, 1<<16)
	case c.FreeListNum < 1 || c.FreeListNum > c.FreeListMax:
		return bad("btl_sm_free_list_num=%d; allowed 1..btl_sm_free_list_max=%d", c.FreeListNum, c.FreeListMax)
	case c.FreeListInc < 1:
		return bad("btl_sm_free_list_inc=%d; allowed 1 or more", c.FreeListInc)
	case c.SegmentMinSize < 0:
		return bad("btl_sm_segment_min_size=%d; allowed 0 or more", c.SegmentMinSize)
	case c.SpinCount < 0:
		return bad("btl_sm_spin_count=%d; allowed 0 or more", c.SpinCount)
	case c.SingleCopy != "auto" && c.SingleCopy != "none":
		return bad("btl_sm_single_copy=%q; allowed auto or none", c.SingleCopy)
	}
	return nil
}

// EffectiveInlineLimit is btl_sm_inline_limit capped so that one message
// takes at most a quarter of the FIFO (larger payloads use a fragment).
func (c *Config) EffectiveInlineLimit() int { return min(c.InlineLimit, c.maxInlineLimit()) }

// maxInlineLimit is the largest inline payload FIFOSize allows: what a
// quarter of the FIFO (at least one slot) carries, less the largest header.
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

// LayoutParams is the mpool sizing this configuration implies.
func (c *Config) LayoutParams() mpool.Params {
	return mpool.Params{
		CtlSize: ctlSize, Slots: int64(c.FIFOSize), SlotSize: elemSize,
		EagerFrags: int64(c.FreeListMax), EagerFragSize: c.EagerFragSize(),
		MaxFrags: int64(c.FreeListMax), MaxFragSize: c.MaxFragSize(),
		MinSize: c.SegmentMinSize,
	}
}

func roundUp(n int64) int64 { return (n + mpool.CacheLine - 1) &^ (mpool.CacheLine - 1) }
