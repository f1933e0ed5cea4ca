// The vector instructions the project's own kernels run with, chosen at run
// time so that one build runs on every x86-64 CPU with AVX2 and FMA, and uses
// AVX-512 where the CPU has it.
//
// How: the code outside the kernels is compiled for AVX2 + FMA (x86-64-v3).
// Each kernel file listed in CMake's tinygpt_kernel_sources is compiled twice,
// once more with AVX-512 (F, BW, VL, DQ, 512-bit vectors preferred), and the
// two copies of every kernel live in different namespaces (TG_ISA below, an
// inline namespace, so callers do not name it): isa_avx2 and isa_avx512. A
// table of entry points per copy (e.g. tensor/cpu/kernel_table.h) is picked
// once, by active_isa(). No AVX-512 instruction runs outside isa_avx512
// (tests/tensor/check_isa_confinement.sh disassembles the program to check).
//
// TINYGPT_ISA=avx2 forces the AVX2 kernels on any CPU (to compare the two, and
// to test the AVX2 path on an AVX-512 machine); TINYGPT_ISA=avx512 asks for
// AVX-512 and is an error on a CPU without it.
//
// Three kernels need more than AVX-512 F/BW/VL/DQ: the bfloat16 matrix
// product's VDPBF16PS (tensor/cpu/gemm_bf16.h), and the decoding dot products'
// VPDPBUSD and VDPBF16PS (tensor/cpu/quantized_kernels.h), which AVX-512 CPUs
// before Cooper Lake and Zen 4 lack. They live in their own namespace,
// isa_avx512_bf16, in files compiled with -mavx512bf16 -mavx512vnni, and run
// only where cpu_has_avx512_bf16() (and, for the dot products,
// cpu_has_avx512_vnni()).
#pragma once

#if defined(__AVX512F__)
#define TG_ISA isa_avx512
#else
#define TG_ISA isa_avx2
#endif

namespace tg {

enum class Isa { avx2, avx512 };

// The kernels in use: AVX-512 when the CPU has F, BW, VL and DQ, unless
// TINYGPT_ISA says otherwise. Decided on the first call; throws tg::Error for a
// TINYGPT_ISA it cannot honour.
Isa active_isa();
const char* isa_name(Isa isa);  // "AVX-512", "AVX2"
bool cpu_has_avx512();
// AVX-512 as above and AVX512-BF16 (CPUID leaf 7, sub-leaf 1, EAX bit 5).
bool cpu_has_avx512_bf16();
// AVX-512 as above and AVX512-VNNI.
bool cpu_has_avx512_vnni();

}  // namespace tg
