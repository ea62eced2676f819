// emugemm: the INT8 wgmma GEMM chassis: K-major int8 planes loaded by TMA with 128-byte
// swizzle into an mbarrier ring, one producer warpgroup and two consumer warpgroups, 128 x BN
// tiles of m64nBNk32 wgmma (exact INT32 accumulation), a persistent grid, optionally in clusters
// of two CTAs along M that share (multicast) the B tile. The variants (BN, ring depth, cluster)
// are instances of one template (Config), each entry point instantiated for each of them by one
// macro (EMU_CHASSIS); src/gpu/kernels/wgmma_config.rs picks one per product. The ring, the
// warp-specialised split and the tile walk are cuda/sm90_persistent.cuh's, shared with fused scheme I.
// Each of these measures faster than its alternative: the 128-byte swizzle (against plain loads
// of an unswizzled layout), the persistent grid (against one CTA per tile), and the table of tile
// shapes (against fixed 128 x 256 tiles).
#include <stdint.h>
#include <cuda.h>
#include "common.cuh"
#include "sm90_persistent.cuh"
#include "wgmma.cuh"

namespace {

using namespace emu::hopper;

// a variant of the chassis: BM x BN tiles (BM = 2 consumer warpgroups x 64 rows) in K blocks of
// BK = 128 bytes (one 128-byte swizzle atom per row), a ring of STAGES stages, CLUSTER CTAs per
// cluster (1, or 2 along M sharing the B tile)
template <int BN_, int STAGES_, int CLUSTER_>
struct Config {
	static constexpr int BM = 128, BN = BN_, BK = 128, STAGES = STAGES_, CLUSTER = CLUSTER_;
	static constexpr int A_BYTES = BM * BK, B_BYTES = BN * BK, STAGE_BYTES = A_BYTES + B_BYTES;
	// accumulators per consumer thread: a warpgroup's 64 x BN INT32 fragment over 128 threads
	static constexpr int ACC = BN / 2;
	// the B rows one CTA loads per stage: all of them, or its half, multicast to both CTAs
	static constexpr int B_ROWS = BN / CLUSTER;
	// the staging of int8 output (TileStore<Cfg, true>): per consumer warpgroup 128 columns of its 64 rows,
	// a column every STAGING_STRIDE = 64 + 4 bytes (so that the byte stores of a warp, 4 columns
	// 2 apart, fall in different banks)
	static constexpr int STAGING_COLS = 128, STAGING_STRIDE = 68, STAGING_BYTES = STAGING_COLS * STAGING_STRIDE;
	// the ring of stages (shared by the CLUSTER CTAs' multicast) and the walk of the tiles
	using Ring = emu::hopper::Ring<STAGES, STAGE_BYTES, CLUSTER>;
	using Schedule = emu::hopper::Schedule<BM, BN, CLUSTER>;
	// the dynamic shared memory (src/gpu/kernels/wgmma_config.rs: Variant::smem): the ring (its stages,
	// alignment slack and barriers: ring_bytes); and with the two warpgroups' staging after it, for
	// the kernels whose epilogue is STAGED
	static constexpr int SMEM = Ring::BYTES, STAGED_SMEM = SMEM + 2 * STAGING_BYTES;
	static_assert(BN % 128 == 0 && BN <= 256, "BN: a wgmma width the epilogue covers in rounds of 128 columns");
	static_assert(CLUSTER == 1 || CLUSTER == 2, "clusters of 1 or 2 CTAs along M");
	static_assert(STAGED_SMEM <= SMEM_LIMIT, "the ring and the staging must fit the dynamic shared memory of a block");
};

}  // namespace

// the persistent chassis (cuda/sm90_persistent.cuh): the clusters (of Config::CLUSTER CTAs; a single CTA
// is a cluster of one) walk the tile units (Schedule: a unit is CLUSTER vertically adjacent tiles,
// one per CTA of the cluster, rasterised in groups of 8 tile rows along M), one plane of units per
// modulus of scheme II, modulus outermost. The producer's ring runs across units (a consumer's
// epilogue overlaps the next tile's loads). Each tile runs Epilogue::PHASES phases (a compile-time
// count): phase f accumulates the product of planes PHASES l + f of A and B (l the tile's modulus)
// into the same INT32 accumulators, zeroed at the start of every phase, and hands them to the
// epilogue, which is told the phase and keeps what it needs between phases in its per-tile State
// (registers). The producer loads, unit after unit, the phases' K blocks in order, one ring across
// phases and units. With Epilogue::CARRY, every CHUNK_BLOCKS K blocks the accumulators are replaced
// by small values congruent mod the tile's modulus (Modulus::carry), so that any K is exact (only
// the value mod m matters; see CHUNK_BLOCKS).
//
// Clusters of two (multicast): the CTAs of a cluster compute the tiles (m0, n0) and (m0 + 128, n0)
// of one plane and share the B tile: each loads its A tile and half of the B tile (BN / 2 rows,
// rank r the r-th half) multicast into both CTAs' stage, so that each CTA's full barrier of a stage
// completes on A_BYTES + B_BYTES. A stage is refilled only once the consumers of both CTAs released
// it: every consumer warpgroup arrives on the empty barrier of both CTAs (count 2 x 2). A cluster
// barrier after the barriers' initialisation (Ring::start: no multicast lands before the peer's
// barriers exist) and before exit (Ring::finish: no CTA leaves while its peer may still arrive on
// its barriers). With an odd count of tile rows, the second CTA of the last unit row holds a tile
// past m: it loads its half of B (its peer needs it) but no A, computes on stale A and stores
// nothing (every store is predicated on the row being < m).
//
// The epilogues:
//   Int32Out     C (m x n, INT32, column-major), one modulus, one phase (the plain GEMM; exact
//                while K 128^2 < 2^31)
//   ResidueOut   real scheme II: sym_mod(A_l B_l^T, m_l) as int8 at out + l stride
//   Residue3mOut complex scheme II (3M): phases T1 = Ar Br^T, T2 = Ai Bi^T, T3 = (Ar+Ai)(Br+Bi)^T
//                of planes 3l, 3l+1, 3l+2; Re = sym_mod(T1 - T2) at re + l stride and
//                Im = sym_mod(T3 - T1 - T2) at im + l stride, through int8 residues kept in
//                registers: after phase 0 r1 = sym_mod(T1); after phase 1 Re = sym_mod(r1 - T2)
//                and s = sym_mod(r1 + T2); after phase 2 Im = sym_mod(T3 - s)
namespace {

// K blocks per exact chunk: 1023 x 128 = 130,944 products of int8 residues (|x| <= 128, so
// |x y| <= 2^14) on top of a carried value (|c| < 384, Modulus::carry) stay below 2^31, with
// room for the 3M epilogue's +- kept residue (|r| <= 128): 384 + 128 + 130,944 x 2^14 =
// 2,145,387,008 < 2^31 - 1 (checked for each Config's BK in persistent)
constexpr int CHUNK_BLOCKS = 1023;

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
// 32-bit temporaries: emu::sym_mod_exact's double arithmetic here makes ptxas spill); checked
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

// int8 values of N accumulators packed 4 per register: value i in byte i % 4 of register i / 4
template <int N>
__device__ __forceinline__ int get_byte(const uint32_t (&packed)[N], int i) {
	return (int)(signed char)(packed[i / 4] >> (8 * (i % 4)));
}

template <int N>
__device__ __forceinline__ void set_byte(uint32_t (&packed)[N], int i, int v) {
	const int shift = 8 * (i % 4);
	packed[i / 4] = (packed[i / 4] & ~(0xFFu << shift)) | ((uint32_t)(v & 0xFF) << shift);
}

// the epilogue policies. Per tile: State start(l) (l: the tile's modulus; State: registers kept
// across the phases, and `mod`, a Modulus, when CARRY). Per phase F, after the phase's K loop:
// operator()(Phase<F>, State&, i, v) maps accumulator i (value v) in place; then, where
// stores(F), the mapped values are stored to destination(Phase<F>, State), a column-major m x n
// output (int8 or INT32 by the pointer's type), through the warpgroup's staging where STAGED
// (TileStore: a warp's byte stores from the fragment write 8 bytes in each of 4 columns, partial
// sectors; staged, the fused real product runs 6-7% faster on an H100 at n = 4096, 1-2.5% on an
// H200, and faster in a single CTA than in the multicast pair; the 3M kernel, whose two stores per
// tile run 1% slower staged, stores straight)
struct Int32Out {
	static constexpr int PHASES = 1;
	static constexpr bool CARRY = false, STAGED = false;
	__host__ __device__ static constexpr bool stores(int) { return true; }
	int* c;
	struct State {};
	__device__ State start(int) const { return State{}; }
	__device__ int operator()(Phase<0>, State&, int, int v) const { return v; }
	__device__ int* destination(Phase<0>, const State&) const { return c; }
};

struct ResidueOut {
	static constexpr int PHASES = 1;
	static constexpr bool CARRY = true, STAGED = true;
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

// ACC: the accumulators per thread (Config::ACC), whose int8 residues State keeps
template <int ACC>
struct Residue3mOut {
	static constexpr int PHASES = 3;
	static constexpr bool CARRY = true, STAGED = false;
	__host__ __device__ static constexpr bool stores(int f) { return f > 0; }
	signed char *re, *im;
	const unsigned* moduli;
	long long plane_stride;
	struct State {
		Modulus mod;
		signed char *re, *im;
		uint32_t kept[ACC / 4];  // ACC int8 residues, 4 per register
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

// the producer (one thread): for every unit (one modulus per plane of the walk), phase and K
// block, waits for the stage to be free in every CTA of the cluster, then loads its A tile (when
// inside m) and its B rows into it
template <typename Cfg, int PHASES>
__device__ void produce(const CUtensorMap* map_a, const CUtensorMap* map_b, int m, int n, int blocks, const typename Cfg::Schedule& sched,
                        const typename Cfg::Ring& ring) {
	int it = 0;
	for (int u = sched.first; u < sched.units; u += sched.stride) {
		if (sched.skips(u)) continue;
		const Tile tile = sched.tile(u);
		const bool inside = tile.m0 < m;
		// this CTA's B rows; a half entirely past n loads the first half's rows instead (never
		// stored: its columns are >= n), so that no TMA box lies wholly outside the tensor
		const int b_row = tile.n0 + sched.rank * Cfg::B_ROWS < n ? tile.n0 + sched.rank * Cfg::B_ROWS : tile.n0;
		for (int phase = 0; phase < PHASES; ++phase) {
			const int plane = PHASES * tile.plane + phase;
			for (int kb = 0; kb < blocks; ++kb, ++it) {
				const int s = ring.slot(it);
				const uint32_t stage = ring.stage(s), bar = ring.full(s);
				ring.acquire(it, inside ? Cfg::STAGE_BYTES : Cfg::B_BYTES);
				if (inside) tma_load3(stage, map_a, kb * Cfg::BK, tile.m0, plane, bar);
				const uint32_t b_dst = stage + Cfg::A_BYTES + sched.rank * Cfg::B_ROWS * Cfg::BK;
				if constexpr (Cfg::CLUSTER == 1) tma_load3(b_dst, map_b, kb * Cfg::BK, b_row, plane, bar);
				else tma_load3_multicast(b_dst, map_b, kb * Cfg::BK, b_row, plane, bar, (1 << Cfg::CLUSTER) - 1);
			}
		}
	}
}

// how a phase's mapped accumulators reach the output: through the warpgroup's staging
// (STAGED, int8 only; below), or straight from the fragment (a warp store writes 8 bytes of 4
// columns for int8, 32 bytes of 4 columns for INT32: whole sectors)
template <typename Cfg, bool STAGED>
struct TileStore {
	template <typename T, int ACC>
	__device__ static void store(uint32_t, T* out, const Tile& tile, int cw, int m, int n, const int (&d)[ACC]) {
		const int w = (threadIdx.x % 128) / 32, l = threadIdx.x % 32;
		const int r = opaque(tile.m0 + 64 * cw + 16 * w + l / 4), col = opaque(tile.n0 + 2 * (l % 4)), ld = opaque(m);
		const bool rows[2] = {r < ld, r + 8 < ld};
		long long idx = (long long)col * ld + r;
#pragma unroll
		for (int j = 0; j < Cfg::BN / 8; ++j, idx += 8ll * ld) {
			const bool cols[2] = {col + 8 * j < n, col + 8 * j + 1 < n};
#pragma unroll
			for (int q = 0; q < 4; ++q) store_if(out + idx + (q % 2) * ld + 8 * (q / 2), d[4 * j + q], rows[q / 2] && cols[q % 2]);
		}
	}
};

// staged: a consumer warpgroup's int8 values of its 64 x BN tile part (d, the m64nBN fragment:
// accumulator 4 j + q at row r + 8 (q / 2), column c + 8 j + q % 2, r = 16 w + l / 4, c = 2 (l % 4))
// to the column-major m x n output `out` (leading dimension m) through its staging in shared memory, in
// rounds of 128 columns: byte stores into the staging tile, a warpgroup barrier, then 4-byte
// stores of whole column words (a warp writes 64 contiguous bytes of 2 columns per store, where
// the byte stores of the fragment wrote 8 bytes of 4 columns), byte stores where m is not a
// multiple of 4 or a word crosses row m, a barrier before the staging is written again
template <typename Cfg>
struct TileStore<Cfg, true> {
	template <int ACC>
	__device__ static void store(uint32_t staging, signed char* out, const Tile& tile, int cw, int m, int n, const int (&d)[ACC]) {
		constexpr int STRIDE = Cfg::STAGING_STRIDE;
		const int t = threadIdx.x % 128, w = t / 32, l = t % 32;
		const uint32_t fragment_at = staging + (2 * (l % 4)) * STRIDE + 16 * w + l / 4;
#pragma unroll
		for (int round = 0; round < Cfg::BN / 128; ++round) {
#pragma unroll
			for (int j = 0; j < 16; ++j)
#pragma unroll
				for (int q = 0; q < 4; ++q) st_shared_b8(fragment_at + (8 * j + q % 2) * STRIDE + 8 * (q / 2), d[4 * (16 * round + j) + q]);
			named_barrier(1 + cw, 128);
			const int row0 = opaque(tile.m0 + 64 * cw), col0 = opaque(tile.n0 + 128 * round), ld = opaque(m);
			const bool words = ld % 4 == 0;
#pragma unroll 4
			for (int it = 0; it < 16; ++it) {
				// word `word` (rows 4 word ..) of column `col`: a warp takes 2 columns
				const int g = 128 * it + t, col = g / 16, word = g % 16, row = row0 + 4 * word;
				const uint32_t v = ld_shared_b32(staging + col * STRIDE + 4 * word);
				signed char* const at = out + (long long)(col0 + col) * ld + row;
				if (col0 + col < n) {
					if (words && row + 4 <= ld) {
						*reinterpret_cast<uint32_t*>(at) = v;
					} else {
#pragma unroll
						for (int b = 0; b < 4; ++b) store_if(at + b, (int)(v >> (8 * b)), row + b < ld);
					}
				}
			}
			named_barrier(1 + cw, 128);
		}
	}
};

// a consumer warpgroup (cw: 0 or 1, the tile's rows 64 cw ...): for every unit, its tile's phases
// (K loop, then the epilogue of the phase)
template <typename Cfg, typename Epilogue>
__device__ void consume(int m, int n, int blocks, const typename Cfg::Schedule& sched, const typename Cfg::Ring& ring, const Epilogue& epilogue) {
	constexpr int PHASES = Epilogue::PHASES, ACC = Cfg::ACC;
	const uint32_t staging = ring.end();
	const int cw = threadIdx.x / 128 - 1;
	int it = 0;
	for (int u = sched.first; u < sched.units; u += sched.stride) {
		if (sched.skips(u)) continue;
		const Tile tile = sched.tile(u);
		typename Epilogue::State state = epilogue.start(tile.plane);
		// one K loop for every phase (a run-time phase loop: unrolled phases make ptxas spill)
#pragma unroll 1
		for (int f = 0; f < PHASES; ++f) {
			int d[ACC];
#pragma unroll
			for (int i = 0; i < ACC; ++i) d[i] = 0;
			// one K block: wait for its stage, BK / 32 wgmma, release the stage
			auto block = [&]() {
				const int s = ring.wait(it);
				const uint32_t a = ring.stage(s) + cw * 64 * Cfg::BK, b = ring.stage(s) + Cfg::A_BYTES;
				wgmma_fence();
#pragma unroll
				for (int ks = 0; ks < Cfg::BK / 32; ++ks) Wgmma<Cfg::BN>::mma(d, descriptor_sw128(a + 32 * ks), descriptor_sw128(b + 32 * ks), 1);
				ring.retire(s);
				++it;
			};
			if constexpr (!Epilogue::CARRY) {
				for (int kb = 0; kb < blocks; ++kb) block();
			} else {
				// K in chunks of CHUNK_BLOCKS blocks, the accumulators carried mod m between chunks
				for (int kb0 = 0; kb0 < blocks; kb0 += CHUNK_BLOCKS) {
					if (kb0 != 0) {
#pragma unroll
						for (int i = 0; i < ACC; ++i) d[i] = state.mod.carry(d[i]);
					}
					const int end = min(blocks, kb0 + CHUNK_BLOCKS);
					if constexpr (PHASES == 1) {
						for (int kb = kb0; kb < end; ++kb) block();
					} else {
						// not unrolled: unrolled, the 3M kernel spills
#pragma unroll 1
						for (int kb = kb0; kb < end; ++kb) block();
					}
				}
			}
			// the epilogue of phase F: maps the accumulators in place, then stores them where the
			// phase stores: int8 through the warpgroup's staging (TileStore), INT32 straight
			// from the fragment of m64nBN (accumulator 4 j + q at row r + 8 (q / 2), column col +
			// 8 j + q % 2: 32-byte pieces of 4 columns per warp store, whole sectors). The
			// coordinates pass through an opaque move: computed here, not hoisted out of the phase
			// and tile loops, where they would hold registers through the K loops and make ptxas spill
			auto fragment = [&](auto phase) {
#pragma unroll
				for (int i = 0; i < ACC; ++i) d[i] = epilogue(phase, state, i, d[i]);
				if constexpr (Epilogue::stores(decltype(phase)::value)) {
					const auto out = epilogue.destination(phase, state);
					TileStore<Cfg, Epilogue::STAGED>::store(staging + cw * Cfg::STAGING_BYTES, out, tile, cw, m, n, d);
				}
			};
			with_phase<PHASES>(f, fragment);
		}
	}
}

// the kernel body: checks the launch (dynamic shared memory, cluster size: a wrong launch traps
// rather than computing garbage), starts the ring, then runs the producer warpgroup and the two
// consumer warpgroups. `moduli`: the tile planes' count (the tensor maps hold
// Epilogue::PHASES planes per modulus)
template <typename Cfg, typename Epilogue>
__device__ void persistent(const CUtensorMap* map_a, const CUtensorMap* map_b, int m, int n, int k, int moduli, int2 triangle,
                           const Epilogue& epilogue) {
	static_assert(!Epilogue::CARRY || 384ll + 128 + (long long)CHUNK_BLOCKS * Cfg::BK * 128 * 128 < (1ll << 31) - 1, "a chunk must be exact in INT32");
	if (dynamic_smem_size() < (uint32_t)(Epilogue::STAGED ? Cfg::STAGED_SMEM : Cfg::SMEM) || cluster_size() != Cfg::CLUSTER) __trap();
	const typename Cfg::Ring ring;
	const int tiles_n = (n + Cfg::BN - 1) / Cfg::BN, tiles_m = (m + Cfg::BM - 1) / Cfg::BM;
	const typename Cfg::Schedule sched(tiles_m, tiles_n, moduli, triangle.x, triangle.y);
	const int blocks = (k + Cfg::BK - 1) / Cfg::BK;
	ring.start();
	if (threadIdx.x < 128) {
		producer_registers();
		if (threadIdx.x == 0) produce<Cfg, Epilogue::PHASES>(map_a, map_b, m, n, blocks, sched, ring);
	} else {
		consumer_registers();
		consume<Cfg>(m, n, blocks, sched, ring, epilogue);
	}
	ring.finish();
}

}  // namespace

// the entry points of variant Config<BN, STAGES, CLUSTER>, named <entry>_bn<BN>_s<STAGES>_c<CLUSTER>
// (launched with cluster dimensions (CLUSTER, 1, 1), Config::SMEM bytes of dynamic shared memory
// (Config::STAGED_SMEM for scheme2_residues_*),
// B read in boxes of BN / CLUSTER rows):
//   igemm_*                the plain persistent INT8 GEMM: C = A B^T (one plane), INT32 out
//   scheme2_residues_*     the fused scheme II product of real operands: for every modulus l < p
//                          (plane l of the maps), the residue plane sym_mod(A_l B_l^T, moduli[l])
//                          as int8 at out + l stride; exact for any k (< 2^31 - 128)
//   scheme2_residues_3m_*  the fused scheme II product of complex operands by 3M: for every modulus
//                          l < p (planes 3l, 3l+1, 3l+2 of the maps: re, im, re + im residues),
//                          Re = sym_mod(T1 - T2) at re + l stride and Im = sym_mod(T3 - T1 - T2)
//                          at im + l stride as int8; exact for any k (< 2^31 - 128)
// The scheme II entry points compute, with triangle != 0, only the tiles that hold an entry of
// that triangle of the output (Schedule, cuda/sm90_persistent.cuh); the other tiles' residues are
// not written
#define EMU_CHASSIS(BN, STAGES, CLUSTER)                                                                                              \
	extern "C" __global__ void __launch_bounds__(384, 1) igemm_bn##BN##_s##STAGES##_c##CLUSTER(                                        \
	    const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int* c, int m, int n, int k) {          \
		persistent<Config<BN, STAGES, CLUSTER>>(&map_a, &map_b, m, n, k, 1, int2{0, 0}, Int32Out{c});                                             \
	}                                                                                                                                 \
	extern "C" __global__ void __launch_bounds__(384, 1) scheme2_residues_bn##BN##_s##STAGES##_c##CLUSTER(                             \
	    const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, signed char* out, long long stride,      \
	    const unsigned* moduli, int m, int n, int k, int p, int triangle, int first_col) {                                            \
		persistent<Config<BN, STAGES, CLUSTER>>(&map_a, &map_b, m, n, k, p, int2{triangle, first_col}, ResidueOut{out, moduli, stride});                         \
	}                                                                                                                                 \
	extern "C" __global__ void __launch_bounds__(384, 1) scheme2_residues_3m_bn##BN##_s##STAGES##_c##CLUSTER(                          \
	    const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, signed char* re, signed char* im,        \
	    long long stride, const unsigned* moduli, int m, int n, int k, int p, int triangle, int first_col) {                          \
		persistent<Config<BN, STAGES, CLUSTER>>(&map_a, &map_b, m, n, k, p, int2{triangle, first_col},                                \
		                                        Residue3mOut<Config<BN, STAGES, CLUSTER>::ACC>{re, im, moduli, stride});               \
	}

// the variants (src/gpu/kernels/wgmma_config.rs: VARIANTS lists the same)
EMU_CHASSIS(256, 4, 1)
EMU_CHASSIS(256, 4, 2)
EMU_CHASSIS(128, 6, 1)
EMU_CHASSIS(128, 6, 2)
#undef EMU_CHASSIS

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
