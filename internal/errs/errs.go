// Package errs holds the sentinel errors of gorun's public contract, so that
// every layer (pml, btl, root package) can wrap and return them without import
// cycles. The root package re-exports them; users match them with errors.Is.
package errs

import "errors"

var (
	// ErrTruncate: the message is longer than the receive buffer.
	ErrTruncate = errors.New("gorun: message truncated")
	// ErrInvalidRank: a rank outside 0..Size()-1 (AnySource only for receives).
	ErrInvalidRank = errors.New("gorun: invalid rank")
	// ErrInvalidTag: a send tag outside 0..MaxTag, or a receive tag < AnyTag or > MaxTag.
	ErrInvalidTag = errors.New("gorun: invalid tag")
	// ErrFinalized: the call came after Finalize.
	ErrFinalized = errors.New("gorun: finalized")
	// ErrCanceled: the receive was cancelled.
	ErrCanceled = errors.New("gorun: request canceled")
	// ErrPeerLost: the peer process is gone.
	ErrPeerLost = errors.New("gorun: peer lost")
	// ErrInvalidArg: an argument that does not fit the call's rules (lengths,
	// counts, a Message already received).
	ErrInvalidArg = errors.New("gorun: invalid argument")
	// ErrInvalidComm: a nil or freed communicator (and Free of the world).
	ErrInvalidComm = errors.New("gorun: invalid communicator")
)
