// Package pml is gorun's point-to-point messaging layer (Open MPI's pml/ob1
// is the model): it matches messages to receives by (communicator, source,
// tag) in order, sends small messages eagerly and large ones by rendezvous
// (copy pipeline, or a single-copy read when the transport allows it), and
// drives the progress of every BTL.
//
// Protocols, chosen per message by its size against the BTL's limits (and,
// between the eager limit and pml_ob1_stream_limit, by whether the send
// continues a one-way stream, whose rendezvous carries the whole payload
// in its first fragment instead of a single-copy read: Comm.streamingTo;
// with pml_ob1_stream_adaptive, whichever of the two moved the stream's
// windows faster lately: PML.timeStream; above it, up to
// pml_ob1_stream_pipe_max, such a stream's messages go by the rget read
// or by the rndv pipeline, chosen the same way):
//
//	eager   MATCH(ctx,tag,seq)+payload; the send completes when the BTL has
//	        copied the payload. With the sync flag (Ssend) the header also
//	        carries the send-request id and the send completes on the
//	        receiver's ACK, sent when it matches.
//	rndv    RNDV(ctx,tag,seq,sreq,len)+first chunk; on match the receiver
//	        answers ACK(sreq,rreq,from,want) and the sender streams
//	        FRAG(rreq,off) fragments of MaxSendSize for [from,want): from is
//	        the chunk's length, or 0 when the RNDV arrived unexpected (its
//	        chunk is not kept, so an unexpected rendezvous costs a header);
//	        want < len when the receive buffer is short (truncation: nothing
//	        beyond it is sent).
//	rget    RNDV with the rget flag and the sender's buffer address; the
//	        receiver reads the bytes with the BTL's single-copy ReadFrom and
//	        answers FIN(sreq); only then does the send complete.
//	placed  over a BTL that reads payloads straight into their place
//	        (btl.Placer: tcp), a MATCH or RNDV whose header is in while
//	        its payload is still coming is matched at once when a posted
//	        receive takes it (placeMsg, match.Engine.MatchPosted): the
//	        payload lands in the receive's buffer without a copy, and a
//	        rendezvous's ACK leaves before its first chunk has landed, so
//	        the sender streams the FRAGs meanwhile. FRAGs of a pipelined
//	        receive land in its buffer the same way (placeFrag).
//
// The decisions (which protocol, how big a first chunk, what a matched
// RNDV needs, whether a FRAG fits) are pure functions in proto.go, tested
// by tables without a transport; send.go and recv.go carry them out.
//
// Locks: PML.mu guards the matching engine, the request tables, the free
// lists and the unexpected-memory accounting; PML.progMu serializes
// Progress across all BTLs (BTL callbacks run under it). The whole lock
// order is written at the PML type. Nothing that holds mu calls Progress,
// waits, or copies a rendezvous payload (an eager one, at most the eager
// limit, is copied under it).
//
// Requests, one lifecycle for every operation:
//
//	start    Comm.Isend / Comm.Irecv (Message.StartRecv for a matched
//	         probe) fill a zero Request that the caller owns (a field of
//	         its own struct, or one from the pool) and must not touch
//	         again until Done. Blocking calls and Handles are built on
//	         these; StartExternal starts the one kind that is not a
//	         message (below).
//	pending  the PML holds the Request (tables, the matching engine, a
//	         BTL's Completion) and completes it exactly once (finish):
//	         Status and error final, Done true, waiters woken. A send the
//	         BTL copied inside Isend is complete before Isend returns.
//	result   Wait (drives progress) or Done (does not: safe from a
//	         progress hook) then the Status and error, as often as wanted.
//	reuse    once Done, the owner may zero and reuse it (the PML keeps
//	         no reference to a completed Request), except after a Wait
//	         that blocked on it: finish may still be closing that waiter's
//	         channel, so reset refuses such a Request and the GC takes it.
//
// A Request need not be one message: an operation made of many (a
// nonblocking collective's schedule) is an external Request
// (StartExternal), completed once with Complete by whoever runs the
// schedule. The coll engine does so from the progress hook
// (SetProgressHook: run by every Progress, it must not wait), starting
// the schedule's own point-to-point Requests with Isend/Irecv on the
// hidden context and polling them with Done. The user holds it through a
// Handle like any other: Wait, Test, WaitAll and WaitAny do not tell the
// difference.
//
// The user API adds one layer: gorun.Request (the user's to keep, never
// reused) is a Handle, taken from a slab by NewIsend/NewIrecv (handle.go:
// no allocation per call), which points to a pooled Request taken by
// StartIsend/StartIrecv. The Handle is what survives; the pooled Request
// goes back to the pool as soon as the operation has completed, its Status
// is copied into the Handle, and no goroutine holds it (handle.go has the
// protocol; a receive delivered while nobody holds its Handle is settled
// in it by the delivery, and its Request goes back at once); a failed
// operation's Request holds its error and stays with the Handle (32
// bytes: no room for an error, nor for the PML pointer, which is reached
// through the Request while it is pending). An operation
// that completes inside its start (an eager send the BTL copied, a receive
// that found its message) never hands its Request out: it goes back at
// once; an eager send to a btl.TrySender that takes it at once never takes
// one (its header goes to the BTL by value), nor does a blocking Send of
// it. The blocking calls take a zero Request from PML.spare (or the pool)
// and put it back after their wait.
//
// Waiting (wait.go): a blocking call polls Progress for SpinCount idle
// polls, and SpinUsec more microseconds (a Barrier at least 20 ms) when
// the rank has a core of its own (oversubscribed, each idle poll yields
// the core, and the rank moves itself to a CPU chosen by its rank now and
// then, without binding), then one waiting
// goroutine (the sleeper) sleeps in the transport
// chosen by capability (btl.Sleeper, btl.Watcher: sm's futex, a socket
// poller, or the PML's own channel when no BTL sleeps), while the others
// block on Go channels until their request completes or the sleeper role
// frees. Progress also runs without any call from the program when a BTL
// cannot wait for one (btl.Progressor: tcp, whose peers' connections end
// when this rank's receive windows stay shut past btl_tcp_timeout): one
// goroutine polls at the interval it asks for (background.go).
package pml
