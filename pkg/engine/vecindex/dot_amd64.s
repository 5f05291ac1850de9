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

// func dotsI8AVX2(q []int16, codes []int8, out []int32)
//
// For each row r of codes (len(q) codes each, len(q) a multiple of 16):
// out[r] = the dot product of q and the row, in int32. Sixteen codes a
// step: widened to int16, multiplied pairwise with the query and summed
// to int32 lanes (VPMADDWD), in two accumulators.
TEXT ·dotsI8AVX2(SB), NOSPLIT, $0-72
	MOVQ q_base+0(FP), R10
	MOVQ q_len+8(FP), CX
	MOVQ codes_base+24(FP), SI
	MOVQ out_base+48(FP), R8
	MOVQ out_len+56(FP), R9

rows:
	TESTQ R9, R9
	JE    finish
	MOVQ  R10, DI
	MOVQ  CX, DX
	VPXOR Y0, Y0, Y0
	VPXOR Y2, Y2, Y2

steps32:
	CMPQ DX, $32
	JL   step16
	VPMOVSXBW (SI), Y1
	VPMOVSXBW 16(SI), Y3
	VPMADDWD  (DI), Y1, Y1
	VPMADDWD  32(DI), Y3, Y3
	VPADDD    Y1, Y0, Y0
	VPADDD    Y3, Y2, Y2
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $32, DX
	JMP       steps32

step16:
	TESTQ DX, DX
	JE    rowsum
	VPMOVSXBW (SI), Y1
	VPMADDWD  (DI), Y1, Y1
	VPADDD    Y1, Y0, Y0
	ADDQ      $16, SI

// Fold the eight int32 lanes into lane 0.
rowsum:
	VPADDD       Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, (R8)
	ADDQ         $4, R8
	DECQ         R9
	JMP          rows

finish:
	VZEROUPPER
	RET
