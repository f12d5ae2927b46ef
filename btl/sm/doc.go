// Package sm is the shared-memory BTL: it moves fragments between the ranks
// of a job on one machine through the segment mpool lays out. Models: Open
// MPI btl/smcuda (segment sizing, FIFOs, fragment free lists, fragments
// returned to their sender as acks, per-endpoint pending sends) and UCX
// uct/sm/mm (inline data in the FIFO slot, sequence flags, batched tail
// release, receivers that sleep until a sender wakes them).
//
// Design, with its costs:
//   - One receive FIFO per rank (multi-producer, single-consumer), so memory
//     is O(N) per machine: 256 slots × 128 B = 32 KiB per rank by default.
//     Senders claim a slot with a CAS on the receiver's head (lock-free, not
//     a spin lock: with more ranks than cores, a preempted lock holder would
//     stall every sender), fill it, and store the slot's seq word last.
//   - A slot carries a 32-byte header and 96 bytes inline: hdr+payload up to
//     96 B needs no fragment (a 0-byte PML message is one slot, one copy).
//     Payloads up to btl_sm_inline_limit (512 B) take consecutive slots
//     (claimed with one CAS): the first slot's 96 B, then 120 B in each
//     continuation slot, whose seq word the sender sets to that slot's
//     number (the receiver checks it: a length cannot claim slots nobody
//     wrote); the first slot's seq publishes them all and the receiver
//     gathers them. No fragment, no ack: 128–512 B one-way went from
//     ~0.72 to ~0.56 us (far placement).
//     Above ~768 B the slot-by-slot copy loses to one fragment.
//   - Larger sends copy hdr+payload into a fragment from the sender's own
//     pool (eager: eager_limit+64 B, max-size: max_send_size+64 B; with the
//     defaults 32 of each, 1.13 MiB per rank) and put its offset in the slot.
//     The receiver validates the offset against the sender's region (a bad
//     one is logged and dropped, never followed), calls the RecvFunc with data
//     pointing into the fragment (zero copy) and returns it to its sender in
//     an ack slot (up to 12 offsets per slot) in the sender's FIFO. The free
//     lists are process-local: only the owner allocates and frees.
//   - A full FIFO or an empty pool puts a send on the peer's pending queue,
//     which keeps Send order (while it is non-empty, new sends join its tail)
//     and is retried on every Progress call, not only when acks arrive (the
//     Open MPI 5.0.6 many-to-one hang, ompi#12979). Acks that find the
//     sender's FIFO full wait in a local list and are retried too, so acks
//     never deadlock.
//   - The receiver releases its tail every btl_sm_fifo_lazy_free slots while
//     busy and at once when its FIFO runs dry; a sender re-reads the shared
//     tail only when its cached copy says the FIFO is full.
//   - Sleep arms a flag, re-checks the FIFO, then FUTEX_WAITs on a word in its
//     control block; a sender that sees the flag after publishing wakes it
//     (the Dekker argument is in sleep.go).
//   - Peer loss: pidfds polled every ~5 ms of Progress and on every Sleep wake
//     (at most every 50 ms asleep; kill(pid, 0) where pidfd_open is refused),
//     at most 64 peers per check, round robin: a loss is noticed within
//     ceil((N-1)/64) checks (one check up to 65 ranks; at 1024 ranks 16, i.e.
//     ~80 ms while polling, ~0.8 s asleep), and a check costs O(1), not O(N).
//     Beyond 16 ranks per core a sleeping rank naps 50 ms × (ranks per core
//     / 16) and checks 64 × as many peers (at 1024 ranks on 2 cores: 1.6 s,
//     all peers), so that sleeping ranks' wakes do not fill the cores; the
//     attach wait naps the same. The pidfds are opened lazily, at most 64
//     per check as the checks reach their peers (kill(pid, 0) until then):
//     New opens none, instead of N-1 per rank.
//   - Fast boxes (Open MPI vader's fbox): once a rank has sent
//     btl_sm_fbox_threshold (16) messages to a peer, it takes one of the
//     btl_sm_fbox_max (32) boxes of the peer's region (one atomic add on the
//     peer's control block, once per pair; a region holds min(fbox_max,
//     N-1) boxes, 32 KiB each by default, so memory stays O(N): at 64 ranks
//     1.87× the segment without boxes), writes its rank in the box's owner
//     word and announces it with a kindBox slot in the peer's FIFO (the
//     receiver refuses an announcement the owner word does not confirm).
//     From then on messages up to a quarter of the box (hdr+payload, 8 KiB
//     by default) are appended to that single-writer ring with plain
//     stores and an atomic store of the record's header, last (box.go): no
//     CAS on a head all senders share, no fragment, no ack. The receiver
//     polls only the boxes announced to it, 4 per Progress, round robin, up
//     to 32 records each (a box whose last poll found nothing: up to the
//     first record whose successor is on another cache line, which the
//     sender still holds; see pollBoxes), and publishes its read position
//     when it has consumed half a box or found it empty; the sender reads that position
//     only when its cached copy says the box is full. A full box, a larger
//     message or a non-empty pending queue uses the FIFO as before.
//     A sleeping receiver is woken for a box record by the sender's armed
//     check after publishing. The header's store has release order only
//     (a fence per record stalled the sender on the receiver's lines), so
//     that check may miss a receiver arming at that instant; a receiver
//     with boxes therefore checks them again after its first nap of at
//     most 50 us (sleep.go), by which time the store is visible. A
//     membarrier by the receiver before it sleeps was tried: 13 us per
//     Sleep here when another rank runs on the other vCPU.
//   - Box/FIFO order: sends to one peer hold that peer's in-process lock
//     (peer.mu), which makes the box single-writer and gives every data
//     message of the pair, once the box is announced, a pair sequence
//     number (1, 2, ..., skipping 0), in Send order, whichever way it goes.
//     Box records carry it in their header, FIFO slots in elem.pseq (0:
//     sent before the box). The receiver delivers a box record only if its
//     number is the next one expected; a FIFO slot with number s first
//     delivers the pair's box records up to s-1, which are already
//     published (the sender stored them before it claimed the slot). So
//     the pair's messages are delivered in Send order across box and FIFO
//     (MPI non-overtaking); TestBoxFIFOOrderStress checks it under -race.
//   - Single copy: at New every rank reads a magic word from its next 4 peers with
//     process_vm_readv; success sets Attributes().SingleCopy.
//
// Invariants: slots are delivered in slot order, and a pair's box records
// and FIFO slots in pair sequence order, so messages from one sender arrive
// in Send order; every fragment handed out is either on a pending
// queue, in a receiver's FIFO, with a receiver, or in an ack on its way back
// (or abandoned with a lost peer); data from the segment is never trusted
// (sender rank, tag, length, offset are checked). The hot path does no
// allocation, no defer, no map lookup and no clock read per message.
//
// A peer that dies between claiming slots and publishing them would stall
// our FIFO there: claims are announced in the sender's control block, and
// once the peer is found lost its abandoned slots are skipped (gone.go).
// Receivers do not wake senders when they free slots, so a Sleep with sends
// queued for a full FIFO naps at most 1 ms.
package sm
