// Package tcp is the BTL for peers on other machines (and for peers on this
// machine when `--mca btl self,tcp` asks): one TCP connection per pair of
// ranks, set up at Init, authenticated, then driven by Progress with
// non-blocking system calls.
//
// Lifecycle: Listen opens the rank's listening socket on the interface the
// btl_tcp_if_include / btl_tcp_if_exclude parameters select and returns the
// module, whose Addr goes into the rank's business card; Connect then
// connects to every lower rank it must reach and accepts every higher one,
// until the mesh is complete or the connect timeout ends.
//
// Authentication: every connection proves knowledge of the job's secret
// before any byte of it is trusted. The acceptor sends a fresh nonce, the
// connector answers with its own nonce and an HMAC-SHA256 over both nonces
// and both ranks, the acceptor answers with its HMAC (another direction
// label): no secret crosses the wire and a recorded handshake cannot be
// replayed. A connection that fails is closed and logged at warn.
//
// Wire format after the handshake: frames of an 8-byte header (payload
// length incl. the BTL header, uint32 little endian; tag; header length;
// two zero bytes), then the PML header, then the payload.
//
// Invariants:
//   - Frames to one peer leave in Send order: a Send writes directly only
//     when the peer's pending queue is empty, else it joins the queue's
//     tail; Progress drains the queues in order.
//   - Send never blocks: what the socket does not take is queued, the
//     payload by reference (copied=false, SendDone once written) when it is
//     larger than the copy limit, else copied.
//   - A peer whose connection fails (EOF, reset, TCP_USER_TIMEOUT or
//     keepalive expiry after btl_tcp_timeout, a malformed frame) is lost:
//     Progress reports it once and fails its queued by-reference sends.
//   - A payload goes straight into its final place when the PML gives one
//     (btl.Placer): once a frame's PML header is in and at least placeMin
//     bytes of its payload are still coming, the PML is asked where they
//     go (a posted receive's buffer); the rest is read there, not into the
//     connection's buffer to be copied. The peer's next frames are read
//     after it, in order.
//   - Progress polls with epoll_wait(0) and non-blocking reads (with at
//     most directMax connections, a non-blocking read of each and no
//     epoll_wait: one system call per message fewer); only Sleep
//     blocks in the kernel (epoll_wait with an eventfd for Wake), and only
//     after spinning (epoll_wait(0) in a loop) until btl_tcp_spin_time has
//     passed since the module last moved a message: a rank in a message
//     exchange never pays a wake-up, an idle one sleeps at once.
//   - Goroutines: one accept loop per module (it also drops strangers
//     after setup); none per message. Close ends it and every socket.
package tcp
