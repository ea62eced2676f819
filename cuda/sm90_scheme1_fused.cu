// emugemm: fused scheme I: all p(p+1)/2 slice products of an output tile in one
// persistent wgmma kernel, each slice loaded once, the p diagonal INT32 accumulators in
// registers, the shift-reduce, the K passes, the scaling, alpha and accumulation in the epilogue,
// the output written in the user's type and layout.
//
// Operands: the interleaved digit layout of split_digits_interleaved (cuda/split.cu): row r of a
// plane holds p kpad bytes, K chunk c of 32 holding its p digits (most significant first) one
// after the other, byte (c p + t) 32 + h % 32 for digit t of column h; kpad a multiple of 128. One
// 3-d TMA map per operand (K bytes, rows, planes) brings every slice of a K block at once, in
// 128-byte swizzle atoms (over-fetching up to an atom when 32 p CHUNKS is not a multiple of 128);
// the slice offsets inside a stage are compile-time constants. Planes: real operands 1; complex
// (4M, the CPU oracle's stacking along K) A re, im, -im and B re, im, each output part being one
// phase of two segments: Re = A re B re + A (-im) B im, Im = A re B im + A im B re.
//
// Schedule: the chassis of cuda/sm90_persistent.cuh, shared with cuda/sm90_chassis.cu: one producer warpgroup
// (one thread issuing TMA into a ring of stages), two consumer warpgroups of 64 rows each (128 x N
// tiles, grouped raster along M, persistent grid). Per stage and K chunk the consumers issue the
// p(p+1)/2 products t + u < p as m64nNk32 s8 wgmma into accumulator d = t + u, digit t of A outer
// and d descending inner, so that consecutive wgmmas add into different accumulators (p >= 2).
//
// Epilogue (the CPU oracle's reconstruct in src/cpu/scheme1.rs, operation for operation): per
// output and pass q, v = shift_reduce(C_0..C_{p-1}); passes are added in order through an f64
// carry buffer (m x n per part, written and read back by the same thread), then
// v 2^(16(p-1) - s_i - s_j), alpha and accumulation (emu::combine_store). Complex: the phase of Re
// leaves its scaled value in the carry buffer, the phase of Im combines both. Entries of
// non-finite rows or columns are left to native_fixup (cuda/reconstruct.cu).
#include <stdint.h>
#include <cuda.h>
#include "common.cuh"
#include "sm90_persistent.cuh"
#include "wgmma.cuh"

namespace {

using namespace emu::hopper;

// every fused scheme I kernel is launched with SMEM_LIMIT bytes of dynamic shared memory (the
// opt-in maximum of sm_90); the ring takes as many stages as fit
constexpr int BM = 128, MAX_STAGES = 8;

// the tile width N and the K chunks (of 32) per stage, by slice count p: p N / 2 accumulator
// registers per consumer thread (research/kernels.md C.7); src/gpu/schemes/scheme1_fused.rs mirrors N
template <int P>
struct Tiling;
#define EMU_TILING(P, N_, CHUNKS_)                                    \
	template <>                                                       \
	struct Tiling<P> {                                                \
		static constexpr int N = N_, CHUNKS = CHUNKS_;                \
	};
EMU_TILING(1, 256, 4)
EMU_TILING(2, 192, 2)
EMU_TILING(3, 128, 1)
EMU_TILING(4, 96, 1)
EMU_TILING(5, 64, 1)
EMU_TILING(6, 64, 1)
EMU_TILING(7, 48, 1)
EMU_TILING(8, 48, 1)
#undef EMU_TILING

// the stage layout of slice count P: ATOMS swizzle atoms of A (BM rows x 128 B each), then ATOMS
// of B (N rows x 128 B); K chunk c, digit t of a row at byte 32 (c P + t) of its row of atoms
template <int P>
struct Shape {
	static constexpr int N = Tiling<P>::N, CHUNKS = Tiling<P>::CHUNKS;
	static constexpr int ATOMS = (32 * P * CHUNKS + 127) / 128;
	static constexpr int A_ATOM = BM * 128, B_ATOM = N * 128;
	static constexpr int A_BYTES = ATOMS * A_ATOM, STAGE = ATOMS * (A_ATOM + B_ATOM);
	// the stages that fit beside the alignment slack and the barriers of MAX_STAGES stages
	static constexpr int FIT = (SMEM_LIMIT - ring_bytes(MAX_STAGES, 0)) / STAGE;
	static constexpr int STAGES = FIT < MAX_STAGES ? FIT : MAX_STAGES;
	// the descriptor offset (16-byte units) of byte o of a row in atoms of ATOM bytes
	template <int ATOM>
	__device__ static constexpr uint64_t offset(int o) {
		return (uint64_t)((o / 128) * ATOM + o % 128) >> 4;
	}
	static_assert(STAGES >= 3, "a ring of at least 3 stages");
	static_assert(4 % CHUNKS == 0, "passes and kpad are multiples of 4 chunks");
	static_assert(B_ATOM % 1024 == 0, "atoms aligned for the 128-byte swizzle");
};

// the operand planes of phase f, segment g (real: one phase of one segment; complex: see above)
template <bool COMPLEX>
struct Parts {
	static constexpr int PHASES = COMPLEX ? 2 : 1, SEGMENTS = COMPLEX ? 2 : 1;
	__device__ static int a_plane(int f, int g) { return !COMPLEX || g == 0 ? 0 : (f == 0 ? 2 : 1); }
	__device__ static int b_plane(int f, int g) { return !COMPLEX || g == f ? 0 : 1; }
};

// what the epilogue needs: shifts, non-finite flags, the carry buffer (m x n f64 per phase,
// column-major, ld m), the destination
template <typename T>
struct Output {
	const int *sa, *sb, *bad_rows, *bad_cols;
	double* carry;
	T* dst;
	long long ldd;
	double ar, ai;
	int accumulate;
};

// the last steps of entry (i, j) in range, given its shift-reduced value v of pass q, phase f
template <int P, typename T>
__device__ __forceinline__ void finish(const Output<T>& o, int m, int n, int q, int passes, int f, int i, int j, double v) {
	constexpr bool COMPLEX = emu::Elem<T>::complex;
	const long long at = (long long)j * m + i;
	double* carry = o.carry + (long long)f * m * n + at;
	if (q > 0) v = __dadd_rn(*carry, v);
	if (q + 1 < passes) {
		*carry = v;
		return;
	}
	v = emu::scale_pow2(v, 16 * (P - 1) - o.sa[i] - o.sb[j]);
	if (COMPLEX && f == 0) {
		o.carry[at] = v;
		return;
	}
	if (o.bad_rows[i] || o.bad_cols[j]) return;
	emu::combine_store<emu::Sum::Emulated>(o.dst, i + (long long)j * o.ldd, COMPLEX ? o.carry[at] : v, COMPLEX ? v : 0.0, o.ar, o.ai, o.accumulate);
}

// the kernel of slice count P and output type T. chunks: K chunks of 32 in a row of a plane
// (kpad / 32); pass_chunks: K chunks per pass (a multiple of 4); tile_n: the host's N, checked
template <int P, typename T>
__device__ void fused(const CUtensorMap* map_a, const CUtensorMap* map_b, int m, int n, int tile_n, int chunks, int pass_chunks,
                      const Output<T>& out) {
	using S = Shape<P>;
	using Pt = Parts<emu::Elem<T>::complex>;
	constexpr int N = S::N;
	const uint32_t dynamic_smem = dynamic_smem_size();
	if (tile_n != N || dynamic_smem < SMEM_LIMIT) __trap();
	const Ring<S::STAGES, S::STAGE> ring;
	// one plane of tiles, single CTAs: unit u is tile u. Each warpgroup's walk reads its start and
	// stride (blockIdx.x, gridDim.x: sched.first and sched.stride of a single CTA) where its loop
	// starts: reading sched.first before the warpgroups split compiles this kernel to other code
	// than the code its tuning was measured on
	const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + N - 1) / N;
	const Schedule<BM, N> sched(tiles_m, tiles_n, 1);
	const int passes = (chunks + pass_chunks - 1) / pass_chunks;
	// the K blocks of pass q (chunks and pass_chunks are multiples of 4, CHUNKS divides 4)
	auto blocks = [&](int q) { return (min(chunks, (q + 1) * pass_chunks) - q * pass_chunks) / S::CHUNKS; };
	const int wg = threadIdx.x / 128;
	ring.start();
	if (wg == 0) {
		producer_registers();
		if (threadIdx.x == 0) {
			int it = 0;
			for (int u = blockIdx.x; u < sched.units; u += gridDim.x) {
				const Tile tile = sched.tile(0, u);
				for (int q = 0; q < passes; ++q)
					for (int f = 0; f < Pt::PHASES; ++f)
						for (int g = 0; g < Pt::SEGMENTS; ++g)
							for (int b = 0; b < blocks(q); ++b, ++it) {
								const int s = ring.acquire(it, S::STAGE);
								const uint32_t stage = ring.stage(s);
								const int k0 = (q * pass_chunks + b * S::CHUNKS) * 32 * P;
#pragma unroll
								for (int a = 0; a < S::ATOMS; ++a) {
									tma_load3(stage + a * S::A_ATOM, map_a, k0 + 128 * a, tile.m0, Pt::a_plane(f, g), ring.full(s));
									tma_load3(stage + S::A_BYTES + a * S::B_ATOM, map_b, k0 + 128 * a, tile.n0, Pt::b_plane(f, g),
									          ring.full(s));
								}
							}
			}
		}
		return;
	}
	consumer_registers();
	const int cw = wg - 1;
	const int w = (threadIdx.x % 128) / 32, l = threadIdx.x % 32;
	int it = 0;
	for (int u = blockIdx.x; u < sched.units; u += gridDim.x) {
		const Tile tile = sched.tile(0, u);
#pragma unroll 1
		for (int q = 0; q < passes; ++q) {
#pragma unroll 1
			for (int f = 0; f < Pt::PHASES; ++f) {
				int acc[P][N / 2];
#pragma unroll
				for (int d = 0; d < P; ++d)
#pragma unroll
					for (int x = 0; x < N / 2; ++x) acc[d][x] = 0;
				const int count = Pt::SEGMENTS * blocks(q);
				for (int b = 0; b < count; ++b, ++it) {
					const int s = ring.wait(it);
					const uint32_t stage = ring.stage(s);
					const uint64_t da = descriptor_sw128(stage + cw * 64 * 128), db = descriptor_sw128(stage + S::A_BYTES);
					wgmma_fence();
#pragma unroll
					for (int c = 0; c < S::CHUNKS; ++c)
#pragma unroll
						for (int ta = 0; ta < P; ++ta)
#pragma unroll
							for (int d = P - 1; d >= ta; --d)
								Wgmma<N>::mma(acc[d], da + S::template offset<S::A_ATOM>(32 * (c * P + ta)),
								              db + S::template offset<S::B_ATOM>(32 * (c * P + d - ta)), 1);
					ring.retire(s);
				}
				// accumulator x of the m64nN fragment: row r + 8 ((x % 4) / 2), column c + 8 (x / 4) + x % 2;
				// the coordinates pass through an opaque move so that they are not hoisted into the K loop
				const int r = opaque(tile.m0 + 64 * cw + 16 * w + l / 4), c = opaque(tile.n0 + 2 * (l % 4));
#pragma unroll
				for (int x = 0; x < N / 2; ++x) {
					const int i = r + 8 * ((x % 4) / 2), j = c + 8 * (x / 4) + x % 2;
					double v = (double)acc[P - 1][x];
#pragma unroll
					for (int d = P - 2; d >= 0; --d) v = emu::shift_reduce_step(v, acc[d][x]);
					if (i < m && j < n) finish<P>(out, m, n, q, passes, f, i, j, v);
				}
			}
		}
	}
}

}  // namespace

// scheme1_fused_p<P>_<type>: C = alpha A B (+ C) by fused scheme I with P slices (see the top of
// this file); launched with 384 threads and SMEM_LIMIT bytes of dynamic shared memory
#define EMU_SCHEME1_P(P, NAME, T)                                                                                             \
	extern "C" __global__ void __launch_bounds__(384, 1) scheme1_fused_p##P##_##NAME(                                          \
	    const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int m, int n, int tile_n,         \
	    int chunks, int pass_chunks, const int* sa, const int* sb, const int* bad_rows, const int* bad_cols, double* carry,    \
	    T* dst, long long ldd, double ar, double ai, int accumulate) {                                                        \
		fused<P, T>(&map_a, &map_b, m, n, tile_n, chunks, pass_chunks,                                                       \
		            Output<T>{sa, sb, bad_rows, bad_cols, carry, dst, ldd, ar, ai, accumulate});                             \
	}
#define EMU_SCHEME1(NAME, T)                                                                                                  \
	EMU_SCHEME1_P(1, NAME, T)                                                                                                 \
	EMU_SCHEME1_P(2, NAME, T)                                                                                                 \
	EMU_SCHEME1_P(3, NAME, T)                                                                                                 \
	EMU_SCHEME1_P(4, NAME, T)                                                                                                 \
	EMU_SCHEME1_P(5, NAME, T) EMU_SCHEME1_P(6, NAME, T) EMU_SCHEME1_P(7, NAME, T) EMU_SCHEME1_P(8, NAME, T)
EMU_FOR_EACH_TYPE(EMU_SCHEME1)
