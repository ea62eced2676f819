// emugemm: Hopper (sm_90a) building blocks shared by the wgmma kernels: shared-memory matrix
// descriptors for the 128-byte swizzle, the int8 wgmma m64nNk32 (exact INT32 accumulation) for
// every tile width a kernel uses, mbarriers, TMA loads (multicast to a cluster too), cp.async
// copies, cluster helpers, predicated stores and the dynamic shared-memory limit (PTX ISA 8.x,
// sections "Asynchronous Warpgroup Level Matrix Multiply-Accumulate", "mbarrier", "cp.async",
// "cp.async.bulk.tensor", "barrier.cluster", "mapa")
#pragma once
#include <stdint.h>
#include <cuda.h>

namespace emu::hopper {

// K-major, 128-byte swizzle: SBO = 8 rows x 128 B, LBO unused (1), layout type 1 in bits 62-63
__device__ __forceinline__ uint64_t descriptor_sw128(uint32_t smem_addr) {
	uint64_t d = 0;
	d |= (uint64_t)((smem_addr & 0x3FFFF) >> 4);
	d |= (uint64_t)1 << 16;
	d |= (uint64_t)(1024 >> 4) << 32;
	d |= (uint64_t)1 << 62;
	return d;
}

// Wgmma<N>::mma(d, desc_a, desc_b, scale_d): d (+)= A B^T for a 64 x 32 int8 A and an N x 32 int8
// B in shared memory (descriptors), d the warpgroup's 64 x N INT32 fragment (N / 2 registers per
// thread; accumulator 4 j + q at row 8 (q / 2) + lane / 4 of the warp's 16, column 8 j + 2 (lane % 4)
// + q % 2); scale_d = 0 overwrites d. The operand lists are generated from blocks of 8 register
// numbers (EMU_SEQ_b lists b's numbers, %0 written out)
template <int N>
struct Wgmma;

// clang-format off
#define EMU_SEQ_0(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define EMU_SEQ_1(X) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define EMU_SEQ_2(X) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)
#define EMU_SEQ_3(X) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
#define EMU_SEQ_4(X) X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39)
#define EMU_SEQ_5(X) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47)
#define EMU_SEQ_6(X) X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55)
#define EMU_SEQ_7(X) X(56) X(57) X(58) X(59) X(60) X(61) X(62) X(63)
#define EMU_SEQ_8(X) X(64) X(65) X(66) X(67) X(68) X(69) X(70) X(71)
#define EMU_SEQ_9(X) X(72) X(73) X(74) X(75) X(76) X(77) X(78) X(79)
#define EMU_SEQ_10(X) X(80) X(81) X(82) X(83) X(84) X(85) X(86) X(87)
#define EMU_SEQ_11(X) X(88) X(89) X(90) X(91) X(92) X(93) X(94) X(95)
#define EMU_SEQ_12(X) X(96) X(97) X(98) X(99) X(100) X(101) X(102) X(103)
#define EMU_SEQ_13(X) X(104) X(105) X(106) X(107) X(108) X(109) X(110) X(111)
#define EMU_SEQ_14(X) X(112) X(113) X(114) X(115) X(116) X(117) X(118) X(119)
#define EMU_SEQ_15(X) X(120) X(121) X(122) X(123) X(124) X(125) X(126) X(127)
// clang-format on

#define EMU_ACC_STR(i) ", %" #i
#define EMU_ACC_REG(i) , "+r"(d[i])
#define EMU_STR(x) #x
#define EMU_WGMMA_S8(N, ACC, DA, DB, SCALE)                                                                        \
	template <>                                                                                                    \
	struct Wgmma<N> {                                                                                              \
		static constexpr int REGS = N / 2;                                                                         \
		__device__ __forceinline__ static void mma(int (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int scale_d) { \
			asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" EMU_STR(SCALE) ", 0;\n"                              \
			             "wgmma.mma_async.sync.aligned.m64n" EMU_STR(N) "k32.s32.s8.s8 {%0" ACC(EMU_ACC_STR)         \
			             "}, %" EMU_STR(DA) ", %" EMU_STR(DB) ", p;\n}\n"                                           \
			             : "+r"(d[0]) ACC(EMU_ACC_REG)                                                              \
			             : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                                 \
		}                                                                                                          \
	};
#define EMU_ACC_32(X) EMU_SEQ_0(X) EMU_SEQ_1(X)
EMU_WGMMA_S8(32, EMU_ACC_32, 16, 17, 18)
#define EMU_ACC_48(X) EMU_SEQ_0(X) EMU_SEQ_1(X) EMU_SEQ_2(X)
EMU_WGMMA_S8(48, EMU_ACC_48, 24, 25, 26)
#define EMU_ACC_64(X) EMU_SEQ_0(X) EMU_SEQ_1(X) EMU_SEQ_2(X) EMU_SEQ_3(X)
EMU_WGMMA_S8(64, EMU_ACC_64, 32, 33, 34)
#define EMU_ACC_96(X) EMU_SEQ_0(X) EMU_SEQ_1(X) EMU_SEQ_2(X) EMU_SEQ_3(X) EMU_SEQ_4(X) EMU_SEQ_5(X)
EMU_WGMMA_S8(96, EMU_ACC_96, 48, 49, 50)
#define EMU_ACC_128(X) EMU_SEQ_0(X) EMU_SEQ_1(X) EMU_SEQ_2(X) EMU_SEQ_3(X) EMU_SEQ_4(X) EMU_SEQ_5(X) EMU_SEQ_6(X) EMU_SEQ_7(X)
EMU_WGMMA_S8(128, EMU_ACC_128, 64, 65, 66)
#define EMU_ACC_192(X) EMU_SEQ_0(X) EMU_SEQ_1(X) EMU_SEQ_2(X) EMU_SEQ_3(X) EMU_SEQ_4(X) EMU_SEQ_5(X) EMU_SEQ_6(X) EMU_SEQ_7(X) EMU_SEQ_8(X) EMU_SEQ_9(X) EMU_SEQ_10(X) EMU_SEQ_11(X)
EMU_WGMMA_S8(192, EMU_ACC_192, 96, 97, 98)
#define EMU_ACC_256(X) EMU_SEQ_0(X) EMU_SEQ_1(X) EMU_SEQ_2(X) EMU_SEQ_3(X) EMU_SEQ_4(X) EMU_SEQ_5(X) EMU_SEQ_6(X) EMU_SEQ_7(X) EMU_SEQ_8(X) EMU_SEQ_9(X) EMU_SEQ_10(X) EMU_SEQ_11(X) EMU_SEQ_12(X) EMU_SEQ_13(X) EMU_SEQ_14(X) EMU_SEQ_15(X)
EMU_WGMMA_S8(256, EMU_ACC_256, 128, 129, 130)
#undef EMU_WGMMA_S8

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int PENDING>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory"); }

// x, through a move the compiler cannot see through or hoist
__device__ __forceinline__ int opaque(int x) {
	asm volatile("mov.b32 %0, %0;\n" : "+r"(x));
	return x;
}

__device__ __forceinline__ void bar_init(uint32_t bar, uint32_t count) {
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

__device__ __forceinline__ void bar_wait(uint32_t bar, uint32_t parity) {
	asm volatile(
	    "{\n.reg .pred p;\nWAIT_%=:\n"
	    "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
	    "@!p bra WAIT_%=;\n}\n" ::"r"(bar),
	    "r"(parity)
	    : "memory");
}

__device__ __forceinline__ void bar_arrive(uint32_t bar) {
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void bar_expect(uint32_t bar, uint32_t bytes) {
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// a 3-d TMA load (coordinates innermost first) into shared memory, completing on `bar`
__device__ __forceinline__ void tma_load3(uint32_t dst, const CUtensorMap* map, int c0, int c1, int c2, uint32_t bar) {
	asm volatile(
	    "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
	    "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
	    : "memory");
}

// tma_load3 into the same shared-memory offset of every CTA of the cluster named in `mask` (bit r:
// cluster rank r), completing on the mbarrier at the same offset `bar` in each of them
__device__ __forceinline__ void tma_load3_multicast(uint32_t dst, const CUtensorMap* map, int c0, int c1, int c2, uint32_t bar, uint16_t mask) {
	asm volatile(
	    "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
	    "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
	    : "memory");
}

// the shared-memory address of a generic pointer into shared memory
__device__ __forceinline__ uint32_t smem_address(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

// an asynchronous 16-byte copy from global to shared memory (cp.async, both addresses 16-byte
// aligned, through L2 only) of `bytes` (16, or 0: the piece is zero-filled and nothing is read), in
// this thread's current group, when `when` holds (predicated, not branched around)
__device__ __forceinline__ void async_copy16(void* dst, const void* src, unsigned bytes, bool when) {
	asm volatile("{\n.reg .pred q;\nsetp.ne.b32 q, %3, 0;\n@q cp.async.cg.shared.global [%0], [%1], 16, %2;\n}\n" ::"r"(smem_address(dst)),
	             "l"(src), "r"(bytes), "r"((int)when)
	             : "memory");
}

// closes this thread's current group of cp.async copies
__device__ __forceinline__ void async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// waits until at most `PENDING` of this thread's most recent cp.async groups are incomplete
template <int PENDING>
__device__ __forceinline__ void async_wait() {
	asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// `TYPE NAME()`: the value of the 32-bit PTX special register `%REG` (REG a string literal)
#define EMU_SPECIAL_REGISTER(TYPE, NAME, REG)                                                                          \
	__device__ __forceinline__ TYPE NAME() {                                                                           \
		TYPE r;                                                                                                        \
		asm volatile("mov.u32 %0, %%" REG ";\n" : "=r"(r));                                                            \
		return r;                                                                                                      \
	}

// this CTA's rank in its cluster
EMU_SPECIAL_REGISTER(int, cluster_rank, "cluster_ctarank")

// CTAs per cluster
EMU_SPECIAL_REGISTER(int, cluster_size, "cluster_nctarank")

// the cluster's index in the grid and the grid's cluster count (along x)
EMU_SPECIAL_REGISTER(int, cluster_id, "clusterid.x")
EMU_SPECIAL_REGISTER(int, cluster_count, "nclusterid.x")

// the most dynamic shared memory a block may opt in to on sm_90 (227 KB: the SM's 228 KB less the
// 1 KB the system reserves per block), in bytes: what the kernels' shared-memory layouts must fit
// and the host's launches may ask for (SMEM_LIMIT in src/gpu/runtime/launch.rs, the host's copy)
constexpr int SMEM_LIMIT = 232448;

// the dynamic shared memory the kernel was launched with, in bytes
EMU_SPECIAL_REGISTER(uint32_t, dynamic_smem_size, "dynamic_smem_size")

// an arrival on the mbarrier at shared-memory offset `bar` of the cluster's CTA `rank` (this one
// included). Default (CTA-scope) semantics: the ring's consumers arrive once their wgmma reads of
// the stage have completed (wgmma.wait_group), so the peer's TMA that waits on this arrival cannot
// overtake them; a cluster-scope release compiles to two MEMBAR.ALL.GPU and a CGAERRBAR per
// arrival, and with those the multicast pairs ran at half the speed of a single CTA
__device__ __forceinline__ void bar_arrive_cluster(uint32_t bar, int rank) {
	asm volatile(
	    "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
	    "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
	    "r"(rank)
	    : "memory");
}

// every thread of every CTA of the cluster: arrive (release), then wait (acquire) for all others
__device__ __forceinline__ void cluster_sync() {
	asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// unit u of a rows x cols grid of units, rasterised in groups of `group` rows (so that the
// operand panels of the units running at once stay in L2): {row, column} of the unit
__device__ __forceinline__ int2 grouped_raster(int u, int rows, int cols, int group) {
	const int first = u / (group * cols) * group;
	const int size = min(group, rows - first);
	const int in_group = u % (group * cols);
	return int2{first + in_group % size, in_group / size};
}

// shared-memory byte store, word load (32-bit shared addresses), and a barrier of `threads`
// threads on named barrier `id` (1..15; 0 is __syncthreads's)
__device__ __forceinline__ void st_shared_b8(uint32_t addr, int v) { asm volatile("st.shared.b8 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory"); }

__device__ __forceinline__ uint32_t ld_shared_b32(uint32_t addr) {
	uint32_t v;
	asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
	return v;
}

__device__ __forceinline__ void named_barrier(int id, int threads) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory"); }

// st.global of v (its low byte for int8) where `inside`: a predicated store, not a branch around
// one (a seventh fewer instructions in the epilogues)
__device__ __forceinline__ void store_if(signed char* p, int v, bool inside) {
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n@p st.global.b8 [%0], %1;\n}\n" ::"l"(p), "r"(v), "r"((int)inside) : "memory");
}

__device__ __forceinline__ void store_if(int* p, int v, bool inside) {
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n@p st.global.b32 [%0], %1;\n}\n" ::"l"(p), "r"(v), "r"((int)inside) : "memory");
}

}  // namespace emu::hopper
