package sm

// Slots abandoned by a rank that is gone.
//
// A sender claims slots of a receiver's FIFO with a CAS on its head, then
// fills and publishes them. A sender that dies between the two (killed, or
// exiting from another goroutine) leaves slots that are claimed but will
// never be published, and the receiver, which reads its FIFO in order,
// would wait at the first of them forever, so that the messages of live
// ranks behind it are never delivered.
//
// So every claim is announced first: before its CAS, the sender stores in
// its own control block (ctl.claim) a word naming the receiver, the first
// slot and the number of slots. A receiver stuck at an unpublished slot t,
// once a peer has been found lost, reads the peers' words:
//   - the rank whose CAS took slot t wrote (receiver, t) before that CAS and
//     changes it only after publishing t, so while t is unpublished its word
//     still names t (the receiver loaded head > t, which the CAS wrote, so it
//     sees that store too);
//   - if a live peer's word names (this receiver, t), that peer may be the
//     owner: wait, as before (it may just be preempted);
//   - if only lost peers' words name it, the owner is gone: skip its slots.
//
// A word names the slot modulo 2^28; a stale word of a lost peer matching a
// slot claimed by another lost peer 2^28 slots later can only mis-size the
// skip of a slot that is abandoned anyway.

const (
	claimDstBits = 16 // local ranks < mpool.MaxLocal = 1<<16
	claimLenBits = 20 // slots of one message ≤ FIFOSize/4 ≤ 1<<18
	claimSlotMod = 1 << (64 - claimDstBits - claimLenBits)
)

// claimWord packs (destination, first slot, slot count) for ctl.claim.
func claimWord(dst int, h, k uint64) uint64 {
	return uint64(dst) | k<<claimDstBits | (h%claimSlotMod)<<(claimDstBits+claimLenBits)
}

// claimOf unpacks a claim word.
func claimOf(w uint64) (dst int, h, k uint64) {
	return int(w & (1<<claimDstBits - 1)), w >> (claimDstBits + claimLenBits), w >> claimDstBits & (1<<claimLenBits - 1)
}

// abandoned returns the number of slots from t on that a lost peer claimed
// and will never publish, or 0 when none is known (or a live peer may own
// slot t). Called by poll at an unpublished slot; it costs one flag load
// until a peer is lost.
func (m *Module) abandoned(t uint64) uint64 {
	if !m.someLost.Load() || m.ctl.head.Load() <= t {
		return 0
	}
	var k uint64
	for i := range m.peers {
		p := &m.peers[i]
		if i == m.rank {
			continue
		}
		dst, h, n := claimOf(p.ctl.claim.Load())
		if dst != m.rank || h != t%claimSlotMod || n == 0 {
			continue
		}
		if !p.lost.Load() {
			return 0 // possibly the owner, alive: wait for it
		}
		k = n
	}
	if k == 0 || m.fifo[t&m.mask].seq.Load() == t+1 {
		return 0
	}
	m.log.Warn("skipping FIFO slots claimed by a rank that is gone", "slot", t, "slots", k)
	return k
}
