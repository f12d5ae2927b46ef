// Package match pairs arriving messages with posted receives, by the MPI
// point-to-point rules. It is a pure data structure: no I/O, no locks, no
// goroutines, no clocks, no globals. The caller (the PML) holds one lock
// around every call and acts on what the calls return.
//
// The design follows Open MPI's pml/ob1 (pml_ob1_recvfrag.c, match_one and
// match_incomming). Differences: no PERUSE/SPC hooks, no custom-match build
// variants, and ahead-of-turn messages are parked per source in a list sorted
// by sequence number rather than in ob1's frags_cant_match list.
//
// Data layout. Per context (communicator) there is:
//   - per source rank: the next expected Seq, a queue of posted receives with
//     that exact source (AnyTag ones included), the unexpected messages from
//     that source in Seq order, and the parked (ahead-of-turn) messages
//     sorted by Seq distance from the expected one;
//   - a queue of AnySource receives, in posting order;
//   - every unexpected message of the context, in release order.
//
// All queues are intrusive doubly linked lists threaded through Msg and Recv,
// so Cancel and Remove are O(1) and steady-state calls allocate nothing.
// Context state is created on first use (Arrive or Post) and kept; it costs
// about 72 bytes per rank (a 1024-rank communicator: ~72 KB per context).
//
// Invariants (checked by the model test against a linear reference):
//   - Non-overtaking: messages from one (ctx, src) become matchable strictly
//     in Seq order (modulo 2^32); a message ahead of its turn is parked and
//     invisible to Post and Probe until every earlier Seq has arrived.
//   - A message matches the earliest-posted receive that accepts it: the
//     head candidates of the specific and AnySource queues are compared by a
//     per-context post sequence number (ob1's trick).
//   - A receive matches the earliest-released unexpected message it accepts:
//     the per-source queue for a specific source, the per-context release
//     order for AnySource.
//   - Nothing matches across contexts.
//   - A Msg is in exactly one state: free (not known to the engine), parked,
//     or unexpected. A Recv is either free or posted. Matched, cancelled,
//     removed and dropped objects are free again and may be reused.
//
// Caller bugs panic with a message naming the call, the value and what is
// allowed: a Seq that was already delivered (duplicate or stale) or is
// already parked, a source outside 0..size-1 (AnySource allowed for
// receives), a message tag < 0 or receive tag < AnyTag, and passing a Msg or
// Recv that the engine already holds (or, for Remove, does not hold as
// unexpected). The transport guarantees each Seq exactly once, so these
// never happen in a correct program; the PML validates user arguments
// before calling in.
package match
