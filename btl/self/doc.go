// Package self is the loopback BTL: it carries a rank's fragments to itself.
//
// Send copies hdr+payload into a buffer from the module's own free lists and
// appends it to an in-process queue; Progress delivers the queue in order.
// It never delivers inside Send (a RecvFunc may Send, and the PML may hold
// locks around Send). Buffers are reused: no allocation per message in
// steady state. Send always copies, so it always returns copied=true and no
// Completion is ever called. ReadFrom is a plain memory copy (same process),
// so Attributes().SingleCopy is true. It is not a btl.Sleeper: everything
// it delivers was sent by this rank, and the PML wakes its own sleeper
// after a send to self.
//
// Invariants: fragments are delivered in Send order; the queue only grows by
// Send and only shrinks by Progress, one Progress at a time.
package self
