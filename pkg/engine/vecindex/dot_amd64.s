#include "textflag.h"

// func dotFMA(a, b []float32) float32
TEXT ·dotFMA(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ b_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

// 32 floats per round, in four independent accumulators.
blocks32:
	CMPQ CX, $32
	JL   blocks8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  blocks32

blocks8:
	CMPQ CX, $8
	JL   reduce
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  blocks8

// Fold the four accumulators into one, then its eight lanes into lane 0.
reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VPSHUFD $0x55, X0, X1
	VADDSS X1, X0, X0

// The last len(a) mod 8 elements.
tail:
	TESTQ CX, CX
	JE    done
	VMOVSS (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  tail

done:
	VZEROUPPER
	MOVSS X0, ret+48(FP)
	RET

// The two bound kernels below share their register plan: R10 the query,
// R11 the stride (codes per row), R12 three strides, SI row 0 and DI row 4
// of the group of eight rows; Y8 (and, for VNNI, Y10) the query codes of
// a step; Y0-Y7 one int32 accumulator per row of the group; R8 the out
// pointer, R13, R14 and BX the scale, err and norm columns.

// ZERO_ROWS clears Y0-Y7, the accumulators of the eight rows.
#define ZERO_ROWS \
	VPXOR Y0, Y0, Y0; \
	VPXOR Y1, Y1, Y1; \
	VPXOR Y2, Y2, Y2; \
	VPXOR Y3, Y3, Y3; \
	VPXOR Y4, Y4, Y4; \
	VPXOR Y5, Y5, Y5; \
	VPXOR Y6, Y6, Y6; \
	VPXOR Y7, Y7, Y7

// WIDEN_DOT adds to the int32 lanes of acc the products of the sixteen
// codes at codes, widened to int16 in t, with the query's in Y8, summed
// pairwise (VPMADDWD).
#define WIDEN_DOT(codes, t, acc) \
	VPMOVSXBW codes, t; \
	VPMADDWD  Y8, t, t; \
	VPADDD    t, acc, acc

// DP_ROW loads the codes of a row at codes into c (Y9 or Y11, or their
// lower halves X9 or X11) and adds their products with the query's low
// bytes (Y8) to lo and with its high bytes (Y10) to hi (VPDPBUSD).
#define DP_ROW(codes, c, y, lo, hi) \
	VMOVDQU  codes, c; \
	VPDPBUSD y, Y8, lo; \
	VPDPBUSD y, Y10, hi

// VNNI_STEP adds the products of one step of codes of the eight rows with
// the query's low bytes to Y0-Y7 and with its high bytes to Y16-Y23.
// q8, q10, c9 and c11 are the registers the query bytes and the codes are
// loaded into: Y8, Y10, Y9, Y11 for 32 codes; X8, X10, X9, X11 for 16 (a
// 16-byte load clears the upper half of the register, which then adds
// nothing).
#define VNNI_STEP(q8, q10, c9, c11) \
	VMOVDQU (AX), q8; \
	VMOVDQU (AX)(R11*1), q10; \
	DP_ROW((SI), c9, Y9, Y0, Y16); \
	DP_ROW((SI)(R11*1), c11, Y11, Y1, Y17); \
	DP_ROW((SI)(R11*2), c9, Y9, Y2, Y18); \
	DP_ROW((SI)(R12*1), c11, Y11, Y3, Y19); \
	DP_ROW((DI), c9, Y9, Y4, Y20); \
	DP_ROW((DI)(R11*1), c11, Y11, Y5, Y21); \
	DP_ROW((DI)(R11*2), c9, Y9, Y6, Y22); \
	DP_ROW((DI)(R12*1), c11, Y11, Y7, Y23)

// ADD_HIGH adds 256 times the high sums in hi to the low sums in lo.
#define ADD_HIGH(hi, lo) \
	VPSLLD $8, hi, hi; \
	VPADDD hi, lo, lo

// FOLD8 leaves in Y0 the eight dot products of the group, in row order,
// from the accumulators Y0-Y7: pairwise sums within 128-bit lanes leave
// each lane holding the partial sums of rows 0-3 (Y0) and 4-7 (Y4);
// adding the lanes gives the eight. It overwrites Y1-Y7.
#define FOLD8 \
	VPHADDD    Y1, Y0, Y0; \
	VPHADDD    Y3, Y2, Y2; \
	VPHADDD    Y2, Y0, Y0; \
	VPHADDD    Y5, Y4, Y4; \
	VPHADDD    Y7, Y6, Y6; \
	VPHADDD    Y6, Y4, Y4; \
	VPERM2I128 $0x20, Y4, Y0, Y1; \
	VPERM2I128 $0x31, Y4, Y0, Y2; \
	VPADDD     Y2, Y1, Y0

// NEXT_GROUP moves the out and column pointers on by eight rows, and SI
// and DI to rows 0 and 4 of the next group (DI is at row 5 after the
// steps).
#define NEXT_GROUP \
	ADDQ $32, R8; \
	ADDQ $32, R13; \
	ADDQ $32, R14; \
	ADDQ $32, BX; \
	LEAQ (DI)(R12*1), SI; \
	LEAQ (SI)(R11*4), DI

// func boundsI8AVX2(q []int16, codes []int8, scale, err, norm []float32, p *boundParams, out []float32)
//
// For each group of eight rows of codes (len(q) codes each, len(q) a
// multiple of 16, len(out) a multiple of 8): the dot products of q with
// the eight rows, sixteen codes a step, each row widened to int16,
// multiplied pairwise with the query and summed to int32 lanes
// (VPMADDWD) in its own accumulator; the eight accumulators folded into
// one vector of eight sums; then the bounds, as boundOf computes them.
TEXT ·boundsI8AVX2(SB), NOSPLIT, $0-152
	MOVQ q_base+0(FP), R10
	MOVQ q_len+8(FP), R11
	MOVQ codes_base+24(FP), SI
	MOVQ scale_base+48(FP), R13
	MOVQ err_base+72(FP), R14
	MOVQ norm_base+96(FP), BX
	MOVQ p+120(FP), CX
	MOVQ out_base+128(FP), R8
	MOVQ out_len+136(FP), R9
	SHRQ $3, R9
	LEAQ (R11)(R11*2), R12 // three rows of codes
	LEAQ (R10)(R11*2), DX  // the end of the query codes
	LEAQ (SI)(R11*4), DI   // row 4 of the group

group:
	TESTQ R9, R9
	JE    done
	MOVQ  R10, AX
	ZERO_ROWS

step:
	VMOVDQU   (AX), Y8
	WIDEN_DOT((SI), Y9, Y0)
	WIDEN_DOT((SI)(R11*1), Y10, Y1)
	WIDEN_DOT((SI)(R11*2), Y9, Y2)
	WIDEN_DOT((SI)(R12*1), Y10, Y3)
	WIDEN_DOT((DI), Y9, Y4)
	WIDEN_DOT((DI)(R11*1), Y10, Y5)
	WIDEN_DOT((DI)(R11*2), Y9, Y6)
	WIDEN_DOT((DI)(R12*1), Y10, Y7)
	ADDQ      $16, SI
	ADDQ      $16, DI
	ADDQ      $32, AX
	CMPQ      AX, DX
	JB        step

	FOLD8

	// The bounds: a = d·scale·qScale, s = err·errWeight + norm·normWeight,
	// a + s + (|a| + s)·relSlack + absSlack.
	VCVTDQ2PS    Y0, Y0
	VMULPS       (R13), Y0, Y0
	VBROADCASTSS 0(CX), Y1
	VMULPS       Y1, Y0, Y0
	VBROADCASTSS 4(CX), Y1
	VMULPS       (R14), Y1, Y2
	VBROADCASTSS 8(CX), Y1
	VMULPS       (BX), Y1, Y3
	VADDPS       Y3, Y2, Y2
	VBROADCASTSS 12(CX), Y1
	VANDPS       Y1, Y0, Y3
	VADDPS       Y2, Y3, Y3
	VADDPS       Y2, Y0, Y0
	VBROADCASTSS 16(CX), Y1
	VMULPS       Y1, Y3, Y3
	VADDPS       Y3, Y0, Y0
	VBROADCASTSS 20(CX), Y1
	VADDPS       Y1, Y0, Y0
	VMOVUPS      Y0, (R8)

	NEXT_GROUP
	DECQ R9
	JMP  group

done:
	VZEROUPPER
	RET

// func boundsI8VNNI(q []uint8, codes []int8, scale, err, norm []float32, sum []int32, p *boundParams, out []float32)
//
// boundsI8AVX2 with AVX-512 VNNI on 256-bit vectors: VPDPBUSD multiplies
// 32 unsigned query bytes by 32 signed codes and adds the products, four
// by four, to eight int32 lanes, in one instruction. q holds the query's
// low bytes l, then its high bytes plus 128, h+128 (quantQuery.bytes); a
// row's low sums go to Y0-Y7, its high sums to Y16-Y23, and its dot
// product is 256·high + low − 32768·sum of the row's codes, exactly (the
// int32 arithmetic wraps, and the result is in range).
TEXT ·boundsI8VNNI(SB), NOSPLIT, $0-176
	MOVQ p+144(FP), CX
	VBROADCASTSS 0(CX), Y24
	VBROADCASTSS 4(CX), Y25
	VBROADCASTSS 8(CX), Y26
	VBROADCASTSS 12(CX), Y27
	VBROADCASTSS 16(CX), Y28
	VBROADCASTSS 20(CX), Y29
	MOVQ q_base+0(FP), R10
	MOVQ codes_base+24(FP), SI
	MOVQ scale_base+48(FP), R13
	MOVQ err_base+72(FP), R14
	MOVQ norm_base+96(FP), BX
	MOVQ sum_base+120(FP), CX
	MOVQ out_base+152(FP), R8
	MOVQ out_len+160(FP), R9
	MOVQ q_len+8(FP), R11
	SHRQ $1, R11           // the stride: half the query bytes
	SHRQ $3, R9
	LEAQ (R11)(R11*2), R12 // three rows of codes
	MOVQ R11, DX
	ANDQ $-32, DX
	ADDQ R10, DX           // the end of the 32-byte steps of the low bytes
	LEAQ (SI)(R11*4), DI   // row 4 of the group

vgroup:
	TESTQ R9, R9
	JE    vdone
	MOVQ  R10, AX
	ZERO_ROWS
	VPXORD Y16, Y16, Y16
	VPXORD Y17, Y17, Y17
	VPXORD Y18, Y18, Y18
	VPXORD Y19, Y19, Y19
	VPXORD Y20, Y20, Y20
	VPXORD Y21, Y21, Y21
	VPXORD Y22, Y22, Y22
	VPXORD Y23, Y23, Y23

vstep:
	CMPQ AX, DX
	JAE  vtail
	VNNI_STEP(Y8, Y10, Y9, Y11)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, AX
	JMP  vstep

// A last 16 codes, when the stride is an odd multiple of 16.
vtail:
	TESTQ $16, R11
	JE    vfold
	VNNI_STEP(X8, X10, X9, X11)
	ADDQ  $16, SI
	ADDQ  $16, DI

// Each row's lanes: 256·high + low; then fold as boundsI8AVX2 does, and
// take 32768 times the sum of each row's codes off.
vfold:
	ADD_HIGH(Y16, Y0)
	ADD_HIGH(Y17, Y1)
	ADD_HIGH(Y18, Y2)
	ADD_HIGH(Y19, Y3)
	ADD_HIGH(Y20, Y4)
	ADD_HIGH(Y21, Y5)
	ADD_HIGH(Y22, Y6)
	ADD_HIGH(Y23, Y7)
	FOLD8
	VMOVDQU (CX), Y1
	VPSLLD  $15, Y1, Y1
	VPSUBD  Y1, Y0, Y0

	// The bounds, as in boundsI8AVX2, with the parameters in Y24-Y29
	// (AVX2 has too few registers to keep them).
	VCVTDQ2PS Y0, Y0
	VMULPS    (R13), Y0, Y0
	VMULPS    Y24, Y0, Y0
	VMULPS    (R14), Y25, Y2
	VMULPS    (BX), Y26, Y3
	VADDPS    Y3, Y2, Y2
	VPANDD    Y27, Y0, Y3
	VADDPS    Y2, Y3, Y3
	VADDPS    Y2, Y0, Y0
	VMULPS    Y28, Y3, Y3
	VADDPS    Y3, Y0, Y0
	VADDPS    Y29, Y0, Y0
	VMOVUPS   Y0, (R8)

	ADDQ $32, CX
	NEXT_GROUP
	DECQ R9
	JMP  vgroup

vdone:
	VZEROUPPER
	RET
