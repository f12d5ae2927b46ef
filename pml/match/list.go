package match

// msgLinks are one set of intrusive list pointers inside a Msg.
type msgLinks struct{ prev, next *Msg }

// linkKind selects which of a Msg's link sets a msgList threads through.
type linkKind uint8

const (
	// srcLinks thread a per-source list: unexpected (Seq order) or parked
	// (sorted by Seq distance). A message is never in both at once.
	srcLinks linkKind = iota
	// arrivalLinks thread the per-context release-ordered unexpected list.
	arrivalLinks
	numLinkKinds
)

// msgList is an intrusive doubly linked list of messages.
type msgList struct {
	head, tail *Msg
	k          linkKind
}

func (l *msgList) pushBack(m *Msg) { l.insertAfter(l.tail, m) }

// insertAfter links m after at; at == nil inserts m at the front.
func (l *msgList) insertAfter(at, m *Msg) {
	ln := &m.links[l.k]
	ln.prev = at
	if at == nil {
		ln.next = l.head
		l.head = m
	} else {
		ln.next = at.links[l.k].next
		at.links[l.k].next = m
	}
	if ln.next == nil {
		l.tail = m
	} else {
		ln.next.links[l.k].prev = m
	}
}

func (l *msgList) remove(m *Msg) {
	ln := &m.links[l.k]
	if ln.prev == nil {
		l.head = ln.next
	} else {
		ln.prev.links[l.k].next = ln.next
	}
	if ln.next == nil {
		l.tail = ln.prev
	} else {
		ln.next.links[l.k].prev = ln.prev
	}
	ln.prev, ln.next = nil, nil
}

// recvList is an intrusive doubly linked list of posted receives, in posting
// order (so Recv.seq increases from head to tail).
type recvList struct{ head, tail *Recv }

func (l *recvList) pushBack(r *Recv) {
	r.prev, r.next = l.tail, nil
	if l.tail == nil {
		l.head = r
	} else {
		l.tail.next = r
	}
	l.tail = r
	r.list = l
}

// Posted reports whether r is in a queue of posted receives (it is
// linked only then: remove clears its links).
func (r *Recv) Posted() bool { return r.list != nil || r.prev != nil || r.next != nil }

func (l *recvList) remove(r *Recv) {
	if r.prev == nil {
		l.head = r.next
	} else {
		r.prev.next = r.next
	}
	if r.next == nil {
		l.tail = r.prev
	} else {
		r.next.prev = r.prev
	}
	r.prev, r.next, r.list = nil, nil, nil
}
