#include "textflag.h"

// Element-wise adds: AVX2, 128 bytes per step, where the CPU has it, then
// SSE2, 64 bytes per step, then one element at a time.
// Each function is the same loop (acc in DI, in in SI, bytes left in CX)
// around its own packed add (BIG) and scalar add (FTAIL, ITAIL).

#define ARGS \
	MOVQ	acc+0(FP), DI; \
	MOVQ	in+8(FP), SI; \
	MOVQ	n+16(FP), CX

// BIG adds 64 bytes with the packed add VOP, or jumps to tail when fewer
// are left.
#define BIG(VOP) \
	CMPQ	CX, $64; \
	JB	tail; \
	MOVOU	0(DI), X0; \
	MOVOU	16(DI), X1; \
	MOVOU	32(DI), X2; \
	MOVOU	48(DI), X3; \
	MOVOU	0(SI), X4; \
	MOVOU	16(SI), X5; \
	MOVOU	32(SI), X6; \
	MOVOU	48(SI), X7; \
	VOP	X4, X0; \
	VOP	X5, X1; \
	VOP	X6, X2; \
	VOP	X7, X3; \
	MOVOU	X0, 0(DI); \
	MOVOU	X1, 16(DI); \
	MOVOU	X2, 32(DI); \
	MOVOU	X3, 48(DI); \
	ADDQ	$64, DI; \
	ADDQ	$64, SI; \
	SUBQ	$64, CX

// WIDE adds 128 bytes at a time with the AVX2 add VOP while at least 128
// are left, when the CPU has AVX2 (·useAVX2), then clears the upper halves
// of the Y registers; the acc operand is the first source, as in the SSE2
// add, so a NaN's payload comes from the same operand.
#define WIDE(VOP) \
	CMPB	·useAVX2(SB), $1; \
	JNE	big; \
wide: \
	CMPQ	CX, $128; \
	JB	narrow; \
	VMOVUPS	0(DI), Y0; \
	VMOVUPS	32(DI), Y1; \
	VMOVUPS	64(DI), Y2; \
	VMOVUPS	96(DI), Y3; \
	VOP	0(SI), Y0, Y0; \
	VOP	32(SI), Y1, Y1; \
	VOP	64(SI), Y2, Y2; \
	VOP	96(SI), Y3, Y3; \
	VMOVUPS	Y0, 0(DI); \
	VMOVUPS	Y1, 32(DI); \
	VMOVUPS	Y2, 64(DI); \
	VMOVUPS	Y3, 96(DI); \
	ADDQ	$128, DI; \
	ADDQ	$128, SI; \
	SUBQ	$128, CX; \
	JMP	wide; \
narrow: \
	VZEROUPPER

// LEFT jumps to done when no element of SZ bytes is left; NEXT moves on by
// one.
#define LEFT(SZ) \
	CMPQ	CX, $SZ; \
	JB	done
#define NEXT(SZ) \
	ADDQ	$SZ, DI; \
	ADDQ	$SZ, SI; \
	SUBQ	$SZ, CX

// FTAIL adds one float through X0 and X1; ITAIL one integer through AX.
#define FTAIL(MOV, OP) \
	MOV	(DI), X0; \
	MOV	(SI), X1; \
	OP	X1, X0; \
	MOV	X0, (DI)
#define ITAIL(MOV, OP) \
	MOV	(SI), AX; \
	OP	AX, (DI)

// func f32(acc, in *byte, n int)
TEXT ·f32(SB), NOSPLIT, $0-24
	ARGS
	WIDE(VADDPS)
big:
	BIG(ADDPS)
	JMP	big
tail:
	LEFT(4)
	FTAIL(MOVSS, ADDSS)
	NEXT(4)
	JMP	tail
done:
	RET

// func f64(acc, in *byte, n int)
TEXT ·f64(SB), NOSPLIT, $0-24
	ARGS
	WIDE(VADDPD)
big:
	BIG(ADDPD)
	JMP	big
tail:
	LEFT(8)
	FTAIL(MOVSD, ADDSD)
	NEXT(8)
	JMP	tail
done:
	RET

// func i32(acc, in *byte, n int)
TEXT ·i32(SB), NOSPLIT, $0-24
	ARGS
	WIDE(VPADDD)
big:
	BIG(PADDL)
	JMP	big
tail:
	LEFT(4)
	ITAIL(MOVL, ADDL)
	NEXT(4)
	JMP	tail
done:
	RET

// func i64(acc, in *byte, n int)
TEXT ·i64(SB), NOSPLIT, $0-24
	ARGS
	WIDE(VPADDQ)
big:
	BIG(PADDQ)
	JMP	big
tail:
	LEFT(8)
	ITAIL(MOVQ, ADDQ)
	NEXT(8)
	JMP	tail
done:
	RET
