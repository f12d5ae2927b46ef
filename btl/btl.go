// Package btl defines the byte transfer layer: the small interface through
// which the PML moves fragments between the ranks of a job, and the
// attributes by which the PML chooses a protocol per message.
//
// Lifecycle: a component (btl/self, btl/sm) is built by the root package at
// Init from the resolved MCA parameters, selected by the `btl` selector
// parameter. The PML registers one receive callback per Tag, then calls Send
// and Progress until Close. Optional capabilities are separate interfaces
// the PML looks for: Sleeper and Watcher (how a rank waits for work),
// Flusher (whether sends are still queued), Progressor (how long a rank
// may go without Progress), JobBarrier (Finalize's barrier in shared
// memory) and Placer (payloads read straight into the receive buffer).
//
// Ownership rules (the part every implementation must honour):
//   - Send copies hdr before it returns, always.
//   - Send returns copied=true when payload has been copied out too (into a
//     FIFO slot, a shared fragment, or a pending-queue entry holding its own
//     copy); the caller may reuse payload at once and no completion follows.
//   - Send returns copied=false when it had no fragment to copy payload into:
//     the BTL keeps a reference to payload on the peer's pending queue and
//     calls c.SendDone exactly once when payload has been copied out (err nil)
//     or can never be (err wraps errs.ErrPeerLost). Until then the caller must
//     not modify payload.
//   - A RecvFunc's data (header then payload) is valid only during the call;
//     the BTL returns the fragment to its sender after the callback returns.
//
// Ordering: fragments from one sender to one receiver through one module are
// delivered in Send order, pending queues included (while a peer's pending
// queue is non-empty, new sends join its tail).
//
// Concurrency: Send, Progress and the accessors are safe for concurrent use by
// many goroutines. RecvFuncs and the peer-lost handler are called from inside
// Progress, by one goroutine at a time; they must not call Progress, but they
// may call Send.
package btl

import (
	"encoding/binary"
	"time"

	"github.com/gorun-mpi/gorun/internal/spinlock"
)

// Tag selects the receive callback of a fragment; like Open MPI's
// MCA_BTL_TAG_PML, the PML owns a range of them.
type Tag uint8

// Tags used by the PML. The BTLs reserve no tag of their own in this range.
const (
	TagPMLMatch Tag = 1 + iota // eager match header + payload
	TagPMLRndv                 // rendezvous header + first chunk
	TagPMLAck                  // rendezvous / sync acknowledgement
	TagPMLFrag                 // rendezvous pipeline fragment
	TagPMLFin                  // single-copy read finished
	TagPMLCtl                  // PML control messages (Dup agreement, barrier, back-pressure)
	NumTags                    // number of tags a module must support
)

// MaxHeader is the largest hdr accepted by Send.
const MaxHeader = 64

// Attributes describe a module to the PML.
type Attributes struct {
	EagerLimit  int  // largest payload (header not counted) the PML may send eagerly
	MaxSendSize int  // largest payload of one Send
	Latency     int  // relative latency, lower is better (Open MPI: self 0, sm 1)
	Bandwidth   int  // relative bandwidth in MB/s
	Exclusivity int  // a higher-exclusivity module that reaches a peer wins it
	SingleCopy  bool // ReadFrom works for every reachable peer (process_vm_readv probed)
}

// RecvFunc handles one arriving fragment from world rank src. data is the
// header and payload as sent; it must not be retained after the call.
type RecvFunc func(src int, data []byte)

// Completion is told when a Send that returned copied=false has copied its
// payload out (err == nil) or never will (err wraps errs.ErrPeerLost).
type Completion interface {
	SendDone(err error)
}

// TrySender is a Module that can take a message only if it can copy it
// before returning: TrySend sends hdr+payload (both copied by then, so the
// caller may reuse payload) and reports true, or sends nothing and reports
// false where Send would have kept payload referenced until a Completion.
// It never calls back. Its checks and errors are Send's. The PML's eager
// sends use it and then need no request of their own.
//
// The header is the PML's MATCH header, 16 bytes, passed by value: a
// caller's header built on its stack would escape to the heap through the
// interface call as a slice, so a blocking send would need a scratch
// buffer of its own (a pool's Get and Put) for every message.
type TrySender interface {
	TrySend(dst int, tag Tag, hdr Header16, payload []byte) (bool, error)
}

// LockedSender is a TrySender whose sends to a peer are serialized by a
// lock the caller may take itself, to do its own per-message bookkeeping
// under it: the PML numbers an eager message and takes its credit under
// the lock the message is then sent in, one locked instruction per
// message where a sequence number's and the credit's atomic adds and the
// lock's CAS were three. (Each waited for the previous message's stores
// into the peer's ring to reach the other core: perf put 9% of osu bibw's
// samples at 8 B on the first of them.)
//
// SendLock(dst) is the lock of world rank dst, a peer the module reaches;
// the same Mutex for the module's life. TrySendLocked, called with it
// held, is TrySend's fast case alone: it copies hdr+payload out now and
// reports true, or does nothing and reports false; it never blocks,
// never releases or takes the lock and never calls back. On false the
// caller releases the lock and sends through TrySend or Send, which also
// report the errors (a closed module, a lost peer) that TrySendLocked
// only declines on.
//
// TrySendBytesLocked is TrySendLocked for a header of any length up to
// MaxHeader: the PML sends a rendezvous's RNDV with it, in the section
// that numbers the send and registers it for its answer (one lock where
// the number's, the registration's and the BTL's were three). It may
// decline more often than TrySendLocked (sm: a message that does not fit
// the box); the caller then sends through Send, as above. serial says
// that the message is a ping-pong's (the sender's only send in flight,
// its receiver likely waiting for it): sm's box then takes it up to 16
// KiB and a header, where it takes a one-way stream's only up to 8 KiB
// (larger records went faster in fragments).
type LockedSender interface {
	TrySender
	SendLock(dst int) *spinlock.Mutex
	TrySendLocked(dst int, tag Tag, hdr Header16, payload []byte) bool
	TrySendBytesLocked(dst int, tag Tag, hdr, payload []byte, serial bool) bool
}

// SourcePoller is a module that can poll for one peer's messages alone:
// PollFrom(src) delivers what has arrived from world rank src (sm: src's
// fast box, and the shared FIFO whenever a slot waits there) and moves
// src's queued sends on, through the same callbacks and in the same order
// as Progress, and returns the events it handled, like Progress; 0 when
// another goroutine is progressing the module. It may skip the rest of a
// Progress pass (other peers' channels and queued sends, the check for
// lost peers), so a caller must still call Progress regularly: the PML's
// wait for a message from src polls so between full passes (pml.pollFor).
//
// Waiting(src) is a hint that takes no lock and writes nothing: true when
// something from src (or in a queue that src shares) may have arrived, or
// sends to src wait to go; false otherwise. It may be stale either way for
// an instant (true for a message a poll has just taken; false for one
// arriving as it looks), and it does not see work a poll finds on its own
// (sm: acks it could not send before), so a caller still polls regularly:
// the PML's wait polls when Waiting says yes, or after a few noes in a row
// (pml.peekPolls).
type SourcePoller interface {
	PollFrom(src int) int
	Waiting(src int) bool
}

// Header16 is a 16-byte header by value: bytes 0-7 little-endian in Lo,
// bytes 8-15 in Hi (two registers in a call).
type Header16 struct{ Lo, Hi uint64 }

// Header16Of is the Header16 of b's first 16 bytes (b holds at least 16).
func Header16Of(b []byte) Header16 {
	return Header16{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:16])}
}

// Bytes is h's 16 bytes.
func (h Header16) Bytes() [16]byte {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], h.Lo)
	binary.LittleEndian.PutUint64(b[8:], h.Hi)
	return b
}

// Writer is a module with single copy that can also write into a peer's
// memory: WriteTo copies src to address addr of peer's memory. Only valid
// when Attributes().SingleCopy; the same checks and errors as ReadFrom.
type Writer interface {
	WriteTo(peer int, addr uintptr, src []byte) error
}

// VecReader is a module with single copy that can read several regions of
// one peer's memory in one call (process_vm_readv with several iovecs):
// one system call's fixed cost (~0.45 us here) for the lot instead of one
// per region. Only valid when Attributes().SingleCopy.
type VecReader interface {
	// ReadVec copies len(dst[i]) bytes at addr[i] of peer's memory into
	// dst[i] for the first regions, in order, and returns how many it
	// copied whole. It may stop early, at a bound on one call's regions or
	// bytes or at a region it could not read; 0 says the first region was
	// not copied: ReadFrom reads that one alone and names its error.
	ReadVec(peer int, addr []uintptr, dst [][]byte) int
}

// Module is one transport instance inside one rank.
type Module interface {
	// Name is the component name ("self", "sm").
	Name() string
	// Attributes are fixed after construction.
	Attributes() Attributes
	// Reachable reports whether the module can carry fragments to world rank peer.
	Reachable(peer int) bool
	// Register installs fn for fragments carrying tag. Call before the first
	// Progress; registering a tag twice replaces the callback.
	Register(tag Tag, fn RecvFunc)
	// OnPeerLost installs fn, called from Progress once per peer whose process
	// has ended. After it, Send to that peer fails with errs.ErrPeerLost and
	// every pending Completion for the peer gets that error.
	OnPeerLost(fn func(peer int))
	// Send queues hdr (len ≤ MaxHeader) and payload (len ≤ MaxSendSize) to
	// peer under tag; see the package doc for who owns payload afterwards.
	Send(peer int, tag Tag, hdr, payload []byte, c Completion) (copied bool, err error)
	// Progress delivers arrived fragments to their callbacks, handles acks,
	// and retries every pending queue. It returns the number of events handled.
	Progress() int
	// ReadFrom copies len(dst) bytes from address addr of peer's memory into
	// dst (single copy). Only valid when Attributes().SingleCopy.
	ReadFrom(peer int, addr uintptr, dst []byte) error
	// Close releases the module's resources. Sends still queued are
	// dropped without completion. Close may run while other goroutines are
	// inside Send, ReadFrom, Wake or the optional methods below (a rank
	// finalizing while its goroutines still send): those return an error
	// (Send: one wrapping errs.ErrFinalized) or do nothing, and none of
	// them touches a released resource (an unmapped segment, a closed
	// descriptor) after Close has returned. Progress and Sleep are not
	// called concurrently with Close (the PML holds its progress lock).
	Close() error
}

// Sleeper is a module that can block its rank until the module has work:
// one whose peers deliver into memory the rank must poll (sm's FIFO, with a
// futex the senders wake) or into kernel objects it can wait on (sockets,
// with epoll). The PML finds its sleepers by this interface, never by name.
//
// One goroutine of a rank sleeps at a time, in one module, the primary:
//   - with no Sleeper at all (self only), the PML sleeps on its own channel,
//     woken by its local events (sends to self, cancels, peer losses);
//   - with one, the rank sleeps in it;
//   - with several (sm and tcp), every Sleeper but one must be a Watcher;
//     the rank sleeps in the one that is not (or in the first, when all
//     are), after arming the others to wake it. Two Sleepers that cannot
//     watch cannot share a rank: pml.New refuses that selection.
//
// So a rank with sm and tcp sleeps in sm's futex, and tcp's poller ends
// that sleep through sm.Wake when a socket becomes readable (or writable
// while sends are queued): the rank wakes for either. A rank with tcp
// alone sleeps in tcp's own poller.
type Sleeper interface {
	// Sleep blocks until the module has work for Progress (a fragment
	// arrived, a peer was lost, a queued send may move on), Wake is
	// called, or d elapses (d <= 0: no timeout). It returns at once when
	// such work is already visible or a Wake is pending. Only one
	// goroutine of a process sleeps in a module at a time; a spurious
	// return is allowed (the PML polls and sleeps again).
	Sleep(d time.Duration)
	// Wake ends the Sleep in progress, or the next one if none is. It may
	// be called from any goroutine at any time, also concurrently with
	// Close and after it (then it does nothing), and must not block.
	Wake()
}

// Watcher is a Sleeper that can also end another module's Sleep: it has a
// poller or goroutines of its own that see its work arrive without the
// rank polling it (a socket BTL: an epoll loop, or reader goroutines).
type Watcher interface {
	Sleeper
	// Watch(wake) arms the module: until Watch(nil) disarms it, whenever
	// work for Progress arrives, the module calls wake at least once, from
	// any goroutine, without holding a lock that Progress or Send takes.
	// Work that arrived before the arming need not be announced: the PML
	// arms, then polls every module, then sleeps. A wake already under way
	// may still run after Watch(nil) returns (wake is harmless then).
	Watch(wake func())
}

// Flusher is a module that can hold sends after Send returned: queued for
// a full FIFO or a full socket. A module with such queues should implement
// it, so that Finalize delivers a rank's last messages (its barrier's)
// before Close drops the queues.
type Flusher interface {
	// QueueMark returns a mark of the sends to peer accepted so far.
	QueueMark(peer int) uint64
	// Flushed reports whether every send to peer accepted before mark was
	// taken has been handed over to peer (sends accepted later do not
	// count), or never will be because peer is lost.
	Flushed(peer int, mark uint64) bool
}

// Progressor is a module whose peers suffer when its rank goes too long
// without calling Progress, even though the rank is alive: a TCP receiver
// that does not read lets its socket's receive window close, and the
// sender's TCP_USER_TIMEOUT (btl_tcp_timeout) then ends the connection to
// a peer that is only busy computing. ProgressWithin returns the longest
// the module may go unpolled; the PML then also polls from a goroutine of
// its own at that interval (Open MPI's answer is an optional progress
// thread), so a rank in a long computation between MPI calls still drains
// its sockets and moves its queued sends.
type Progressor interface {
	ProgressWithin() time.Duration
}

// JobBarrier is a module whose ranks share memory in which they can meet
// at Finalize without messages (sm): the PML uses it, instead of a barrier
// of messages, when the module reaches every other rank of the world. A
// rank arrives once; the last one to arrive releases them all and wakes
// those asleep in the module's Sleep, which returns once this rank has
// arrived and been released.
type JobBarrier interface {
	// Arrive counts this rank in; a second call does nothing.
	Arrive()
	// Released reports whether every rank of the module has arrived.
	Released() bool
}

// PlaceFunc is a Placer's question to the PML: the n-byte payload of a
// fragment from world rank src whose header hdr has arrived goes where?
// It returns a slice of exactly n bytes (the posted receive buffer's part),
// or nil: deliver the fragment to its RecvFunc as usual. hdr is valid only
// during the call.
type PlaceFunc func(src int, hdr []byte, n int) []byte

// LandedFunc tells the PML that the n-byte payload of a fragment it placed
// (PlaceFunc) is all in place; hdr is the fragment's header, valid only
// during the call. It replaces the RecvFunc call for that fragment.
type LandedFunc func(src int, hdr []byte, n int)

// Placer is a module that can read a fragment's payload straight into its
// final place (a socket BTL: into the posted receive buffer, instead of
// into its own buffer and then copying). Like RecvFuncs, place and landed
// are called from inside Progress by one goroutine at a time.
//
// Between a place call that returned dst and the landed call, the module
// writes into dst, and nothing else; fragments from src that follow are
// delivered after landed (ordering is kept). If src is lost before the
// payload is all in, landed is never called and the module writes nothing
// into dst after it has reported src lost (OnPeerLost's handler), nor after
// Close.
type Placer interface {
	// RegisterPlace installs place and landed for fragments carrying tag
	// (their RecvFunc still gets the fragments place declines). Call before
	// the first Progress.
	RegisterPlace(tag Tag, place PlaceFunc, landed LandedFunc)
}

// A DirectTaker hands src's next message, when its tag is in tags, to a
// waiting receive (t) instead of to the callback registered for the tag.
// It returns 1 when t took it, 0 when nothing from src is there yet, -1
// when the caller must poll the usual way (another kind of message first,
// work queued, the module busy).
type DirectTaker interface {
	TakeFrom(src int, tags TagSet, t Taker) int
}

// A Taker is a waiting receive that a DirectTaker offers a message: Take
// reports whether it took data, which carries tag (then the message is
// consumed; data is valid only during the call).
type Taker interface {
	Take(src int, tag Tag, data []byte) bool
}

// A TagSet is a set of tags: bit t for Tag t.
type TagSet uint32

// TagsOf is the set of tags.
func TagsOf(tags ...Tag) TagSet {
	var s TagSet
	for _, t := range tags {
		s |= 1 << t
	}
	return s
}

// Has reports whether t is in s.
func (s TagSet) Has(t Tag) bool { return s>>t&1 != 0 }
