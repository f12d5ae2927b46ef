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

// func store16(p *byte, a, b uint64)
TEXT ·store16(SB), NOSPLIT, $0-24
	MOVQ	p+0(FP), DI
	MOVQ	a+8(FP), X0
	MOVQ	b+16(FP), X1
	PUNPCKLQDQ	X1, X0
	MOVUPS	X0, (DI)
	RET

// func store32(p *byte, a, b, c, d uint64)
TEXT ·store32(SB), NOSPLIT, $0-40
	MOVQ	p+0(FP), DI
	MOVQ	a+8(FP), X0
	MOVQ	b+16(FP), X1
	PUNPCKLQDQ	X1, X0
	MOVQ	c+24(FP), X2
	MOVQ	d+32(FP), X3
	PUNPCKLQDQ	X3, X2
	MOVUPS	X0, (DI)
	MOVUPS	X2, 16(DI)
	RET
