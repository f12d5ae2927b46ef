// Package pml is gorun's point-to-point messaging layer (Open MPI's pml/ob1
// is the model): it matches messages to receives by (communicator, source,
// tag) in order, sends small messages eagerly and large ones by rendezvous
// (copy pipeline, or a single-copy read when the transport allows it), and
// drives the progress of every BTL.
//
// Protocols, chosen per message by its size against the BTL's limits:
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
//
// The decisions (which protocol, how big a first chunk, what a matched
// RNDV needs, whether a FRAG fits) are pure functions in proto.go, tested
// by tables without a transport; send.go and recv.go carry them out.
//
// Locks: PML.mu guards the matching engine, the request tables, the free
// lists and the unexpected-memory accounting; PML.progMu serializes
// Progress across all BTLs (BTL callbacks run under it). The whole lock
// order is written at the PML type. Nothing that holds mu calls Progress,
// waits, or copies a payload.
//
// Waiting (wait.go): a blocking call polls Progress for SpinCount idle
// polls, then one waiting goroutine (the sleeper) sleeps in the transport
// chosen by capability (btl.Sleeper, btl.Watcher: sm's futex, a socket
// poller, or the PML's own channel when no BTL sleeps), while the others
// block on Go channels until their request completes or the sleeper role
// frees.
package pml
