#include "textflag.h"

// func repMovsb(dst, src *byte, n uintptr)
TEXT ·repMovsb(SB), NOSPLIT, $0-24
	MOVQ	dst+0(FP), DI
	MOVQ	src+8(FP), SI
	MOVQ	n+16(FP), CX
	CLD
	REP; MOVSB
	RET

// func prefetchW(p *byte)
TEXT ·prefetchW(SB), NOSPLIT, $0-8
	MOVQ	p+0(FP), AX
	BYTE	$0x0F; BYTE $0x0D; BYTE $0x08 // PREFETCHW (AX)
	RET
