package pml

import "testing"

var testLimits = limits{eager: 4096, firstChunk: 32768, maxSend: 32768, rget: true, rgetMin: 1 << 20}

func TestPlanSend(t *testing.T) {
	noRget := testLimits
	noRget.rget = false
	band := testLimits // single copy for 256 KiB..512 KiB only
	band.rgetMin, band.rgetMax = 256<<10, 512<<10
	tests := []struct {
		name   string
		n      int
		l      limits
		credit bool
		want   sendPlan
	}{
		{"eager limits count payload, not headers: exactly the limit goes eagerly", 4096, testLimits, true, sendPlan{protoEager, 4096, 4096}},
		{"zero bytes go eagerly and need no credit", 0, testLimits, false, sendPlan{protoEager, 0, 0}},
		{"one byte over the eager limit goes by rendezvous with a max-size first chunk", 4097, testLimits, true, sendPlan{protoRndv, 4097, 4097}},
		{"the first chunk is at most firstChunk bytes", 100000, testLimits, true, sendPlan{protoRndv, 32768, 32768}},
		{"out of eager credit, a small message goes by rendezvous with no payload", 100, testLimits, false, sendPlan{protoRndv, 0, 0}},
		{"out of credit for the first chunk: an empty first fragment", 100000, testLimits, false, sendPlan{protoRndv, 0, 0}},
		{"single copy at and above pml_ob1_rget_limit", 1 << 20, testLimits, true, sendPlan{protoRget, 0, 0}},
		{"single copy needs no credit", 1 << 21, testLimits, false, sendPlan{protoRget, 0, 0}},
		{"below the rget limit: copy pipeline", 1<<20 - 1, testLimits, true, sendPlan{protoRndv, 32768, 32768}},
		{"no single copy when the BTL cannot", 1 << 21, noRget, true, sendPlan{protoRndv, 32768, 32768}},
		{"rget limit 0 means never", 1 << 21, limits{eager: 4096, firstChunk: 32768, maxSend: 32768, rget: true}, true, sendPlan{protoRndv, 32768, 32768}},
		{"rget band: below it, the pipeline", 256<<10 - 1, band, true, sendPlan{protoRndv, 32768, 32768}},
		{"rget band: its lower edge reads", 256 << 10, band, true, sendPlan{protoRget, 0, 0}},
		{"rget band: its upper edge (pml_ob1_rget_max) reads", 512 << 10, band, true, sendPlan{protoRget, 0, 0}},
		{"rget band: above it, the pipeline again", 512<<10 + 1, band, true, sendPlan{protoRndv, 32768, 32768}},
		{"rget max without a limit: never", 300 << 10, limits{eager: 4096, firstChunk: 32768, maxSend: 32768, rget: true, rgetMax: 512 << 10}, true, sendPlan{protoRndv, 32768, 32768}},
	}
	for _, tt := range tests {
		if got := planSend(tt.n, tt.l, tt.credit); got != tt.want {
			t.Errorf("%s: planSend(%d, credit=%v) = %+v, want %+v", tt.name, tt.n, tt.credit, got, tt.want)
		}
	}
}

func TestPlanRndv(t *testing.T) {
	tests := []struct {
		name                string
		size, chunk, bufLen int
		rget                bool
		want                rndvPlan
	}{
		{"everything in the first chunk: copy it and ACK", 20000, 20000, 20000, false, rndvPlan{want: 20000, copy: 20000}},
		{"copy pipeline: copy the chunk, expect FRAGs for the rest", 100000, 32768, 100000, false, rndvPlan{want: 100000, copy: 32768, frags: true}},
		{"single copy: read the rest from the sender", 1 << 20, 0, 1 << 20, true, rndvPlan{want: 1 << 20, read: 1 << 20}},
		{"truncation: take only the buffer's length, ask for nothing beyond it", 100000, 32768, 50000, false, rndvPlan{want: 50000, copy: 32768, frags: true}},
		{"truncation inside the first chunk: copy a prefix, want nothing more", 100000, 32768, 64, false, rndvPlan{want: 64, copy: 64}},
		{"zero-byte buffer for a large message: nothing to copy or read", 100000, 32768, 0, true, rndvPlan{}},
		{"empty first chunk (sender out of credit): everything by FRAGs", 5000, 0, 5000, false, rndvPlan{want: 5000, frags: true}},
	}
	for _, tt := range tests {
		if got := planRndv(tt.size, tt.chunk, tt.bufLen, tt.rget); got != tt.want {
			t.Errorf("%s: planRndv(%d, %d, %d, %v) = %+v, want %+v", tt.name, tt.size, tt.chunk, tt.bufLen, tt.rget, got, tt.want)
		}
	}
}

func TestFragFits(t *testing.T) {
	tests := []struct {
		name string
		off  uint64
		n    int
		want int
		ok   bool
	}{
		{"a fragment inside the receive", 32768, 32768, 100000, true},
		{"the last fragment ends exactly at want", 98304, 1696, 100000, true},
		{"one byte past want is refused", 98304, 1697, 100000, false},
		{"an offset past want is refused", 100001, 0, 100000, false},
		{"a huge offset does not wrap around", 1<<64 - 1, 2, 100000, false},
	}
	for _, tt := range tests {
		if got := fragFits(tt.off, tt.n, tt.want); got != tt.ok {
			t.Errorf("%s: fragFits(%d, %d, %d) = %v", tt.name, tt.off, tt.n, tt.want, got)
		}
	}
}
