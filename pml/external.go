package pml

// External requests: an operation made of many point-to-point ones (a
// collective's whole schedule) is completed by its owner, not by a BTL
// event; the user holds it through an ordinary Handle, so Wait, Test,
// WaitAll and WaitAny treat it like any other request, and their progress
// (through the PML's progress hook) is what advances it.

// StartExternal makes h, a zero Handle, refer to a new request that the
// caller completes once with Complete. Cancel on h returns an error.
func (p *PML) StartExternal(h *Handle) *Request {
	r := reqPool.Get().(*Request)
	r.p, r.kind = p, kindExternal
	h.send = true
	h.r = r
	return r
}

// Complete completes an external request with err (once; later calls do
// nothing) and wakes whoever waits for it. The caller must not touch r
// afterwards: its holder may recycle it at once.
func (r *Request) Complete(err error) {
	p := r.p
	if r.finish(Status{}, err) {
		p.kick()
	}
}
