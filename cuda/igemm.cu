// emugemm: the INT8 wgmma GEMM chassis (issue 4): K-major int8 planes loaded by TMA with 128-byte
// swizzle into a 4-stage mbarrier ring, one producer warpgroup and two consumer warpgroups,
// 128 x 256 tiles of m64n256k32 wgmma (exact INT32 accumulation), a persistent grid. Earlier
// versions (no-swizzle layout with plain loads; one CTA per tile) are recorded in docs/PERF.md.
#include <stdint.h>
#include <cuda.h>
#include "common.cuh"

namespace {

constexpr int BM = 128, BN = 256, BK = 128, STAGES = 4;
constexpr int A_BYTES = BM * BK, B_BYTES = BN * BK, STAGE_BYTES = A_BYTES + B_BYTES;

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


}  // namespace

// the persistent chassis: one CTA per SM walks the tiles t = blockIdx.x,
// blockIdx.x + gridDim.x, ...; the producer's ring runs across tiles (a consumer's epilogue
// overlaps the next tile's loads); tiles are rasterised in groups of 8 along M so that operand
// panels stay in L2. A third coordinate selects a plane (a modulus of scheme II): tile index =
// (plane, tile of the plane), plane outermost. The epilogue is a policy:
//   Int32Out   C (m x n, INT32, column-major), plane 0 only (the plain GEMM)
//   ResidueOut residue planes: sym_mod(C, moduli[plane]) as int8 at out + plane m n (the fused
//              scheme II product: no INT32 leaves the SM)
namespace {

struct Int32Out {
	int* c;
	__device__ void operator()(int plane, long long idx, int v) const { c[idx] = v; }
};

struct ResidueOut {
	signed char* out;
	const unsigned* moduli;
	long long plane_stride;
	__device__ void operator()(int plane, long long idx, int v) const {
		out[plane * plane_stride + idx] = emu::sym_mod_exact((double)v, moduli[plane]);
	}
};

struct Tile {
	int plane, m0, n0;
};

__device__ __forceinline__ Tile tile_of(int t, int tiles_m, int tiles_n) {
	const int per_plane = tiles_m * tiles_n, plane = t / per_plane;
	t %= per_plane;
	constexpr int GROUP = 8;
	const int group = t / (GROUP * tiles_n), first_m = group * GROUP;
	const int size = min(GROUP, tiles_m - first_m);
	const int in_group = t % (GROUP * tiles_n);
	return Tile{plane, (first_m + in_group % size) * BM, (in_group / size) * BN};
}

__device__ __forceinline__ void tma_load3(uint32_t dst, const CUtensorMap* map, int k0, int row0, int plane, uint32_t bar) {
	asm volatile(
	    "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
	    "l"((uint64_t)map), "r"(k0), "r"(row0), "r"(plane), "r"(bar)
	    : "memory");
}

template <typename Epilogue>
__device__ void persistent(const CUtensorMap* map_a, const CUtensorMap* map_b, int m, int n, int k, int planes, const Epilogue& epilogue) {
	extern __shared__ __align__(1024) uint8_t smem_raw[];
	const uint32_t base = ((uint32_t)__cvta_generic_to_shared(smem_raw) + 1023) & ~1023u;
	const uint32_t full = base + STAGES * STAGE_BYTES, empty = full + 8 * STAGES;
	const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN, tiles = planes * tiles_m * tiles_n;
	const int blocks = (k + BK - 1) / BK;
	const int wg = threadIdx.x / 128;
	if (threadIdx.x == 0) {
		for (int s = 0; s < STAGES; ++s) {
			bar_init(full + 8 * s, 1);
			bar_init(empty + 8 * s, 2);
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads();
	if (wg == 0) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
		if (threadIdx.x == 0) {
			int it = 0;
			for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
				const Tile tile = tile_of(t, tiles_m, tiles_n);
				for (int kb = 0; kb < blocks; ++kb, ++it) {
					const int s = it % STAGES;
					bar_wait(empty + 8 * s, ((it / STAGES) & 1) ^ 1);
					bar_expect(full + 8 * s, STAGE_BYTES);
					const uint32_t stage = base + s * STAGE_BYTES;
					tma_load3(stage, map_a, kb * BK, tile.m0, tile.plane, full + 8 * s);
					tma_load3(stage + A_BYTES, map_b, kb * BK, tile.n0, tile.plane, full + 8 * s);
				}
			}
		}
		return;
	}
	asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
	const int cw = wg - 1;
	const int w = (threadIdx.x % 128) / 32, l = threadIdx.x % 32;
	int it = 0;
	for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
		const Tile tile = tile_of(t, tiles_m, tiles_n);
		int d[128];
#pragma unroll
		for (int i = 0; i < 128; ++i) d[i] = 0;
		for (int kb = 0; kb < blocks; ++kb, ++it) {
			const int s = it % STAGES;
			bar_wait(full + 8 * s, (it / STAGES) & 1);
			const uint32_t a = base + s * STAGE_BYTES + cw * 64 * 128, b = base + s * STAGE_BYTES + A_BYTES;
			asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
			for (int ks = 0; ks < BK / 32; ++ks) mma256(d, descriptor_sw128(a + 32 * ks), descriptor_sw128(b + 32 * ks), 1);
			asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
			asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
			if (threadIdx.x % 128 == 0) bar_arrive(empty + 8 * s);
		}
		const int r = tile.m0 + 64 * cw + 16 * w + l / 4;
#pragma unroll
		for (int j = 0; j < BN / 8; ++j) {
			const int col = tile.n0 + 8 * j + 2 * (l % 4);
#pragma unroll
			for (int q = 0; q < 4; ++q) {
				const int rr = r + 8 * (q / 2), cc = col + q % 2;
				if (rr < m && cc < n) epilogue(tile.plane, (long long)cc * m + rr, d[4 * j + q]);
			}
		}
	}
}

}  // namespace

// the plain persistent INT8 GEMM: C = A B^T (one plane)
extern "C" __global__ void __launch_bounds__(384, 1)
    igemm_v2(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int* c, int m, int n, int k) {
	persistent(&map_a, &map_b, m, n, k, 1, Int32Out{c});
}

// the fused scheme II product of real operands: for every modulus (plane) l, the residue planes
// sym_mod(A_l B_l^T, moduli[l]) as int8; exact while k <= 131071
extern "C" __global__ void __launch_bounds__(384, 1)
    scheme2_residues_v0(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, signed char* out,
                        const unsigned* moduli, int m, int n, int k, int planes) {
	persistent(&map_a, &map_b, m, n, k, planes, ResidueOut{out, moduli, (long long)m * n});
}
