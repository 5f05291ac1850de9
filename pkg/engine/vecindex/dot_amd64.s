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
	VPXORD Y0, Y0, Y0
	VPXORD Y1, Y1, Y1
	VPXORD Y2, Y2, Y2
	VPXORD Y3, Y3, Y3
	VPXORD Y4, Y4, Y4
	VPXORD Y5, Y5, Y5
	VPXORD Y6, Y6, Y6
	VPXORD Y7, Y7, Y7
	VPXORD Y16, Y16, Y16
	VPXORD Y17, Y17, Y17
	VPXORD Y18, Y18, Y18
	VPXORD Y19, Y19, Y19
	VPXORD Y20, Y20, Y20
	VPXORD Y21, Y21, Y21
	VPXORD Y22, Y22, Y22
	VPXORD Y23, Y23, Y23

vstep:
	CMPQ     AX, DX
	JAE      vtail
	VMOVDQU  (AX), Y8
	VMOVDQU  (AX)(R11*1), Y10
	VMOVDQU  (SI), Y9
	VPDPBUSD Y9, Y8, Y0
	VPDPBUSD Y9, Y10, Y16
	VMOVDQU  (SI)(R11*1), Y11
	VPDPBUSD Y11, Y8, Y1
	VPDPBUSD Y11, Y10, Y17
	VMOVDQU  (SI)(R11*2), Y9
	VPDPBUSD Y9, Y8, Y2
	VPDPBUSD Y9, Y10, Y18
	VMOVDQU  (SI)(R12*1), Y11
	VPDPBUSD Y11, Y8, Y3
	VPDPBUSD Y11, Y10, Y19
	VMOVDQU  (DI), Y9
	VPDPBUSD Y9, Y8, Y4
	VPDPBUSD Y9, Y10, Y20
	VMOVDQU  (DI)(R11*1), Y11
	VPDPBUSD Y11, Y8, Y5
	VPDPBUSD Y11, Y10, Y21
	VMOVDQU  (DI)(R11*2), Y9
	VPDPBUSD Y9, Y8, Y6
	VPDPBUSD Y9, Y10, Y22
	VMOVDQU  (DI)(R12*1), Y11
	VPDPBUSD Y11, Y8, Y7
	VPDPBUSD Y11, Y10, Y23
	ADDQ     $32, SI
	ADDQ     $32, DI
	ADDQ     $32, AX
	JMP      vstep

// A last 16 codes, when the stride is an odd multiple of 16: the 16-byte
// loads clear the upper halves of the vectors, which then add nothing.
vtail:
	TESTQ    $16, R11
	JE       vfold
	VMOVDQU  (AX), X8
	VMOVDQU  (AX)(R11*1), X10
	VMOVDQU  (SI), X9
	VPDPBUSD Y9, Y8, Y0
	VPDPBUSD Y9, Y10, Y16
	VMOVDQU  (SI)(R11*1), X11
	VPDPBUSD Y11, Y8, Y1
	VPDPBUSD Y11, Y10, Y17
	VMOVDQU  (SI)(R11*2), X9
	VPDPBUSD Y9, Y8, Y2
	VPDPBUSD Y9, Y10, Y18
	VMOVDQU  (SI)(R12*1), X11
	VPDPBUSD Y11, Y8, Y3
	VPDPBUSD Y11, Y10, Y19
	VMOVDQU  (DI), X9
	VPDPBUSD Y9, Y8, Y4
	VPDPBUSD Y9, Y10, Y20
	VMOVDQU  (DI)(R11*1), X11
	VPDPBUSD Y11, Y8, Y5
	VPDPBUSD Y11, Y10, Y21
	VMOVDQU  (DI)(R11*2), X9
	VPDPBUSD Y9, Y8, Y6
	VPDPBUSD Y9, Y10, Y22
	VMOVDQU  (DI)(R12*1), X11
	VPDPBUSD Y11, Y8, Y7
	VPDPBUSD Y11, Y10, Y23
	ADDQ     $16, SI
	ADDQ     $16, DI

// Each row's lanes: 256·high + low; then fold as boundsI8AVX2 does, and
// take 32768 times the sum of each row's codes off.
vfold:
	VPSLLD     $8, Y16, Y16
	VPADDD     Y16, Y0, Y0
	VPSLLD     $8, Y17, Y17
	VPADDD     Y17, Y1, Y1
	VPSLLD     $8, Y18, Y18
	VPADDD     Y18, Y2, Y2
	VPSLLD     $8, Y19, Y19
	VPADDD     Y19, Y3, Y3
	VPSLLD     $8, Y20, Y20
	VPADDD     Y20, Y4, Y4
	VPSLLD     $8, Y21, Y21
	VPADDD     Y21, Y5, Y5
	VPSLLD     $8, Y22, Y22
	VPADDD     Y22, Y6, Y6
	VPSLLD     $8, Y23, Y23
	VPADDD     Y23, Y7, Y7
	VPHADDD    Y1, Y0, Y0
	VPHADDD    Y3, Y2, Y2
	VPHADDD    Y2, Y0, Y0
	VPHADDD    Y5, Y4, Y4
	VPHADDD    Y7, Y6, Y6
	VPHADDD    Y6, Y4, Y4
	VPERM2I128 $0x20, Y4, Y0, Y1
	VPERM2I128 $0x31, Y4, Y0, Y2
	VPADDD     Y2, Y1, Y0
	VMOVDQU    (CX), Y1
	VPSLLD     $15, Y1, Y1
	VPSUBD     Y1, Y0, Y0

	// The bounds, as in boundsI8AVX2, with the parameters in Y24-Y29.
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

	ADDQ $32, R8
	ADDQ $32, R13
	ADDQ $32, R14
	ADDQ $32, BX
	ADDQ $32, CX
	LEAQ (DI)(R12*1), SI // row 8: DI is at row 5
	LEAQ (SI)(R11*4), DI
	DECQ R9
	JMP  vgroup

vdone:
	VZEROUPPER
	RET
