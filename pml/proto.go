package pml

// Protocol decisions, as pure functions of the message, the peer's limits
// and the event at hand. They do no I/O, take no locks and keep no state:
// send.go and recv.go carry out what they decide. proto_test.go checks them
// against the rules in tables, without a transport.

// limits are what the PML knows of one peer's BTL and of its own settings.
type limits struct {
	eager       int  // largest payload sent eagerly (headers do not count)
	firstChunk  int  // payload sent with a RNDV header
	maxSend     int  // largest payload of one fragment
	rget        bool // the BTL can read the sender's memory (single copy)
	rgetMin     int  // messages of at least this size use it (0: never)
	rgetMax     int  // ... and of at most this size (0: no upper bound)
	adaptive    bool // offer the buffer of every larger message; the receiver picks read or pipeline (rgetChoice)
	splitMin    int  // a read of at least this many bytes is shared with the sender (splitRead; 0: never)
	splitStream int  // the same for a message of a one-way stream (flagStream; at most splitMin, 0 with it)
	stream      int  // largest rendezvous that carries its whole payload in a one-way stream (Config.StreamLimit, at most maxSend)
	pipeMax     int  // largest message of the pipeline band (pipeable; Config.StreamPipeMax, 0 without Config.StreamAdaptive)
	carry       int  // largest serial send that may carry its payload (carriable; Config.SerialCarryMax)
	serialSplit bool // a serial send in the splitsInStream band may ask for its read to be split (splittable; Config.SerialSplit)
}

// carriable says whether an n-byte message that is not part of a one-way
// stream may carry its whole payload in its first fragment instead of
// being read, when that was faster lately (Config.SerialCarryMax,
// serialChoice.way): a rendezvous up to limits.carry that the rget band
// would have read.
func (l *limits) carriable(n int) bool { return n > l.eager && n <= l.carry && l.inBand(n) }

// streamable says whether an n-byte message is a rendezvous that may carry
// its whole payload in its first fragment when it is part of a one-way
// stream (Comm.streamingTo; planSend's stream).
func (l *limits) streamable(n int) bool { return n > l.eager && n <= l.stream }

// pipeable says whether an n-byte message of a one-way stream may go by
// the two-copy pipeline instead of the single-copy read it would take
// (Config.StreamPipeMax): above the stream band, up to pipeMax, in the
// rget band. Which of the two it takes is timeStream's choice.
func (l *limits) pipeable(n int) bool {
	return l.pipeMax > 0 && n > max(l.stream, l.eager) && n <= l.pipeMax && l.inBand(n)
}

// splittable says whether an n-byte message that is not part of a one-way
// stream may ask its receiver to share its read with the sender as a
// stream's message does (flagStream), when that was faster lately
// (Config.SerialSplit, serialChoice.way): one the splitsInStream band holds,
// above the stream band (whose messages a stream carries).
func (l *limits) splittable(n int) bool { return l.serialSplit && n > l.stream && l.splitsInStream(n) }

// splitsRead says whether a read of rest bytes may be shared with the
// sender (splitRead's size rule): from splitMin, or from splitStream for
// a message of a one-way stream (flagStream).
func (l *limits) splitsRead(rest int, stream bool) bool {
	least := l.splitMin
	if stream {
		least = l.splitStream
	}
	return least > 0 && rest >= least
}

// splitsInStream says whether an n-byte message read by its receiver
// would have its read shared with the sender only as part of a one-way
// stream (flagStream): from splitStream, below splitMin.
func (l *limits) splitsInStream(n int) bool {
	return l.splitStream > 0 && n >= l.splitStream && n < l.splitMin && l.inBand(n)
}

// inBand says whether an n-byte message must use the single-copy read:
// the pml_ob1_rget_limit..pml_ob1_rget_max band, when the BTL can.
func (l *limits) inBand(n int) bool {
	return l.rget && l.rgetMin > 0 && n >= l.rgetMin && (l.rgetMax == 0 || n <= l.rgetMax)
}

// sendProto is how a message travels.
type sendProto uint8

const (
	protoEager sendProto = iota // MATCH + the whole payload
	protoRndv                   // RNDV + first chunk, then FRAGs after the ACK
	protoRget                   // RNDV with the buffer's address; the receiver reads it
)

// sendPlan is the decision for one message.
type sendPlan struct {
	proto  sendProto
	chunk  int  // payload bytes in the first fragment
	credit int  // eager credit the first fragment needs (see PML.takeCredit)
	offer  bool // protoRndv: the header also carries the buffer's address, so the receiver may read the rest itself
	stream bool // protoRget: part of a one-way stream (flagStream), so that its read may be split from limits.splitStream
	// carried and t0: a serial send in the stream band (serialChoice.way)
	// that carries its payload (protoRndv) rather than being read, and
	// when a timed one started (PML.serial's clock; 0: not timed).
	carried bool
	t0      int64
	// split: a serial send in the splittable band that asks for its read
	// to be split (flagged as a stream's; serialChoice.way).
	split bool
}

// planSend chooses the protocol of an n-byte message. credit says whether
// the peer may be sent more eager bytes: the caller plans with true, takes
// plan.credit, and plans again with false when that fails. stream says the
// message continues a one-way stream (Comm.streamingTo): it skips the rget
// band, so that its rendezvous carries the payload in its first fragment
// (all of it up to firstChunk, as Open MPI's vader does up to
// btl_vader_rndv_eager_limit) and the sender copies the next message while
// the receiver copies this one out; it still completes on the receiver's
// ACK. A larger message of a stream keeps the read and says it is part of
// a stream (sendPlan.stream), so that its receiver may share the read from
// a lower size (limits.splitStream), unless pipe says the stream goes by
// the pipeline (limits.pipeable, timeStream): then it carries its first
// chunk and sends the rest as FRAGs after the receiver's ACK. A
// synchronous send uses the same protocols; its header asks for the match
// ACK.
func planSend(n int, l *limits, credit, stream, pipe bool) sendPlan {
	switch {
	case n <= l.eager && (credit || n == 0):
		return sendPlan{proto: protoEager, chunk: n, credit: n}
	case l.inBand(n) && !(stream && (n <= l.stream || pipe && l.pipeable(n))):
		return sendPlan{proto: protoRget, stream: stream}
	case !credit:
		// The receiver may already hold all it should of ours: send no
		// payload until it has matched.
		return sendPlan{proto: protoRndv, offer: l.offers(n, 0)}
	default:
		c := min(n, l.firstChunk)
		return sendPlan{proto: protoRndv, chunk: c, credit: c, offer: l.offers(n, c)}
	}
}

// offers says whether an n-byte rendezvous whose first fragment carries
// chunk bytes offers its buffer for a single-copy read: adaptive mode, a
// BTL that can, and something left after the chunk.
func (l *limits) offers(n, chunk int) bool { return l.adaptive && l.rget && n > chunk }

// planRead decides whether the receive of a matched RNDV of size bytes
// reads the rest of it from the sender's memory (single copy) or asks for
// FRAGs (the two-copy pipeline). offered: the sender sent its address.
// A message in the rget band is read; another one is read when the
// receiver's measurements say reading is faster now (readFaster, from
// rgetChoice.choose).
func planRead(size int, l *limits, offered, readFaster bool) bool {
	switch {
	case !offered || !l.rget:
		return false
	case l.inBand(size):
		return true
	default:
		return l.adaptive && readFaster
	}
}

// rndvPlan is what a receive does when a RNDV matches it.
type rndvPlan struct {
	want  int  // bytes the receive takes: the message or the buffer, whichever is shorter
	copy  int  // bytes of the first chunk to copy now
	read  int  // bytes to read from the sender's memory after the chunk (single copy)
	frags bool // the rest comes as FRAGs: register the receive, ACK with its id
}

// planRndv decides for a message of size bytes whose first fragment carried
// chunk bytes, matched by a receive of bufLen bytes; rget says the sender
// offered its buffer for a single-copy read. After the plan: read → FIN;
// frags → ACK(rreq, want); neither → ACK(0, want) (everything is in).
func planRndv(size, chunk, bufLen int, rget bool) rndvPlan {
	want := min(size, bufLen)
	p := rndvPlan{want: want, copy: min(chunk, want)}
	switch rest := want - p.copy; {
	case rest == 0:
	case rget:
		p.read = rest
	default:
		p.frags = true
	}
	return p
}

// fragFits checks a FRAG of n bytes at off against a receive that takes
// want bytes: a peer's fragment is never followed out of bounds.
func fragFits(off uint64, n int, want int) bool {
	return off <= uint64(want) && uint64(n) <= uint64(want)-off
}
