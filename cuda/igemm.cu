// emugemm: the INT8 wgmma GEMM chassis, version 0 (issue 4, step 1): C (m x n, INT32,
// column-major, ld m) = A B^T with A given as m K-major rows and B as n K-major rows of int8
// (leading dimension ldk, a multiple of 16), exact INT32 accumulation.
//
// one warpgroup per 64 x 128 tile, K in blocks of 128 bytes (4 wgmma m64n128k32 steps); operands
// staged through shared memory by plain 16-byte loads into the no-swizzle K-major canonical layout
// (8-row x 16-byte core matrices; LBO = distance of K-adjacent core matrices, SBO = distance of
// 8-row groups). No TMA, no pipelining yet: this version exists to pin the layout and descriptor
// encoding against the CPU oracle. m % 64 == 0, n % 128 == 0, k % 128 == 0.
#include <stdint.h>

namespace {

constexpr int BM = 64, BN = 128, BK = 128;  // BK in bytes = int8 elements

__device__ __forceinline__ uint64_t descriptor(const void* smem, uint32_t lbo, uint32_t sbo) {
	uint32_t addr = (uint32_t)__cvta_generic_to_shared(smem);
	uint64_t d = 0;
	d |= (uint64_t)((addr & 0x3FFFF) >> 4);
	d |= (uint64_t)((lbo & 0x3FFFF) >> 4) << 16;
	d |= (uint64_t)((sbo & 0x3FFFF) >> 4) << 32;
	return d;  // base offset 0, no swizzle
}

// a rows x BK tile of K-major rows into smem, k32 step after k32 step, each step in core matrices
__device__ __forceinline__ void stage(const int8_t* src, long long ldk, int rows, int8_t* smem, uint32_t lbo, uint32_t sbo) {
	for (int idx = threadIdx.x; idx < rows * (BK / 16); idx += 128) {
		int r = idx / (BK / 16), c = idx % (BK / 16);  // row, 16-byte chunk along K
		int step = c / 2, half = c % 2;
		uint4 v = *reinterpret_cast<const uint4*>(src + (long long)r * ldk + c * 16);
		uint32_t off = step * rows * 32 + (r / 8) * sbo + half * lbo + (r % 8) * 16;
		*reinterpret_cast<uint4*>(smem + off) = v;
	}
}

__device__ __forceinline__ void mma(int (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d) {
	asm volatile(
	    "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
	    "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p;\n}\n"
	    : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
	    : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(128) igemm_v0(const int8_t* a, const int8_t* b, int* c, int m, int n, int k,
                                                          long long ldk, unsigned lbo, unsigned sbo) {
	__shared__ __align__(128) int8_t sa[BM * BK];
	__shared__ __align__(128) int8_t sb[BN * BK];
	const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
	int d[64];
#pragma unroll
	for (int i = 0; i < 64; ++i) d[i] = 0;
	for (int k0 = 0; k0 < k; k0 += BK) {
		stage(a + (long long)m0 * ldk + k0, ldk, BM, sa, lbo, sbo);
		stage(b + (long long)n0 * ldk + k0, ldk, BN, sb, lbo, sbo);
		asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
		__syncthreads();
		asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
		for (int s = 0; s < BK / 32; ++s) {
			mma(d, descriptor(sa + s * BM * 32, lbo, sbo), descriptor(sb + s * BN * 32, lbo, sbo), 1);
		}
		asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
		asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
		__syncthreads();
	}
	// accumulator fragment: warp w owns rows 16w..16w+15; lane l rows 16w + l/4 (+8), columns
	// 8j + 2(l%4) (+1); registers d[4j..4j+3] = (r, c), (r, c+1), (r+8, c), (r+8, c+1)
	const int w = threadIdx.x / 32, l = threadIdx.x % 32;
	const int r = m0 + 16 * w + l / 4;
#pragma unroll
	for (int j = 0; j < BN / 8; ++j) {
		int col = n0 + 8 * j + 2 * (l % 4);
		c[(long long)col * m + r] = d[4 * j];
		c[(long long)(col + 1) * m + r] = d[4 * j + 1];
		c[(long long)col * m + r + 8] = d[4 * j + 2];
		c[(long long)(col + 1) * m + r + 8] = d[4 * j + 3];
	}
}

// ---- version 1: TMA (128-byte swizzle) into a 4-stage mbarrier ring, one producer warpgroup and
// two consumer warpgroups, 128 x 256 tiles, m64n256k32 wgmma. m % 128 == 0, n % 256 == 0,
// k % 128 == 0.
#include <cuda.h>

namespace {

constexpr int V1_BM = 128, V1_BN = 256, V1_BK = 128, V1_STAGES = 4;
constexpr int V1_A_BYTES = V1_BM * V1_BK, V1_B_BYTES = V1_BN * V1_BK, V1_STAGE_BYTES = V1_A_BYTES + V1_B_BYTES;

// K-major, 128-byte swizzle: SBO = 8 rows x 128 B, LBO unused (1), layout type 1 in bits 62-63
__device__ __forceinline__ uint64_t descriptor_sw128(uint32_t smem_addr) {
	uint64_t d = 0;
	d |= (uint64_t)((smem_addr & 0x3FFFF) >> 4);
	d |= (uint64_t)1 << 16;
	d |= (uint64_t)(1024 >> 4) << 32;
	d |= (uint64_t)1 << 62;
	return d;
}

__device__ __forceinline__ void mma256(int (&d)[128], uint64_t desc_a, uint64_t desc_b, int scale_d) {
	asm volatile(
	    "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
	    "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p;\n}\n"
	    : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]), "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]), "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]), "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), "+r"(d[96]), "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]), "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]), "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]), "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
	    : "l"(desc_a), "l"(desc_b), "r"(scale_d));
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

__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, int k0, int row0, uint32_t bar) {
	asm volatile(
	    "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
	    "l"((uint64_t)map), "r"(k0), "r"(row0), "r"(bar)
	    : "memory");
}

}  // namespace

extern "C" __global__ void __launch_bounds__(384, 1)
    igemm_v1(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int* c, int m, int n, int k) {
	extern __shared__ __align__(1024) uint8_t smem_raw[];
	// the stages start at the first 1024-byte boundary (swizzle atoms), the barriers after them
	const uint32_t base = ((uint32_t)__cvta_generic_to_shared(smem_raw) + 1023) & ~1023u;
	const uint32_t full = base + V1_STAGES * V1_STAGE_BYTES, empty = full + 8 * V1_STAGES;
	const int m0 = blockIdx.y * V1_BM, n0 = blockIdx.x * V1_BN, blocks = k / V1_BK;
	const int wg = threadIdx.x / 128;
	if (threadIdx.x == 0) {
		for (int s = 0; s < V1_STAGES; ++s) {
			bar_init(full + 8 * s, 1);
			bar_init(empty + 8 * s, 2);
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads();
	if (wg == 0) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
		if (threadIdx.x == 0) {
			for (int kb = 0; kb < blocks; ++kb) {
				const int s = kb % V1_STAGES;
				bar_wait(empty + 8 * s, ((kb / V1_STAGES) & 1) ^ 1);
				bar_expect(full + 8 * s, V1_STAGE_BYTES);
				const uint32_t stage = base + s * V1_STAGE_BYTES;
				tma_load(stage, &map_a, kb * V1_BK, m0, full + 8 * s);
				tma_load(stage + V1_A_BYTES, &map_b, kb * V1_BK, n0, full + 8 * s);
			}
		}
		return;
	}
	asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
	const int cw = wg - 1;  // consumer warpgroup: rows 64 cw .. 64 cw + 63 of the tile
	int d[128];
#pragma unroll
	for (int i = 0; i < 128; ++i) d[i] = 0;
	for (int kb = 0; kb < blocks; ++kb) {
		const int s = kb % V1_STAGES;
		bar_wait(full + 8 * s, (kb / V1_STAGES) & 1);
		const uint32_t a = base + s * V1_STAGE_BYTES + cw * 64 * 128, b = base + s * V1_STAGE_BYTES + V1_A_BYTES;
		asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
		for (int ks = 0; ks < V1_BK / 32; ++ks) mma256(d, descriptor_sw128(a + 32 * ks), descriptor_sw128(b + 32 * ks), 1);
		asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
		asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
		if (threadIdx.x % 128 == 0) bar_arrive(empty + 8 * s);
	}
	const int w = (threadIdx.x % 128) / 32, l = threadIdx.x % 32;
	const int r = m0 + 64 * cw + 16 * w + l / 4;
#pragma unroll
	for (int j = 0; j < V1_BN / 8; ++j) {
		int col = n0 + 8 * j + 2 * (l % 4);
		c[(long long)col * m + r] = d[4 * j];
		c[(long long)(col + 1) * m + r] = d[4 * j + 1];
		c[(long long)col * m + r + 8] = d[4 * j + 2];
		c[(long long)(col + 1) * m + r + 8] = d[4 * j + 3];
	}
}
