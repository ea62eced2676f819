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
