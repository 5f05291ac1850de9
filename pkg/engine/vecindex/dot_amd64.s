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
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7

step:
	VMOVDQU   (AX), Y8
	VPMOVSXBW (SI), Y9
	VPMADDWD  Y8, Y9, Y9
	VPADDD    Y9, Y0, Y0
	VPMOVSXBW (SI)(R11*1), Y10
	VPMADDWD  Y8, Y10, Y10
	VPADDD    Y10, Y1, Y1
	VPMOVSXBW (SI)(R11*2), Y9
	VPMADDWD  Y8, Y9, Y9
	VPADDD    Y9, Y2, Y2
	VPMOVSXBW (SI)(R12*1), Y10
	VPMADDWD  Y8, Y10, Y10
	VPADDD    Y10, Y3, Y3
	VPMOVSXBW (DI), Y9
	VPMADDWD  Y8, Y9, Y9
	VPADDD    Y9, Y4, Y4
	VPMOVSXBW (DI)(R11*1), Y10
	VPMADDWD  Y8, Y10, Y10
	VPADDD    Y10, Y5, Y5
	VPMOVSXBW (DI)(R11*2), Y9
	VPMADDWD  Y8, Y9, Y9
	VPADDD    Y9, Y6, Y6
	VPMOVSXBW (DI)(R12*1), Y10
	VPMADDWD  Y8, Y10, Y10
	VPADDD    Y10, Y7, Y7
	ADDQ      $16, SI
	ADDQ      $16, DI
	ADDQ      $32, AX
	CMPQ      AX, DX
	JB        step

	// Fold: pairwise sums within 128-bit lanes leave each lane holding
	// the partial sums of rows 0-3 (Y0) and 4-7 (Y4); adding the lanes
	// gives the eight dot products in row order.
	VPHADDD    Y1, Y0, Y0
	VPHADDD    Y3, Y2, Y2
	VPHADDD    Y2, Y0, Y0
	VPHADDD    Y5, Y4, Y4
	VPHADDD    Y7, Y6, Y6
	VPHADDD    Y6, Y4, Y4
	VPERM2I128 $0x20, Y4, Y0, Y1
	VPERM2I128 $0x31, Y4, Y0, Y2
	VPADDD     Y2, Y1, Y0

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

	ADDQ $32, R8
	ADDQ $32, R13
	ADDQ $32, R14
	ADDQ $32, BX
	LEAQ (DI)(R12*1), SI // row 8: DI is at row 5
	LEAQ (SI)(R11*4), DI
	DECQ R9
	JMP  group

done:
	VZEROUPPER
	RET
