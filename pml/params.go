package pml

import (
	"time"

	"github.com/gorun-mpi/gorun/mca"
)

// Params declares the pml/ob1 parameters, each bound to its Config field.
var Params = mca.Declare("pml_ob1", []mca.Field[Config]{
	mca.Int("pml_ob1_spin_count", "1000", 0, 1<<30, func(c *Config) *int { return &c.SpinCount },
		"progress polls before a waiting rank sleeps until a sender wakes it (divided by the excess when yielding with more than 8 ranks per core)").Deprecated("btl_sm_spin_count"),
	mca.Int("pml_ob1_spin_time", "0", 0, 10_000_000, func(c *Config) *int { return &c.SpinUsec },
		"microseconds a waiting rank with a core of its own keeps polling after pml_ob1_spin_count polls before it sleeps (not when yielding; a Barrier at least 20000): a sleep and its wake cost the next milliseconds (the Go runtime's monitor thread, taking the rank's P back, wakes every 20 us for a while), but while a wait polls, the timers of the rank's other goroutines fire late; 0: sleep after the count (after a sleep that work ended within 1 ms, at least 1000 more)"),
	mca.Size("pml_ob1_unexpected_limit", "64m", 0, 1<<40, func(c *Config) *int64 { return &c.UnexpectedLimit },
		"bytes of eager payload a rank may be sent before it has matched them, shared among its peers as credit; a sender out of credit uses rendezvous even below the eager limit (warned once), so a program that needs more unmatched eager data must raise it (0: no limit)"),
	mca.Enum("pml_ob1_yield_when_idle", "auto", []string{"auto", "yes", "no"}, func(c *Config) *string { return &c.YieldWhenIdle },
		"yield the core between progress polls: yes, no, or auto (yes when the ranks outnumber the cores)"),
	mca.Size("pml_ob1_rget_limit", "4k", 0, 1<<40, func(c *Config) *int { return &c.RgetLimit },
		"rendezvous messages (larger than the BTL's eager limit) of at least this many bytes are read by the receiver with one copy when the BTL can (btl_sm_single_copy), as Open MPI's vader does with CMA; 0: never, every rendezvous goes through the two-copy pipeline"),
	mca.Size("pml_ob1_rget_max", "0", 0, 1<<40, func(c *Config) *int { return &c.RgetMax },
		"largest message that uses the single-copy read (0: no upper bound); larger ones use the two-copy pipeline, which keeps both ranks' cores copying (faster where the cores share a cache, slower where a line crosses between them in hundreds of nanoseconds)"),
	mca.Bool("pml_ob1_rget_adaptive", "false", func(c *Config) *bool { return &c.RgetAdaptive },
		"outside the pml_ob1_rget_limit..pml_ob1_rget_max band (which by default covers every rendezvous: set pml_ob1_rget_limit 0 or narrow the band), a rendezvous larger than its first fragment offers its buffer, and when nothing else is in flight (a ping-pong) the receiver reads it with one copy or asks for the two-copy pipeline, whichever moved the data faster lately for that size (which one wins changes with the machine's state); needs the BTL's single copy (btl_sm_single_copy); off by default: a sender waiting out a long read may sleep, and its wake-up, which is not measured, can cost more than the read saves"),
	mca.Size("pml_ob1_rget_split", "64k", 0, 1<<40, func(c *Config) *int { return &c.RgetSplit },
		"a single-copy read of at least this many bytes (after the first fragment) is shared by both ranks: the receiver reads the first half of the sender's buffer while the sender writes the second half into the receiver's (process_vm_writev), so two cores copy; the receive then also waits for the sender's answer, which comes when the sender next polls (in a Wait, or any call that drives progress); not when the ranks outnumber the cores (pml_ob1_yield_when_idle); 0: the receiver reads it all"),
	mca.Size("pml_ob1_rget_split_stream", "32k", 0, 1<<40, func(c *Config) *int { return &c.RgetSplitStream },
		"a single-copy read of at least this many bytes of a message that is part of a one-way stream (as pml_ob1_stream_limit says: a window of nonblocking sends to one rank) is shared by both ranks as pml_ob1_rget_split says, from a lower size: the sender's core is otherwise idle in such a window (osu bw and mr at 32 KiB +13 to +19%), where a ping-pong's message, whose sender waits for it, is split from here only when that completed faster lately (pml_ob1_serial_split), else from pml_ob1_rget_split; 0: a stream's read is split as any other"),
	mca.Size("pml_ob1_stream_limit", "16k", 0, 1<<40, func(c *Config) *int { return &c.StreamLimit },
		"a rendezvous message (larger than the BTL's eager limit) of at most this many bytes carries its whole payload in its first fragment, so that the sender's core copies the next message while the receiver's copies this one out, when it is part of a one-way stream: it follows another such send to the same rank with no message delivered or send completed between them (a window of nonblocking sends), no receive for a message from that rank was posted as the stream began, and the stream before it brought back fewer than a quarter as many messages from that rank; other messages of that size (a ping-pong's, or windows both ways) are read by the receiver (pml_ob1_rget_limit); either way the send completes once the receiver has matched it; the BTL's max send size bounds it; 0: never"),
	mca.Bool("pml_ob1_stream_adaptive", "true", func(c *Config) *bool { return &c.StreamAdaptive },
		"a one-way stream (as pml_ob1_stream_limit says) times its windows, from the first send of one to the first send of the next, and the next stream's messages up to pml_ob1_stream_limit carry their payload or are read by the receiver (pml_ob1_rget_limit), whichever moved that size's data faster in the last few windows that took each way (the first window of each way not counted); the slower way is tried again with one window once its timing is older than pml_ob1_rget_explore. Which one wins at 8-16 KiB turns with the machine's state (osu bw, read against carried: +21 to +39% in one state, -16 to -25% in another); against always carrying, osu mr 8-16 KiB +15 to +31%, bw -1 to +14%. Needs the BTL's single copy; false: a stream always carries its payload"),
	mca.Size("pml_ob1_stream_pipe_max", "4m", 0, 1<<40, func(c *Config) *int { return &c.StreamPipeMax },
		"with pml_ob1_stream_adaptive, a one-way stream's messages above pml_ob1_stream_limit and up to this many bytes, which the receiver would read, are timed the same way, and the next stream's go by that read or by the two-copy pipeline (the first fragment, then the rest in fragments once the receiver has matched it), whichever moved that size's data faster in the last few windows that took each way; the read is tried first, and the slower way is tried again with one window once its timing is older than pml_ob1_rget_explore and than 50 times that window's time. Which one wins turns with the machine's state: osu bw 64 KiB-2 MiB, pipeline against read, 1.11-2.10x in one state, 0.12-0.33x in another; at 4 MiB, with the cores near, the pipeline moved 47 GB/s and the read 21-30 (osu bw 4 MiB 1.33-1.83x of Open MPI with 2m, 2.87-2.97x with 4m); 0: such a stream is always read"),
	mca.Size("pml_ob1_serial_carry_max", "16k", 0, 1<<40, func(c *Config) *int { return &c.SerialCarryMax },
		"a rendezvous message (larger than the BTL's eager limit) of at most this many bytes that is not part of a one-way stream (as pml_ob1_stream_limit says) and is sent while no other send of the rank is in flight (a ping-pong's) carries its payload in its first fragment or is read by the receiver (pml_ob1_rget_limit), whichever completed faster in the last few such sends of that size (timed by the sender, from its start to the receiver's answer, in runs of 32 sends, a run ending early once its way is timed 1.25x slower than the other; the read tried first, the first of each way not counted); the slower way is tried again with one run once its timing is older than pml_ob1_rget_explore. Which one wins turns with the machine's state (osu lat, carried against read: 8 KiB 0.79x in one state, 1.44x in another). A carried one travels in sm's fast box up to 16 KiB, where a blocking receive takes it directly: osu lat 16 KiB near 1.03-1.07x -> 0.87-0.94x of Open MPI, far 0.94x -> 0.96x. Needs the BTL's single copy; pml_ob1_stream_limit and the BTL's max send size bound it; 0: such messages are read"),
	mca.Bool("pml_ob1_serial_split", "true", func(c *Config) *bool { return &c.SerialSplit },
		"a rendezvous message of at least pml_ob1_rget_split_stream bytes and below pml_ob1_rget_split that is sent as pml_ob1_serial_carry_max says (not part of a one-way stream, no other send of the rank in flight: a ping-pong's) asks its receiver to share the read with the sender as a stream's message does, or not, whichever completed faster in the last few such sends of that size (timed by the sender, in runs of 32 sends, a run ending early once its way is timed 1.25x slower than the other; the whole read tried first and kept unless splits were more than 5% faster, the first of each way not counted; the slower way tried again with one run once its timing is older than pml_ob1_rget_explore). Which one wins turns with the machine's state (osu lat 32 KiB, split against whole: 0.89x in one state, 1.11x in another; this choice against none: 0.91x and 1.01-1.02x); false: such reads are not split"),
	mca.Size("pml_ob1_rget_batch_max", "128k", 0, 1<<40, func(c *Config) *int { return &c.RgetBatchMax },
		"single-copy reads of rendezvous messages of at most this many bytes (after the first fragment) that one poll finds while messages come in runs (windows, both ways at once) are made at the end of the poll, together, in one process_vm_readv per sender of up to 16 of them and 1 MiB: a call's fixed cost (~0.45 us here, a third of an 8 KiB read) is paid once for the lot (osu bibw against 0, one binary: 8-16 KiB +32 to +52%, 32 KiB +17 to +24%, 64 KiB +12%, 128 KiB +5 to +10%, 256 KiB and up none); their receives complete, and their senders hear of it, after the last of them; 0: each is read on its own as it is matched"),
	mca.Int("pml_ob1_rget_hugepage", "16", 0, 1<<20, func(c *Config) *int { return &c.RgetHugepage },
		"after a 2 MiB region of this rank's memory has held this many buffers of at least 64 KiB offered to a peer's single-copy read (pml_ob1_rget_limit), the rank collapses the region into a transparent huge page (madvise MADV_COLLAPSE: Linux 6.1 or later, transparent huge pages not 'never'), so that the reading peer's kernel pins one page where it pinned 512; once per region (the collapse copies the region, ~0.5 ms): the first try off the send path, and a region a peer's reads kept pinned is tried again by a send that starts while no other send of the rank is in flight, inside that send; contents never change; 0: never"),
	mca.Int("pml_ob1_direct_polls", "64", 0, 1<<20, func(c *Config) *int { return &c.DirectPolls },
		"a blocking receive from one peer (Recv) over shared memory looks up to this many times for its message at the head of the peer's fast box and, when it is there, in its turn, for this receive and for no receive posted before, takes it from the box itself, without posting a receive (osu lat at 0-2 KiB 17-37% faster with the ranks' cores near, 7-13% far), and a rendezvous's single-copy read it then makes itself (16 KiB 4-7%, 8 KiB 1-5%); otherwise it posts and waits as every receive does. Every 8th such receive first makes a full progress pass (every BTL, every peer), so the rank's other traffic still moves. 0: always post"),
	mca.Int("pml_ob1_rget_explore", "20", 1, 1<<20, func(c *Config) *int { return &c.RgetExploreMs },
		"milliseconds after which pml_ob1_rget_adaptive tries the path it measured slower again, with one message, to notice a change of placement"),
})

// SetYield sets Yield from YieldWhenIdle for a job of Size ranks on a
// machine with cores CPUs: "auto" yields when the ranks outnumber the cores.
//
// Far oversubscribed and yielding (more than spinRanksPerCore ranks per
// core), it also divides SpinCount by the excess, and multiplies
// SleepTimeout (its default when unset) by the excess over
// napRanksPerCore. Each idle poll then hands the core to one of many ranks
// that mostly wait too, so a wait's spin phase takes time in proportion to
// the ranks, and the machine's spinning at a barrier their square; and
// every wake of a sleeping rank costs its Go runtime several thread
// switches, so N ranks waking every SleepTimeout cost the cores in
// proportion to N however little they do. At 1024 ranks on 2 cores the
// two made Finalize's barrier take 10 s of a 17 s start-up.
func (c *Config) SetYield(cores int) {
	c.Yield = c.YieldWhenIdle == "yes" || c.YieldWhenIdle == "auto" && c.Size > cores
	if !c.Yield || cores < 1 {
		return
	}
	if c.Size > spinRanksPerCore*cores {
		c.SpinCount = max(1, int(int64(c.SpinCount)*int64(spinRanksPerCore*cores)/int64(c.Size)))
	}
	if c.Size > napRanksPerCore*cores {
		if c.SleepTimeout <= 0 {
			c.SleepTimeout = defaultSleepTimeout
		}
		c.SleepTimeout = c.SleepTimeout * time.Duration(c.Size) / time.Duration(napRanksPerCore*cores)
	}
}

// spinRanksPerCore and napRanksPerCore are the oversubscriptions up to
// which SetYield keeps SpinCount and SleepTimeout as set.
const (
	spinRanksPerCore = 8
	napRanksPerCore  = 16
)

// defaultSleepTimeout is SleepTimeout when unset.
const defaultSleepTimeout = 50 * time.Millisecond
