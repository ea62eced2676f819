// emugemm: the INT8 wgmma GEMM chassis (issue 4): K-major int8 planes loaded by TMA with 128-byte
// swizzle into a 4-stage mbarrier ring, one producer warpgroup and two consumer warpgroups,
// 128 x 256 tiles of m64n256k32 wgmma (exact INT32 accumulation), a persistent grid. Earlier
// versions (no-swizzle layout with plain loads; one CTA per tile) are recorded in docs/PERF.md.
#include <stdint.h>
#include <cuda.h>
#include "common.cuh"
#include "wgmma.cuh"

namespace {

using namespace emu::hopper;

constexpr int BM = 128, BN = 256, BK = 128, STAGES = 4;
constexpr int A_BYTES = BM * BK, B_BYTES = BN * BK, STAGE_BYTES = A_BYTES + B_BYTES;

}  // namespace

// the persistent chassis: one CTA per SM walks the tiles t = blockIdx.x,
// blockIdx.x + gridDim.x, ...; the producer's ring runs across tiles (a consumer's epilogue
// overlaps the next tile's loads); tiles are rasterised in groups of 8 along M so that operand
// panels stay in L2. A third coordinate selects a modulus of scheme II: tile index = (modulus,
// tile of the modulus), modulus outermost. Each tile runs Epilogue::PHASES phases (a
// compile-time count): phase f accumulates the product of planes PHASES l + f of A and B (l the
// tile's modulus) into the same INT32 accumulators, zeroed at the start of every phase, and
// hands them to the epilogue, which is told the phase and keeps what it needs between phases in
// its per-tile State (registers). The producer loads, tile after tile, the phases' K blocks in
// order, one ring across phases and tiles. With Epilogue::CARRY, every CHUNK_BLOCKS K blocks the
// accumulators are replaced by small values congruent mod the tile's modulus (Modulus::carry), so
// that any K is exact (only the value mod m matters; see CHUNK_BLOCKS). The epilogues:
//   Int32Out     C (m x n, INT32, column-major), one modulus, one phase (the plain GEMM; exact
//                while K 128^2 < 2^31)
//   ResidueOut   real scheme II: sym_mod(A_l B_l^T, m_l) as int8 at out + l m n
//   Residue3mOut complex scheme II (3M): phases T1 = Ar Br^T, T2 = Ai Bi^T, T3 = (Ar+Ai)(Br+Bi)^T
//                of planes 3l, 3l+1, 3l+2; Re = sym_mod(T1 - T2) at re + l m n and
//                Im = sym_mod(T3 - T1 - T2) at im + l m n, through int8 residues kept in
//                registers: after phase 0 r1 = sym_mod(T1); after phase 1 Re = sym_mod(r1 - T2)
//                and s = sym_mod(r1 + T2); after phase 2 Im = sym_mod(T3 - s)
namespace {

// K blocks per exact chunk: 1023 x 128 = 130,944 products of int8 residues (|x| <= 128, so
// |x y| <= 2^14) on top of a carried value (|c| < 384, Modulus::carry) stay below 2^31, with
// room for the 3M epilogue's +- kept residue (|r| <= 128): 384 + 128 + 130,944 x 2^14 =
// 2,145,387,008 < 2^31 - 1
constexpr int CHUNK_BLOCKS = 1023;
static_assert(384ll + 128 + (long long)CHUNK_BLOCKS * BK * 128 * 128 < (1ll << 31) - 1, "a chunk must be exact in INT32");

template <int F>
struct Phase {
	static constexpr int value = F;
};

// body(Phase<f>{}) for a run-time phase f < N: the phase is a compile-time constant in the body
template <int N, int F = 0, typename Body>
__device__ __forceinline__ void with_phase(int f, Body& body) {
	if constexpr (F + 1 < N) {
		if (f == F) body(Phase<F>{});
		else with_phase<N, F + 1>(f, body);
	} else {
		body(Phase<F>{});
	}
}

// a modulus m <= 256 and its reciprocal magic = floor(2^32 / m) = 2^32 / m - delta (0 <= delta < 1),
// computed once per tile. For |v| < 2^31 the high word of v magic is q = floor(v / m - e) with
// |e| = |v| delta / 2^32 < 1/2, so r = v - q m (exact in int32: it is small) lies in
// [-m/2, 3m/2): the carry between K chunks needs only that (congruence and a bound), the
// symmetric residue one conditional subtraction more. Integer arithmetic only (a few instructions,
// 32-bit temporaries: emu::sym_mod_exact's double arithmetic here made ptxas spill); checked
// against integer % for every int32 and every modulus by modulus_exhaustive below
struct Modulus {
	int m, magic, half;
	__device__ explicit Modulus(unsigned modulus) : m((int)modulus), magic((int)(0x100000000ull / modulus)), half((int)(modulus - 1) / 2) {}
	// congruent to v, in [-m/2, 3m/2)
	__device__ __forceinline__ int carry(int v) const { return (int)((unsigned)v - (unsigned)__mulhi(v, magic) * (unsigned)m); }
	// sym_mod(v, m) (src/scheme2.rs): in [-(m-1)/2, (m-1)/2] for odd m, [-128, 127] for m = 256
	__device__ __forceinline__ int sym(int v) const {
		const int r = carry(v);
		return r > half ? r - m : r;
	}
};

// int8 values of the 128 accumulators packed 4 per register: value i in byte i % 4 of register i / 4
__device__ __forceinline__ int get_byte(const uint32_t (&packed)[32], int i) {
	return (int)(signed char)(packed[i / 4] >> (8 * (i % 4)));
}

__device__ __forceinline__ void set_byte(uint32_t (&packed)[32], int i, int v) {
	const int shift = 8 * (i % 4);
	packed[i / 4] = (packed[i / 4] & ~(0xFFu << shift)) | ((uint32_t)(v & 0xFF) << shift);
}

// the epilogue policies. Per tile: State start(l) (l: the tile's modulus; State: registers kept
// across the phases, and `mod`, a Modulus, when CARRY). Per phase F, after the phase's K loop:
// operator()(Phase<F>, State&, i, v) maps accumulator i (value v) in place; then, where
// stores(F), the mapped values are stored to destination(Phase<F>, State), a column-major m x n
// output (int8 or INT32 by the pointer's type)
struct Int32Out {
	static constexpr int PHASES = 1;
	static constexpr bool CARRY = false;
	__host__ __device__ static constexpr bool stores(int) { return true; }
	int* c;
	struct State {};
	__device__ State start(int) const { return State{}; }
	__device__ int operator()(Phase<0>, State&, int, int v) const { return v; }
	__device__ int* destination(Phase<0>, const State&) const { return c; }
};

struct ResidueOut {
	static constexpr int PHASES = 1;
	static constexpr bool CARRY = true;
	__host__ __device__ static constexpr bool stores(int) { return true; }
	signed char* out;
	const unsigned* moduli;
	long long plane_stride;
	struct State {
		Modulus mod;
		signed char* out;
	};
	__device__ State start(int l) const { return State{Modulus(moduli[l]), out + l * plane_stride}; }
	__device__ int operator()(Phase<0>, State& s, int, int v) const { return s.mod.sym(v); }
	__device__ signed char* destination(Phase<0>, const State& s) const { return s.out; }
};

struct Residue3mOut {
	static constexpr int PHASES = 3;
	static constexpr bool CARRY = true;
	__host__ __device__ static constexpr bool stores(int f) { return f > 0; }
	signed char *re, *im;
	const unsigned* moduli;
	long long plane_stride;
	struct State {
		Modulus mod;
		signed char *re, *im;
		uint32_t kept[32];  // 128 int8 residues, 4 per register
	};
	__device__ State start(int l) const { return State{Modulus(moduli[l]), re + l * plane_stride, im + l * plane_stride, {}}; }
	// keeps r1 = sym_mod(T1)
	__device__ int operator()(Phase<0>, State& s, int i, int v) const {
		set_byte(s.kept, i, s.mod.sym(v));
		return 0;
	}
	// Re = sym_mod(r1 - T2); keeps s = sym_mod(r1 + T2)
	__device__ int operator()(Phase<1>, State& s, int i, int v) const {
		const int r1 = get_byte(s.kept, i);
		set_byte(s.kept, i, s.mod.sym(r1 + v));
		return s.mod.sym(r1 - v);
	}
	__device__ signed char* destination(Phase<1>, const State& s) const { return s.re; }
	// Im = sym_mod(T3 - s)
	__device__ int operator()(Phase<2>, State& s, int i, int v) const { return s.mod.sym(v - get_byte(s.kept, i)); }
	__device__ signed char* destination(Phase<2>, const State& s) const { return s.im; }
};

struct Tile {
	int plane, m0, n0;
};

__device__ __forceinline__ Tile tile_of(int t, int tiles_m, int tiles_n) {
	constexpr int GROUP = 8;
	const int per_plane = tiles_m * tiles_n, plane = t / per_plane;
	t %= per_plane;
	const int group = t / (GROUP * tiles_n), first_m = group * GROUP;
	const int size = min(GROUP, tiles_m - first_m);
	const int in_group = t % (GROUP * tiles_n);
	return Tile{plane, (first_m + in_group % size) * BM, (in_group / size) * BN};
}

// `moduli`: the tile planes' count (the tensor maps hold Epilogue::PHASES planes per modulus)
template <typename Epilogue>
__device__ void persistent(const CUtensorMap* map_a, const CUtensorMap* map_b, int m, int n, int k, int moduli, const Epilogue& epilogue) {
	constexpr int PHASES = Epilogue::PHASES;
	extern __shared__ __align__(1024) uint8_t smem_raw[];
	const uint32_t base = ((uint32_t)__cvta_generic_to_shared(smem_raw) + 1023) & ~1023u;
	const uint32_t full = base + STAGES * STAGE_BYTES, empty = full + 8 * STAGES;
	const int tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN, tiles = moduli * tiles_m * tiles_n;
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
				for (int phase = 0; phase < PHASES; ++phase) {
					const int plane = PHASES * tile.plane + phase;
					for (int kb = 0; kb < blocks; ++kb, ++it) {
						const int s = it % STAGES;
						bar_wait(empty + 8 * s, ((it / STAGES) & 1) ^ 1);
						bar_expect(full + 8 * s, STAGE_BYTES);
						const uint32_t stage = base + s * STAGE_BYTES;
						tma_load3(stage, map_a, kb * BK, tile.m0, plane, full + 8 * s);
						tma_load3(stage + A_BYTES, map_b, kb * BK, tile.n0, plane, full + 8 * s);
					}
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
		typename Epilogue::State state = epilogue.start(tile.plane);
		// one K loop for every phase (a run-time phase loop: unrolled phases made ptxas spill)
#pragma unroll 1
		for (int f = 0; f < PHASES; ++f) {
			int d[128];
#pragma unroll
			for (int i = 0; i < 128; ++i) d[i] = 0;
			// one K block: wait for its stage, 4 wgmma, release the stage
			auto block = [&]() {
				const int s = it % STAGES;
				bar_wait(full + 8 * s, (it / STAGES) & 1);
				const uint32_t a = base + s * STAGE_BYTES + cw * 64 * 128, b = base + s * STAGE_BYTES + A_BYTES;
				wgmma_fence();
#pragma unroll
				for (int ks = 0; ks < BK / 32; ++ks) Wgmma<BN>::mma(d, descriptor_sw128(a + 32 * ks), descriptor_sw128(b + 32 * ks), 1);
				wgmma_commit();
				wgmma_wait<0>();
				if (threadIdx.x % 128 == 0) bar_arrive(empty + 8 * s);
				++it;
			};
			if constexpr (!Epilogue::CARRY) {
				for (int kb = 0; kb < blocks; ++kb) block();
			} else {
				// K in chunks of CHUNK_BLOCKS blocks, the accumulators carried mod m between chunks
				for (int kb0 = 0; kb0 < blocks; kb0 += CHUNK_BLOCKS) {
					if (kb0 != 0) {
#pragma unroll
						for (int i = 0; i < 128; ++i) d[i] = state.mod.carry(d[i]);
					}
					const int end = min(blocks, kb0 + CHUNK_BLOCKS);
					if constexpr (PHASES == 1) {
						for (int kb = kb0; kb < end; ++kb) block();
					} else {
						// not unrolled: unrolled, the 3M kernel spilled
#pragma unroll 1
						for (int kb = kb0; kb < end; ++kb) block();
					}
				}
			}
			// the epilogue of phase F: maps the accumulators in place, then stores them where the
			// phase stores. The fragment of m64n256: accumulator 4 j + q at row r + 8 (q / 2),
			// column col + 8 j + q % 2. The coordinates pass through an opaque move: computed
			// here, not hoisted out of the phase and tile loops, where they held registers through
			// the K loops and made ptxas spill
			auto fragment = [&](auto phase) {
#pragma unroll
				for (int i = 0; i < 128; ++i) d[i] = epilogue(phase, state, i, d[i]);
				if constexpr (Epilogue::stores(decltype(phase)::value)) {
					const auto out = epilogue.destination(phase, state);
					const int r = opaque(tile.m0 + 64 * cw + 16 * w + l / 4), col = opaque(tile.n0 + 2 * (l % 4)), ld = opaque(m);
					const bool rows[2] = {r < ld, r + 8 < ld};
					long long idx = (long long)col * ld + r;
#pragma unroll
					for (int j = 0; j < BN / 8; ++j, idx += 8ll * ld) {
						const bool cols[2] = {col + 8 * j < n, col + 8 * j + 1 < n};
#pragma unroll
						for (int q = 0; q < 4; ++q) store_if(out + idx + (q % 2) * ld + 8 * (q / 2), d[4 * j + q], rows[q / 2] && cols[q % 2]);
					}
				}
			};
			with_phase<PHASES>(f, fragment);
		}
	}
}

}  // namespace

// the plain persistent INT8 GEMM: C = A B^T (one plane)
extern "C" __global__ void __launch_bounds__(384, 1)
    igemm_v2(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int* c, int m, int n, int k) {
	persistent(&map_a, &map_b, m, n, k, 1, Int32Out{c});
}

// the fused scheme II product of real operands: for every modulus l < p (plane l of the maps),
// the residue plane sym_mod(A_l B_l^T, moduli[l]) as int8 at out + l m n; exact for any k
// (< 2^31 - 128)
extern "C" __global__ void __launch_bounds__(384, 1)
    scheme2_residues_v1(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, signed char* out,
                        const unsigned* moduli, int m, int n, int k, int p) {
	persistent(&map_a, &map_b, m, n, k, p, ResidueOut{out, moduli, (long long)m * n});
}

// the fused scheme II product of complex operands by 3M: for every modulus l < p (planes 3l, 3l+1,
// 3l+2 of the maps: re, im, re + im residues), Re = sym_mod(T1 - T2) at re + l m n and
// Im = sym_mod(T3 - T1 - T2) at im + l m n as int8; exact for any k (< 2^31 - 128)
extern "C" __global__ void __launch_bounds__(384, 1)
    scheme2_residues_3m_v1(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, signed char* re,
                           signed char* im, const unsigned* moduli, int m, int n, int k, int p) {
	persistent(&map_a, &map_b, m, n, k, p, Residue3mOut{re, im, moduli, (long long)m * n});
}

// the integer residue arithmetic of the fused epilogues (Modulus) against integer %, for every
// 32-bit input and every modulus: counts the inputs whose carry leaves [-m/2, 3m/2) or is not
// congruent, or whose symmetric residue differs from sym_mod's
extern "C" __global__ void __launch_bounds__(256) modulus_exhaustive(const unsigned* moduli, int p, unsigned long long* mismatches) {
	unsigned long long wrong = 0;
	const unsigned long long stride = (unsigned long long)gridDim.x * 256;
	for (int l = 0; l < p; ++l) {
		const Modulus mod(moduli[l]);
		const long long mm = moduli[l];
		for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < (1ull << 32); i += stride) {
			const int v = (int)(unsigned)i;
			long long r = (long long)v % mm;
			if (r < 0) r += mm;
			const long long expected = r > (mm - 1) / 2 ? r - mm : r;
			const long long c = mod.carry(v);
			const bool carry_ok = 2 * c >= -mm && 2 * c < 3 * mm && (c - v) % mm == 0;
			wrong += !carry_ok || mod.sym(v) != expected;
		}
	}
	atomicAdd(mismatches, wrong);
}
