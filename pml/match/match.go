package match

import "fmt"

// AnySource and AnyTag are the receive wildcards (the same values as
// gorun.AnySource and gorun.AnyTag).
const (
	AnySource = -1
	AnyTag    = -1
)

// Envelope is what a sender puts in every match header.
type Envelope struct {
	Ctx uint32 // communicator context id
	Src int    // sender's rank in the communicator, 0..size-1
	Tag int    // >= 0
	Seq uint32 // per (Ctx, Src→this receiver) sequence number, from 0, wrapping at 2^32
}

// msgState says where a Msg is. The zero value is msgFree.
type msgState uint8

const (
	msgFree       msgState = iota // not held by the engine
	msgParked                     // ahead of its Seq turn, in peer.parked
	msgUnexpected                 // matchable, in peer.unexp and ctxState.unexp
)

// Msg is an arrived message. Data belongs to the PML (payload or rendezvous
// state); the engine never looks at it. From Arrive until the engine hands
// it back (in a Pair, from Post, or after Remove) the caller must not modify
// the Envelope.
type Msg struct {
	Envelope
	Data any

	state msgState
	links [numLinkKinds]msgLinks
}

// Recv is a posted receive. Src may be AnySource and Tag may be AnyTag.
// Data belongs to the PML. While posted the caller must not modify Ctx, Src
// or Tag.
type Recv struct {
	Ctx      uint32
	Src, Tag int
	Data     any

	seq        uint64    // post order within the context
	list       *recvList // the queue holding r; nil when r is not posted
	prev, next *Recv
}

// Pair is a receive matched with a message. Both are free again.
type Pair struct {
	Recv *Recv
	Msg  *Msg
}

// peer is the matching state for one source rank within one context.
type peer struct {
	expect uint32   // Seq of the next message to release
	posted recvList // receives with this exact Src, posting order
	unexp  msgList  // released, unmatched messages, Seq order (srcLinks)
	parked msgList  // ahead-of-turn messages, by Seq-expect ascending (srcLinks)
}

// ctxState is the matching state of one context.
type ctxState struct {
	peers   []peer
	wild    recvList // AnySource receives, posting order
	unexp   msgList  // every unexpected message, release order (arrivalLinks)
	postSeq uint64   // next Recv.seq; 2^64 posts never wrap in practice
}

// Engine is the matching engine of one process. It is not safe for
// concurrent use: the caller serializes every call.
type Engine struct {
	size  int
	ctxs  map[uint32]*ctxState
	order []*ctxState // creation order, so DropPostedFrom is deterministic
	last  *ctxState   // one-entry lookup cache
	lastC uint32

	nPosted, nUnexp, nParked int
}

// New returns an engine for communicators of size ranks. It panics if
// size < 1.
func New(size int) *Engine {
	if size < 1 {
		panic(fmt.Sprintf("match: New: size %d; want >= 1", size))
	}
	return &Engine{size: size, ctxs: make(map[uint32]*ctxState)}
}

// lookup returns the state of ctx, or nil if ctx was never used.
func (e *Engine) lookup(ctx uint32) *ctxState {
	if e.last != nil && e.lastC == ctx {
		return e.last
	}
	c := e.ctxs[ctx]
	if c != nil {
		e.last, e.lastC = c, ctx
	}
	return c
}

// context returns the state of ctx, creating it on first use.
func (e *Engine) context(ctx uint32) *ctxState {
	if e.last != nil && e.lastC == ctx {
		return e.last // inlines: the common case, the context used last
	}
	return e.newContext(ctx)
}

// newContext is context's rare part: the state of ctx from the map, or
// created.
func (e *Engine) newContext(ctx uint32) *ctxState {
	if c := e.lookup(ctx); c != nil {
		return c
	}
	c := &ctxState{peers: make([]peer, e.size)}
	for i := range c.peers {
		c.peers[i].unexp.k = srcLinks
		c.peers[i].parked.k = srcLinks
	}
	c.unexp.k = arrivalLinks
	e.ctxs[ctx] = c
	e.order = append(e.order, c)
	e.last, e.lastC = c, ctx
	return c
}

func tagMatches(recvTag, msgTag int) bool { return recvTag == msgTag || recvTag == AnyTag }

// Arrive takes an arrived message. A message whose Seq is its source's turn
// is matched against the posted receives (appended to out as a Pair) or
// queued as unexpected; then any parked messages whose turn has come are
// released the same way. A message ahead of its turn is parked. Pairs are
// appended in the order they must be processed (Seq order).
//
// Arrive panics if m is already held by the engine, if m.Src is outside
// 0..size-1, if m.Tag < 0, or if m.Seq was already released or is already
// parked for (m.Ctx, m.Src). Seqs compare modulo 2^32: a Seq 1..2^31-1 ahead
// of the expected one is parked; one 2^31 or more ahead counts as stale.
func (e *Engine) Arrive(m *Msg, out []Pair) []Pair {
	if m.state != msgFree {
		panic(fmt.Sprintf("match: Arrive: message ctx=%d src=%d seq=%d is already held by the engine", m.Ctx, m.Src, m.Seq))
	}
	if m.Src < 0 || m.Src >= e.size {
		panic(fmt.Sprintf("match: Arrive: message src %d out of range; want 0..%d", m.Src, e.size-1))
	}
	if m.Tag < 0 {
		panic(fmt.Sprintf("match: Arrive: message tag %d from src %d; want >= 0", m.Tag, m.Src))
	}
	c := e.context(m.Ctx)
	p := &c.peers[m.Src]
	if m.Seq != p.expect {
		e.park(p, m)
		return out
	}
	for {
		out = e.release(c, p, m, out)
		p.expect++
		m = p.parked.head
		if m == nil || m.Seq != p.expect {
			return out
		}
		p.parked.remove(m)
		m.state = msgFree
		e.nParked--
	}
}

// park inserts m, which is ahead of p.expect, into p.parked sorted by
// distance from p.expect. Arrivals are usually nearly in order, so the
// scan starts at the tail.
func (e *Engine) park(p *peer, m *Msg) {
	d := m.Seq - p.expect
	if d >= 1<<31 {
		panic(fmt.Sprintf("match: Arrive: message ctx=%d src=%d seq=%d is behind the expected seq %d (duplicate or stale; each seq must arrive once)",
			m.Ctx, m.Src, m.Seq, p.expect))
	}
	at := p.parked.tail
	for at != nil && at.Seq-p.expect > d {
		at = at.links[srcLinks].prev
	}
	if at != nil && at.Seq == m.Seq {
		panic(fmt.Sprintf("match: Arrive: message ctx=%d src=%d seq=%d is already parked (duplicate; each seq must arrive once)",
			m.Ctx, m.Src, m.Seq))
	}
	p.parked.insertAfter(at, m)
	m.state = msgParked
	e.nParked++
}

// pick returns the earliest-posted receive of c that accepts a message of
// tag from p, or nil.
func pick(c *ctxState, p *peer, tag int) *Recv {
	var spec *Recv
	for r := p.posted.head; r != nil; r = r.next {
		if tagMatches(r.Tag, tag) {
			spec = r
			break
		}
	}
	// A wildcard receive wins only if it was posted before spec.
	var wild *Recv
	for r := c.wild.head; r != nil && (spec == nil || r.seq < spec.seq); r = r.next {
		if tagMatches(r.Tag, tag) {
			wild = r
			break
		}
	}
	if wild != nil {
		return wild
	}
	return spec
}

// release makes the in-turn message m matchable: it pairs m with the
// earliest-posted receive that accepts it, or queues it as unexpected.
func (e *Engine) release(c *ctxState, p *peer, m *Msg, out []Pair) []Pair {
	r := pick(c, p, m.Tag)
	if r == nil {
		p.unexp.pushBack(m)
		c.unexp.pushBack(m)
		m.state = msgUnexpected
		e.nUnexp++
		return out
	}
	r.list.remove(r)
	e.nPosted--
	return append(out, Pair{Recv: r, Msg: m})
}

// Inbound describes the traffic from src on ctx: released is the number
// of its messages released to matching so far (matched or queued as
// unexpected; parked ones not yet), mod 2^32, the Seq of the next one;
// expecting says whether a posted receive could take its next message (one
// for src or for AnySource). Zero values for a context or source the
// engine has seen nothing of.
func (e *Engine) Inbound(ctx uint32, src int) (released uint32, expecting bool) {
	c := e.lookup(ctx)
	if c == nil || src < 0 || src >= len(c.peers) {
		return 0, false
	}
	p := &c.peers[src]
	return p.expect, p.posted.head != nil || c.wild.head != nil
}

// MatchPosted matches the message env describes, whose bytes have not all
// arrived yet, at once if it can: when it is its source's turn, no later
// message of that source is parked, and the receive Arrive would pair it
// with is posted and passes ok. It then removes that receive, counts env's
// Seq as arrived (the engine holds no Msg for it) and returns the receive.
// Otherwise it changes nothing and returns nil: the message arrives later
// through Arrive as usual. env's Src must be in 0..size-1 and its Tag at
// least 0; a message in its turn passes Check, so the caller may check
// only the ones MatchPosted leaves.
func (e *Engine) MatchPosted(env *Envelope, ok func(*Recv) bool) *Recv {
	c := e.lookup(env.Ctx)
	if c == nil {
		return nil
	}
	p := &c.peers[env.Src]
	if env.Seq != p.expect || p.parked.head != nil {
		return nil
	}
	r := pick(c, p, env.Tag)
	if r == nil || !ok(r) {
		return nil
	}
	r.list.remove(r)
	e.nPosted--
	p.expect++
	return r
}

// TakeInTurn is MatchPosted for a message that every receive accepts (an
// eager one: its bytes are all here), without the test's call: a window
// of small messages makes one per message. src must be in 0..size-1 and
// tag at least 0.
func (e *Engine) TakeInTurn(ctx uint32, src, tag int, seq uint32) *Recv {
	c := e.last
	if c == nil || e.lastC != ctx {
		if c = e.lookup(ctx); c == nil {
			return nil
		}
	}
	p := &c.peers[src]
	if seq != p.expect || p.parked.head != nil {
		return nil
	}
	var r *Recv
	if c.wild.head == nil {
		// pick without a wildcard receive to weigh: the first of src's
		// posted receives that takes tag.
		for r = p.posted.head; r != nil && !tagMatches(r.Tag, tag); r = r.next {
		}
	} else {
		r = pick(c, p, tag)
	}
	if r == nil {
		return nil
	}
	r.list.remove(r)
	e.nPosted--
	p.expect++
	return r
}

// Post matches r against the unexpected messages: the earliest-released one
// it accepts is removed and returned with true. Otherwise r is queued and
// Post returns nil, false.
//
// Post panics if r is already posted, if r.Src is outside AnySource..size-1,
// or if r.Tag < AnyTag.
func (e *Engine) Post(r *Recv) (*Msg, bool) {
	if r.list != nil {
		panic(fmt.Sprintf("match: Post: receive ctx=%d src=%d tag=%d is already posted", r.Ctx, r.Src, r.Tag))
	}
	if r.Src < AnySource || r.Src >= e.size {
		panic(fmt.Sprintf("match: Post: receive src %d out of range; want AnySource (-1) or 0..%d", r.Src, e.size-1))
	}
	if r.Tag < AnyTag {
		panic(fmt.Sprintf("match: Post: receive tag %d; want AnyTag (-1) or >= 0", r.Tag))
	}
	c := e.context(r.Ctx)
	if e.nUnexp != 0 { // else nothing to look through (a window posted ahead of its messages)
		if m := e.find(c, r.Src, r.Tag); m != nil {
			e.unqueue(c, m)
			return m, true
		}
	}
	r.seq = c.postSeq
	c.postSeq++
	if r.Src == AnySource {
		c.wild.pushBack(r)
	} else {
		c.peers[r.Src].posted.pushBack(r)
	}
	e.nPosted++
	return nil, false
}

// find returns the earliest-released unexpected message of c that a receive
// (src, tag) accepts, or nil.
func (e *Engine) find(c *ctxState, src, tag int) *Msg {
	if src == AnySource {
		for m := c.unexp.head; m != nil; m = m.links[arrivalLinks].next {
			if tagMatches(tag, m.Tag) {
				return m
			}
		}
		return nil
	}
	for m := c.peers[src].unexp.head; m != nil; m = m.links[srcLinks].next {
		if tagMatches(tag, m.Tag) {
			return m
		}
	}
	return nil
}

// unqueue takes the unexpected message m out of both its queues.
func (e *Engine) unqueue(c *ctxState, m *Msg) {
	c.peers[m.Src].unexp.remove(m)
	c.unexp.remove(m)
	m.state = msgFree
	e.nUnexp--
}

// Cancel removes r if it is still posted and reports whether it did. It
// returns false if r already matched, was already cancelled or dropped, or
// was never posted.
func (e *Engine) Cancel(r *Recv) bool {
	if r.list == nil {
		return false
	}
	r.list.remove(r)
	e.nPosted--
	return true
}

// Probe returns the unexpected message that Post of a receive (ctx, src,
// tag) would match now, without removing it. It never creates context
// state and panics on the same bad src and tag values as Post.
func (e *Engine) Probe(ctx uint32, src, tag int) (*Msg, bool) {
	m, _ := e.probe("Probe", ctx, src, tag)
	return m, m != nil
}

// probe is Probe for call (named in panics); it also returns m's context.
func (e *Engine) probe(call string, ctx uint32, src, tag int) (*Msg, *ctxState) {
	if src < AnySource || src >= e.size {
		panic(fmt.Sprintf("match: %s: src %d out of range; want AnySource (-1) or 0..%d", call, src, e.size-1))
	}
	if tag < AnyTag {
		panic(fmt.Sprintf("match: %s: tag %d; want AnyTag (-1) or >= 0", call, tag))
	}
	c := e.lookup(ctx)
	if c == nil {
		return nil, nil
	}
	return e.find(c, src, tag), c
}

// Remove takes the unexpected message m (as returned by Probe) out of the
// engine; no later Post or Probe sees it. It panics if m is not an
// unexpected message of this engine.
func (e *Engine) Remove(m *Msg) {
	if m.state != msgUnexpected {
		panic(fmt.Sprintf("match: Remove: message ctx=%d src=%d seq=%d is not in the unexpected queue", m.Ctx, m.Src, m.Seq))
	}
	e.unqueue(e.lookup(m.Ctx), m)
}

// Mprobe is a matched probe (MPI_Mprobe): it takes the unexpected message
// that Post of a receive (ctx, src, tag) would match now out of the engine,
// as Probe then Remove would, and reports whether there was one. The
// message's turn in its source's order is used up: later receives and
// probes match the messages after it, and the caller alone delivers it.
// It never creates context state and panics on the same bad src and tag
// values as Post.
func (e *Engine) Mprobe(ctx uint32, src, tag int) (*Msg, bool) {
	m, c := e.probe("Mprobe", ctx, src, tag)
	if m == nil {
		return nil, false
	}
	e.unqueue(c, m)
	return m, true
}

// DropPostedFrom removes every posted receive, in any context, whose Src is
// exactly src, and appends them to out (contexts in creation order, each in
// posting order), so the PML can fail them with ErrPeerLost. AnySource
// receives stay posted. It panics if src is outside 0..size-1.
func (e *Engine) DropPostedFrom(src int, out []*Recv) []*Recv {
	if src < 0 || src >= e.size {
		panic(fmt.Sprintf("match: DropPostedFrom: src %d out of range; want 0..%d", src, e.size-1))
	}
	for _, c := range e.order {
		q := &c.peers[src].posted
		for r := q.head; r != nil; r = q.head {
			q.remove(r)
			e.nPosted--
			out = append(out, r)
		}
	}
	return out
}

// Len returns the number of posted receives, unexpected messages and parked
// (ahead-of-turn) messages held by the engine.
func (e *Engine) Len() (posted, unexpected, parked int) {
	return e.nPosted, e.nUnexp, e.nParked
}

// DropAllPosted removes every posted receive, specific and AnySource, in
// every context, and appends them to out: first the specific ones, by
// source (for one source, contexts in creation order, each in posting
// order, as DropPostedFrom), then the AnySource ones, contexts in creation
// order, each in posting order. Finalize uses it to cancel what is still
// posted.
func (e *Engine) DropAllPosted(out []*Recv) []*Recv {
	for src := 0; src < e.size; src++ {
		out = e.DropPostedFrom(src, out)
	}
	return e.DropPostedAnySource(out)
}

// DropPostedAnySource removes every posted AnySource receive, in any
// context, and appends them to out (contexts in creation order, each in
// posting order), so the PML can fail them when no rank that could send
// is left.
func (e *Engine) DropPostedAnySource(out []*Recv) []*Recv {
	for _, c := range e.order {
		for r := c.wild.head; r != nil; r = c.wild.head {
			c.wild.remove(r)
			e.nPosted--
			out = append(out, r)
		}
	}
	return out
}

// Check reports why Arrive would refuse env (and panic): a Src outside
// 0..size-1, a negative Tag, or a Seq already released or already parked
// for (Ctx, Src). It returns nil for an envelope Arrive accepts. The PML
// calls it on every envelope from the wire, which it must not trust.
func (e *Engine) Check(env *Envelope) error {
	if env.Src < 0 || env.Src >= e.size {
		return fmt.Errorf("match: message src %d out of range; want 0..%d", env.Src, e.size-1)
	}
	if env.Tag < 0 {
		return fmt.Errorf("match: message tag %d from src %d; want >= 0", env.Tag, env.Src)
	}
	c := e.lookup(env.Ctx)
	var expect uint32
	var p *peer
	if c != nil {
		p = &c.peers[env.Src]
		expect = p.expect
	}
	if env.Seq == expect {
		return nil
	}
	if env.Seq-expect >= 1<<31 {
		return fmt.Errorf("match: message ctx=%d src=%d seq=%d is behind the expected seq %d (duplicate or stale)", env.Ctx, env.Src, env.Seq, expect)
	}
	if p != nil {
		for m := p.parked.head; m != nil; m = m.links[srcLinks].next {
			if m.Seq == env.Seq {
				return fmt.Errorf("match: message ctx=%d src=%d seq=%d is already parked (duplicate)", env.Ctx, env.Src, env.Seq)
			}
		}
	}
	return nil
}

// DropContext forgets the state of ctx when it holds no posted receive,
// unexpected or parked message (a freed communicator's), and reports
// whether it did. A later message on ctx starts it afresh.
func (e *Engine) DropContext(ctx uint32) bool {
	c := e.lookup(ctx)
	if c == nil {
		return true
	}
	if c.wild.head != nil || c.unexp.head != nil {
		return false
	}
	for i := range c.peers {
		if c.peers[i].posted.head != nil || c.peers[i].parked.head != nil {
			return false
		}
	}
	delete(e.ctxs, ctx)
	for i, o := range e.order {
		if o == c {
			e.order = append(e.order[:i], e.order[i+1:]...)
			break
		}
	}
	e.last = nil
	return true
}

// TakeDirect releases the message (ctx, src, tag, seq) to a receive that
// is not posted, when no posted receive and no earlier message goes
// first: it is src's next in turn, no receive posted for src accepts
// tag, no AnySource receive is posted in ctx at all (whatever its tag:
// the cheap test), and no message from src waits unexpected or parked. It
// reports whether it did (the caller then has the message); otherwise it
// changes nothing.
func (e *Engine) TakeDirect(ctx uint32, src, tag int, seq uint32) bool {
	c := e.context(ctx)
	p := &c.peers[src]
	if seq != p.expect || p.parked.head != nil || p.unexp.head != nil || c.wild.head != nil {
		return false
	}
	for r := p.posted.head; r != nil; r = r.next {
		if tagMatches(r.Tag, tag) {
			return false
		}
	}
	p.expect++
	return true
}
