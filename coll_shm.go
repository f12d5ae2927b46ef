package gorun

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"

	"github.com/gorun-mpi/gorun/coll/shm"
	"github.com/gorun-mpi/gorun/internal/errs"
	"github.com/gorun-mpi/gorun/jobenv"
	"github.com/gorun-mpi/gorun/mpool"

	"golang.org/x/sys/unix"
)

// coll/sm: the small blocking Barrier, Bcast, Reduce, Allreduce, Allgather
// and Alltoall of a communicator whose ranks all share this machine run through a segment
// of the communicator's own (package coll/shm) instead of the schedules.
// The segment is made at the communicator's first such call, collectively
// over point-to-point: rank 0 creates the file and broadcasts its name
// and slot size (which decides, for every rank, which calls it takes),
// every rank maps it, an Allreduce tells whether all did, and rank 0
// removes the file (the mappings stay; nothing is left behind, even if a
// rank dies later). When any rank fails, the communicator never tries
// again and keeps the schedules. Every rank takes the same path for a call:
// the choice depends only on the parameters, the communicator's machines
// and the call's size, which are the same on every rank.

// commShm is a communicator's coll/sm state.
type commShm struct {
	state atomic.Uint32 // shmNew, shmSetup (the collectives of the setup take the schedules), shmReady
	team  *shm.Team     // written before state becomes shmReady; nil when setup failed
	limit int           // the largest unrooted call it takes (written like team)
	over  bool          // rank 0 saw the job oversubscribed (written like team)
	read  bool          // every rank can read every other's memory (written like team)
}

const (
	shmNew uint32 = iota
	shmSettingUp
	shmReady
)

// shmSizes are the slot size of a segment rank 0 makes, and the largest
// call of the unrooted collectives (Barrier, Allreduce, Allgather,
// Alltoall) it takes; Bcast and Reduce take up to the slot.
// coll_sm_max_size for both, or when the job has more ranks than this
// machine has cores (then the segment wins to larger sizes: one turn on a
// core per rank instead of one per round of a schedule)
// coll_sm_oversubscribed_max_size, and for Bcast and Reduce
// coll_sm_oversubscribed_rooted_max_size if larger, the slot halved while
// a segment for the communicator's n ranks would exceed shmMaxSegment.
func shmSizes(n int, over bool) (slot, limit int) {
	cfg := &state.shmCfg
	base := max(8, cfg.MaxSize&^7)
	if !over {
		return base, base
	}
	limit = max(8, cfg.OverMaxSize&^7)
	slot = fitSlot(n, max(limit, cfg.OverRootedMaxSize&^7), base)
	return slot, min(limit, slot)
}

// fitSlot is slot, halved (whole 8 bytes, not below base) while a segment
// of n ranks with it would exceed shmMaxSegment.
func fitSlot(n, slot, base int) int {
	for slot > base && shm.Size(n, slot) > shmMaxSegment {
		slot = max(base, slot/2&^7)
	}
	return slot
}

// shmMaxSegment bounds the larger slots of an oversubscribed job: a
// communicator's segment (two cells per rank, reserved at set-up) stays
// within 256 MiB (8 ranks keep 4 MiB slots: 64 MiB), the slot halving
// down to coll_sm_max_size for more ranks.
const shmMaxSegment = 256 << 20

// shmSlotMax is the largest slot any rank's segment may have.
func shmSlotMax() int {
	cfg := &state.shmCfg
	return max(8, cfg.MaxSize&^7, cfg.OverMaxSize&^7, cfg.OverRootedMaxSize&^7)
}

// oversubscribed reports whether the job has more ranks than cpus, the
// CPUs its ranks may run on. Not runtime.NumCPU() alone: that counts this
// rank's affinity mask, which is its share of the CPUs when the launcher
// binds ranks (launcher_base_bind), and 2 ranks bound to a CPU each would
// count as 2 ranks on 1 CPU, yielding at every poll (np 2 Allreduce 8 B
// 0.32 us bound against 0.14 unbound).
func oversubscribed(cpus int) bool { return state.world.Size() > max(cpus, runtime.NumCPU()) }

// commCPUs counts the CPUs c's ranks may run on: the union of their
// affinity masks (an Allreduce through the schedules; -1 when it fails).
func commCPUs(c *Comm) int {
	var set unix.CPUSet
	words := make([]uint64, len(set))
	if unix.SchedGetaffinity(0, &set) == nil {
		for i := range set {
			words[i] = uint64(set[i])
		}
	}
	if _, err := iallreduce(c, nil, words, BOr[uint64], true); err != nil {
		return -1
	}
	n := 0
	for _, w := range words {
		n += bits.OnesCount64(w)
	}
	return n
}

// shmTeam returns c's team for an unrooted call moving bytes per rank, or
// nil when the call takes the schedules.
func (c *Comm) shmTeam(bytes int) *shm.Team { return c.shmTeamFor(bytes, false) }

// shmTeamFor returns c's team for a call moving bytes per rank, rooted
// (Bcast, Reduce) or not, or nil when the call takes the schedules. The
// sizes rank 0 chose for every rank decide; before the segment exists,
// the largest slot any rank could choose (so a call every rank could take
// through it sets it up).
func (c *Comm) shmTeamFor(bytes int, rooted bool) *shm.Team {
	if !state.shmCfg.Enable || bytes > shmSlotMax() || c.Size() < 2 {
		return nil
	}
	s := &c.shm
	if s.state.Load() == shmNew && s.state.CompareAndSwap(shmNew, shmSettingUp) {
		if c.oneMachine() {
			s.team, s.limit, s.over, s.read = c.shmSetup()
		}
		s.state.Store(shmReady)
	}
	if s.state.Load() != shmReady || s.team == nil || bytes > s.team.Slot() || !rooted && bytes > s.limit {
		return nil
	}
	return s.team
}

// shmTeamReduce is shmTeamIf for a Reduce, which oversubscribed may go
// through the segment in pieces of its slot size (coll_sm_reduce_pipeline).
// Every rank decides alike: the slot and over come from rank 0.
func (c *Comm) shmTeamReduce(block bool, bytes, elem int) *shm.Team {
	if !block || !state.shmCfg.ReducePipeline {
		return c.shmTeamIf(block, bytes)
	}
	t := c.shmTeamFor(0, true)
	if t != nil && (bytes <= t.Slot() || c.shm.over && t.Slot() >= elem) {
		return t
	}
	return nil
}

// shmReduce runs a Reduce through t, in pieces of whole elements of elem
// bytes at most t.Slot() long (one when in fits): each is a Reduce of its
// own, combined element-wise in rank order, so the result is the same bits
// as one Reduce through a slot that holds it all. out is nil except at root.
func shmReduce(t *shm.Team, in, out []byte, root, elem int, red func(acc, in []byte)) error {
	piece := t.Slot() / elem * elem
	for off := 0; ; off += piece {
		end := min(off+piece, len(in))
		var o []byte
		if out != nil {
			o = out[off:end]
		}
		if err := t.Reduce(in[off:end], o, root, red); err != nil || end == len(in) {
			return err
		}
	}
}

// shmReadMin is the least bytes per rank of a blocking Bcast, or Reduce,
// Allreduce, Allgather or Alltoall not in place, that goes through single-copy reads
// (shm.Team's *Read operations) instead of the segment's slots or the
// schedules, on a communicator whose ranks can read each other's memory
// and have a core each. np 2, ratio to Open MPI in the same run (compare.py
// --rounds 3, 2 interleaved takes): 8 KiB against the slots, Allgather
// 0.82-0.88 -> 0.65-0.70, Reduce 1.12-1.16 -> 0.84-1.08, Allreduce
// 0.50-0.58 -> 0.37-0.45; 16 KiB-1 MiB against the schedules, Allgather
// 1.34-2.16 -> 0.74-1.05, Reduce 1.37-3.09 -> 1.02-1.43 (0.3-1.4 above
// 256 KiB), Allreduce from 128 KiB 0.79-1.28 -> 0.62-0.97; Bcast 8 KiB-512
// KiB 0.84-1.63 -> 0.69-1.02.
const shmReadMin = 8 << 10

// shmTeamRead returns c's team for a blocking call moving bytes per rank
// through single-copy reads, or nil when the call takes another path.
func (c *Comm) shmTeamRead(block bool, bytes int) *shm.Team {
	if !block || bytes < shmReadMin {
		return nil
	}
	t := c.shmTeamFor(0, true)
	if t == nil || !c.shm.read || c.shm.over {
		return nil
	}
	return t
}

// shmTeamReadBcast is shmTeamRead for a Bcast. With more ranks than cores
// a Bcast reads only what the slots cannot take (it did from 64 to 128 KiB
// and from 1 MiB): the slots move it in pieces (shmPipe).
func (c *Comm) shmTeamReadBcast(block bool, bytes int) *shm.Team {
	if t := c.shmTeamRead(block, bytes); t != nil || !block {
		return t
	}
	if t := c.shmTeamFor(0, true); t != nil && c.shm.read && c.shm.over && bytes > t.Slot() {
		return t
	}
	return nil
}

// shmPipe is the piece of a slot Bcast with more ranks than cores
// (shm.Hooks.Pipe): the others copy one piece while the root copies the
// next. np 4 on 2 cores, Bcast/Open MPI (multi.py, median of 15 per-round
// ratios, main and this interleaved, 3 takes) against main's slots or
// reads: 32-128 KiB 0.98-1.34 -> 0.81-1.09, 256-512 KiB 0.71-0.92 ->
// 0.52-0.58, 1-4 MiB 0.75-0.76 -> 0.36-0.43 (against reading the root's
// buffer); 4 KiB pieces did less well at 32-128 KiB.
const shmPipe = 8 << 10

// shmTeamReadAlltoall is shmTeamRead for an Alltoall of bytes per rank in
// blocks of blk bytes, which with more ranks than cores also reads blocks
// of 64-128 KiB on up to 4 ranks, and on more ranks those the slots do not
// take (shmTeamAlltoall), instead of the slots (np 4) or the schedules:
// np 4 on 2 cores, Alltoall/Open MPI (multi.py, rounds 11-15, main and
// this interleaved, 4 takes) 64 KiB 1.30-1.54 -> 0.87-0.97, 128 KiB
// 1.07-1.55 -> 0.92-1.20; np 8 64 KiB 1.63-1.66 -> 1.26-1.33, 128 KiB
// 1.49 -> 1.27 (against the schedules). Reading lost at 16 KiB, at 512
// KiB-1 MiB (np 4 0.88-1.08 -> 0.91-1.16), and, since the slots are
// written with REP MOVSB, to the slots at 32 KiB on 3 and 4 ranks (osu
// medians of 8-10 runs in alternating order, slots against reads: np 3
// -17%, np 4 -17 and -22%; at 64-128 KiB np 4 +5-10%, so reads stay).
func (c *Comm) shmTeamReadAlltoall(block bool, bytes, blk int) *shm.Team {
	if t := c.shmTeamRead(block, bytes); t != nil || !block || blk < 64<<10 || blk > 128<<10 {
		return t
	}
	if c.shmTeamOverAlltoall(block, bytes, blk) != nil {
		return nil // the slots take it
	}
	if t := c.shmTeamFor(0, true); t != nil && c.shm.read {
		return t
	}
	return nil
}

// shmTeamAlltoall is shmTeamIf for an Alltoall of bytes per rank in blocks
// of blk bytes, or else shmTeamOverAlltoall's team.
func (c *Comm) shmTeamAlltoall(block bool, bytes, blk int) *shm.Team {
	if t := c.shmTeamIf(block, bytes); t != nil {
		return t
	}
	return c.shmTeamOverAlltoall(block, bytes, blk)
}

// shmTeamOverAlltoall is c's team when a blocking Alltoall of bytes per
// rank in blocks of blk bytes, with more ranks than cores, on more than 4
// ranks, takes the slots beyond coll_sm_oversubscribed_max_size: blocks
// of up to 128 KiB while a rank's come to at most shmAlltoallOverMax (the
// slot permitting); else nil. One predicate for shmTeamAlltoall and
// shmTeamReadAlltoall, so that what the reads leave the slots take. osu
// medians of 6-8 runs in alternating order, slots against reads, 64 KiB
// np 6 -22%, np 8 -25 and -29%, np 16 -28%; 128 KiB np 6 -25%, np 8 -13
// and -25%.
func (c *Comm) shmTeamOverAlltoall(block bool, bytes, blk int) *shm.Team {
	if !block || c.Size() <= 4 || blk > 128<<10 || bytes > shmAlltoallOverMax {
		return nil
	}
	if t := c.shmTeamFor(0, true); t != nil && c.shm.over && bytes <= t.Slot() {
		return t
	}
	return nil
}

// shmAlltoallOverMax bounds the bytes per rank of shmTeamOverAlltoall's
// Alltoalls (np 16 at 128 KiB, 2 MiB per rank, was measured only against
// the schedules: reading won by 10%).
const shmAlltoallOverMax = 1 << 20

// shmTeamReadAllgather is shmTeamRead for an Allgather of bytes per rank,
// which with more ranks than cores also reads the blocks the slots do not
// take (above coll_sm_oversubscribed_max_size) instead of the ring
// schedule: np 4 on 2 cores, Allgather/Open MPI (multi.py, median of 15
// per-round ratios, main and this interleaved) 512 KiB-1 MiB 1.01-1.09 ->
// 0.84-0.88; below, the slots win (64-256 KiB 0.55-0.66 against 0.68-0.78
// read).
func (c *Comm) shmTeamReadAllgather(block bool, bytes int) *shm.Team {
	if t := c.shmTeamRead(block, bytes); t != nil || !block || bytes < shmReadMin {
		return t
	}
	if t := c.shmTeamFor(0, true); t != nil && c.shm.read && c.shm.over && bytes > c.shm.limit {
		return t
	}
	return nil
}

// shmTeamSplitRead returns c's team for a blocking Allreduce (not in place)
// of bytes per rank through AllreduceSplitRead, or nil: with more ranks
// than cores, from shmReadMin on where the slots do not take it
// (shmTeamAllreduce), instead of the schedules. np 4 on 2 cores,
// Allreduce/Open MPI (multi.py --rounds 9-11, main and this interleaved,
// 2 takes) 256 KiB-4 MiB 0.87-1.23 -> 0.57-0.77; np 8, 128 KiB-2 MiB
// 0.90-1.17 -> 0.46-0.95: each rank folds its 1/n of the vector and reads
// the rest, waiting for every rank three times in all, where Rabenseifner
// and the ring need every rank on a core at each of their steps.
func (c *Comm) shmTeamSplitRead(block bool, bytes int) *shm.Team {
	if !block || bytes < shmReadMin {
		return nil
	}
	t := c.shmTeamFor(0, true)
	if t == nil || !c.shm.read || !c.shm.over || t.Slot() < shm.SplitReadSlot {
		return nil
	}
	if bytes <= c.shm.limit && c.Size()*bytes <= state.shmCfg.OverAllreduceMax {
		return nil // the slots take it
	}
	return t
}

// shmOver reports whether c's segment is set up and rank 0 saw the job
// oversubscribed when it made it: the same on every rank at every call
// (the segment is made at the same call on all, collectively).
func (c *Comm) shmOver() bool {
	s := &c.shm
	return s.state.Load() == shmReady && s.team != nil && s.over
}

// shmTeamIf is shmTeam for a blocking call, nil for a nonblocking one
// (which never sets the segment up either).
func (c *Comm) shmTeamIf(block bool, bytes int) *shm.Team {
	if !block {
		return nil
	}
	return c.shmTeam(bytes)
}

// shmTeamAllreduce is shmTeamIf for an Allreduce: oversubscribed, only
// while bytes times the ranks is within coll_sm_oversubscribed_allreduce_max_size.
func (c *Comm) shmTeamAllreduce(block bool, bytes int) *shm.Team {
	t := c.shmTeamIf(block, bytes)
	if t != nil && c.shm.over && c.Size()*bytes > state.shmCfg.OverAllreduceMax {
		return nil
	}
	return t
}

// shmTeamBcast is shmTeamIf for a Bcast.
func (c *Comm) shmTeamBcast(block bool, bytes int) *shm.Team {
	if !block {
		return nil
	}
	return c.shmTeamFor(bytes, true)
}

// oneMachine reports whether every rank of c is on this machine.
func (c *Comm) oneMachine() bool {
	me := c.c.NodeID(c.Rank())
	for r := 0; r < c.Size(); r++ {
		if c.c.NodeID(r) != me {
			return false
		}
	}
	return true
}

// shmSetup makes c's segment (see above); nil when any rank failed. limit
// is the largest unrooted call it takes, over whether rank 0 saw the job
// oversubscribed.
func (c *Comm) shmSetup() (team *shm.Team, limit int, over, read bool) {
	n, me := c.Size(), c.Rank()
	cpus := commCPUs(c)
	if cpus < 0 {
		return nil, 0, false, false
	}
	// msg: the slot size and limit rank 0 chose (8 bytes each), 1 if it
	// saw the job oversubscribed (1 byte), then the file's name.
	var msg [17 + 256]byte
	path := ""
	if me == 0 {
		slot, limit := shmSizes(n, oversubscribed(cpus))
		path = shmPath(c)
		err := shm.Create(path, n, slot)
		if small := max(8, state.shmCfg.MaxSize&^7); err != nil && slot > small {
			// Short of memory for the large slots: the small ones still
			// spare the small collectives their schedules.
			slot, limit = small, small
			err = shm.Create(path, n, slot)
		}
		if err != nil {
			path = ""
		}
		binary.LittleEndian.PutUint64(msg[:8], uint64(slot))
		binary.LittleEndian.PutUint64(msg[8:16], uint64(limit))
		if oversubscribed(cpus) {
			msg[16] = 1
		}
		copy(msg[17:], path)
	}
	if _, err := ibcast(c, msg[:], 0, true); err != nil {
		return nil, 0, false, false
	}
	slot, limit, over := int(binary.LittleEndian.Uint64(msg[:8])), int(binary.LittleEndian.Uint64(msg[8:16])), msg[16] == 1
	name := msg[17:]
	path = string(name[:clen(name)])
	ok := []int32{0}
	if path != "" {
		// Oversubscribed, a Barrier after a Bcast goes through its root
		// (shm.Team.leadBarrier): np 4 on 2 cores, a small Bcast after a
		// Barrier takes 0.1 µs instead of 4; spinning ranks keep the flat
		// Barrier, one cache-line transfer shorter.
		yield := over
		h := shm.Hooks{Progress: state.pml.Progress, Check: c.shmCheck, Yield: yield, Lead: yield}
		if over {
			h.Pipe = shmPipe
		}
		// ok 2: this rank can also read every other rank's memory.
		canRead, canWrite := true, true
		for r := 0; r < n; r++ {
			canRead = canRead && (r == me || state.pml.SingleCopy(c.c.WorldRank(r)))
			canWrite = canWrite && (r == me || state.pml.CanWrite(c.c.WorldRank(r)))
		}
		if canRead {
			h.Read = func(r int, addr uintptr, dst []byte) error {
				return state.pml.ReadFrom(c.c.WorldRank(r), addr, dst)
			}
		}
		if canRead && canWrite {
			h.Write = func(r int, addr uintptr, src []byte) error {
				return state.pml.WriteTo(c.c.WorldRank(r), addr, src)
			}
		}
		if t, err := shm.Open(path, n, me, slot, h); err == nil {
			team, ok[0] = t, 1
			if canRead {
				ok[0] = 2
			}
		}
	}
	_, err := iallreduce(c, nil, ok, Min[int32], true)
	if me == 0 && path != "" {
		os.Remove(path)
	}
	if err != nil || ok[0] == 0 {
		if team != nil {
			team.Close()
		}
		return nil, 0, false, false
	}
	return team, limit, over, ok[0] == 2
}

// shmCheck is a waiting team's check: c is still usable and no rank of it
// is lost (a wait for it would never end).
func (c *Comm) shmCheck() error {
	if err := c.c.Usable(); err != nil {
		return err
	}
	for r := 0; r < c.Size(); r++ {
		if state.pml.PeerLost(c.c.WorldRank(r)) {
			return fmt.Errorf("gorun: rank %d of the communicator (world rank %d) is gone during a collective: %w", r, c.c.WorldRank(r), errs.ErrPeerLost)
		}
	}
	return nil
}

func clen(b []byte) int {
	for i, x := range b {
		if x == 0 {
			return i
		}
	}
	return len(b)
}

// shmPath names a new segment file of c in /dev/shm, of the job's form
// (mpool.FileName), so the launcher's cleanup after a crash covers it.
func shmPath(c *Comm) string {
	var tok [6]byte
	rand.Read(tok[:])
	job := os.Getenv(jobenv.EnvJobID)
	if job == "" {
		job = "single" + strconv.Itoa(os.Getpid())
	}
	return filepath.Join("/dev/shm", mpool.FileName(job, fmt.Sprintf("coll%x-%s", c.c.Context(), hex.EncodeToString(tok[:]))))
}

// shmClose unmaps c's segment (Free: no collective runs on c any more).
func (c *Comm) shmClose() {
	if s := &c.shm; s.state.Load() == shmReady && s.team != nil {
		s.team.Close()
	}
}
