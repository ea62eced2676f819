// emugemm: the split of an operand into int8 planes, K-major, zero for k <= h < kpad, in one of
// two layouts:
//   Planar       plane t, row r at out[(t * rows + r) * kpad + h] (the residues: staged in shared
//                memory and written by one TMA store per tile, StagedPlanar)
//   Interleaved  (fused scheme I, cuda/scheme1.cu) row r at out[r * p * kpad], K chunk c = h / 32
//                holding its p planes one after the other: plane t at byte (c p + t) 32 + h % 32
// one template kernel moves a tile of 1024 elements (32 x 32 real, 16 x 64 complex: rows x k)
// through shared memory: the loads are coalesced along the input's contiguous dimension, then each
// thread turns 4 consecutive elements of one row into one 32-bit store per plane. what is written per
// element comes from the operation:
//   Digits   scheme I balanced digits of rint(x 2^s_r) (real part, imaginary part, or -imaginary)
//   Residues scheme II residues of trunc(x 2^s_r) for the first p moduli (complex: re, im, re+im),
//            each modulus a compile-time constant (residue_rep: 3 FP64 operations and an integer one, no division); int8
//            representatives, congruent to the oracle's symmetric residues (the products and
//            everything after them depend on the values modulo m only)
//   Coarse   accurate scaling: ceil(|re| 2^s0) + ceil(|im| 2^s0)
#include "common.cuh"
#include "wgmma.cuh"

namespace {

// the tile a block of element type T splits: ROWS x K elements (4 per thread). Complex: 16 x 64,
// so that each plane row of the staged TMA store is 64 bytes (two sectors per L2 request), measured
// 1.1x faster than 32 x 32 for c64; real: 32 x 32, measured 1.05x faster than 16 x 64 for f64
// (docs/PERF.md, issue 4 step 7). `Job::TILE` in src/gpu/pipeline.rs launches the same shape
template <typename T>
struct Tile {
	static constexpr int ROWS = emu::Elem<T>::complex ? 16 : 32, K = 1024 / ROWS, STRIDE = K + 1;
};

// four consecutive elements of row r: real and imaginary parts
struct Quad {
	double re[4], im[4];
};

struct Digits {
	int p, part;  // part: 0 real, 1 imaginary, 2 negated imaginary
	const int* shifts;
	__device__ void operator()(signed char* dst, long long plane, int r, const Quad& x) const {
		signed char d[4][8];
#pragma unroll
		for (int j = 0; j < 4; ++j) {
			const double v = part == 0 ? x.re[j] : (part == 1 ? x.im[j] : -x.im[j]);
			emu::balanced_digits(emu::to_integer_rint(v, shifts[r]), p, d[j]);
		}
#pragma unroll
		for (int t = 0; t < 8; ++t)
			if (t < p) *(unsigned*)(dst + t * plane) = emu::pack4(d[0][t], d[1][t], d[2][t], d[3][t]);
	}
};

// the residue planes of 4 values for the first p moduli (complex: re, im, re + im per modulus),
// moduli outermost so that the 4 values' arithmetic interleaves
template <bool COMPLEX>
__device__ __forceinline__ void residue_planes(signed char* dst, long long plane, int p, const emu::Split48 (&re)[4],
                                               const emu::Split48 (&im)[4]) {
	// dst walks the planes: re (, im, re + im) of each modulus in turn
#define EMU_RESIDUE_PLANES(L, M)                                                                                          \
	if (L < p) {                                                                                                          \
		int a[4], b[4];                                                                                                   \
		_Pragma("unroll") for (int j = 0; j < 4; ++j) a[j] = emu::residue_rep<L, M>(re[j]);                                  \
		*(unsigned*)dst = emu::pack4(a[0], a[1], a[2], a[3]);                                                             \
		dst += plane;                                                                                                     \
		if (COMPLEX) {                                                                                                    \
			_Pragma("unroll") for (int j = 0; j < 4; ++j) b[j] = emu::residue_rep<L, M>(im[j]);                              \
			*(unsigned*)dst = emu::pack4(b[0], b[1], b[2], b[3]);                                                         \
			_Pragma("unroll") for (int j = 0; j < 4; ++j) b[j] = emu::sym_small<M>((signed char)a[j] + (signed char)b[j]); \
			*(unsigned*)(dst + plane) = emu::pack4(b[0], b[1], b[2], b[3]);                                               \
			dst += 2 * plane;                                                                                             \
		}                                                                                                                 \
	}
	EMU_MODULI(EMU_RESIDUE_PLANES)
#undef EMU_RESIDUE_PLANES
}

template <bool COMPLEX>
struct Residues {
	int p;
	const int* shifts;
	__device__ void operator()(signed char* dst, long long plane, int r, const Quad& x) const {
		emu::Split48 re[4], im[4];
#pragma unroll
		for (int j = 0; j < 4; ++j) re[j] = emu::split48(trunc(emu::scale_pow2(x.re[j], shifts[r])));
#pragma unroll
		for (int j = 0; j < 4; ++j) im[j] = emu::split48(COMPLEX ? trunc(emu::scale_pow2(x.im[j], shifts[r])) : 0.0);
		residue_planes<COMPLEX>(dst, plane, p, re, im);
	}
};

struct Coarse {
	const int* s0;
	__device__ void operator()(signed char* dst, long long, int r, const Quad& x) const {
		int c[4];
#pragma unroll
		for (int j = 0; j < 4; ++j) c[j] = emu::coarse_magnitude(x.re[j], s0[r]) + emu::coarse_magnitude(x.im[j], s0[r]);
		*(unsigned*)dst = emu::pack4(c[0], c[1], c[2], c[3]);
	}
};

// where the planes of element (r, h) go: straight to global memory (Planar, Interleaved: the
// destination of its plane 0 and the distance between planes), or through shared memory
// (StagedPlanar). dst() takes the element's place in the tile too (rl, hl) and the block's
// dynamic shared memory; finish() runs once per block after every thread has written its planes
struct Planar {
	static constexpr bool STAGED = false;
	int rows;
	long long kpad;
	signed char* out;
	__device__ bool skip(int r, int h) const { return r >= rows || h >= kpad; }
	__device__ signed char* dst(int r, int h, int, int, signed char*) const { return out + (long long)r * kpad + h; }
	__device__ long long plane() const { return (long long)rows * kpad; }
	__device__ void finish(signed char*, int, int) const {}
};

struct Interleaved {
	static constexpr bool STAGED = false;
	int rows, p;
	long long kpad;
	signed char* out;
	__device__ bool skip(int r, int h) const { return r >= rows || h >= kpad; }
	__device__ signed char* dst(int r, int h, int, int, signed char*) const {
		return out + ((long long)r * kpad + (h & ~31)) * p + (h & 31);
	}
	__device__ long long plane() const { return 32; }
	__device__ void finish(signed char*, int, int) const {}
};

// the Planar layout through shared memory: the tile's planes staged as [plane][rows][TILE_K bytes],
// then written by one TMA store of the box (TILE_K bytes, rows, all planes) that clips what lies
// outside the planes (rows >= rows, K >= kpad): no per-plane address arithmetic, no scattered
// 4-byte stores
template <typename T>
struct StagedPlanar {
	static constexpr int TILE_K = Tile<T>::K;
	static constexpr bool STAGED = true;
	const CUtensorMap* map;
	__device__ bool skip(int, int) const { return false; }
	__device__ signed char* dst(int, int, int rl, int hl, signed char* stage) const { return stage + rl * TILE_K + hl; }
	__device__ long long plane() const { return Tile<T>::ROWS * TILE_K; }
	__device__ void finish(signed char* stage, int r0, int h0) const {
		using namespace emu::hopper;
		fence_async_shared();
		__syncthreads();
		if (threadIdx.x == 0 && threadIdx.y == 0) {
			tma_store3(map, smem_address(stage), h0, r0, 0);
			bulk_store_wait_read();
		}
	}
};

// the column of tile element (rl, hl) in shared memory, for tiles TILE_K wide: swizzled (hl ^ f,
// f = ((hl >> 4) & 3) 64 / TILE_K) so that the quads (4 consecutive elements per thread, TILE_K / 4
// threads per row) are read without bank conflicts
template <int TILE_K>
__device__ __forceinline__ int swizzle_of(int hl) { return ((hl >> 4) & 3) * (64 / TILE_K); }

template <typename T, typename Layout, typename Op>
__device__ void split_tile(const T* x, int rows, int k, long long rs, long long cs, const Layout& layout, const Op& op) {
	using E = emu::Elem<T>;
	// the input tile, and after it has been read the staged output planes (StagedPlanar: at least
	// as large as the tile, see split_residues in src/gpu/pipeline.rs)
	extern __shared__ __align__(128) double smem[];
	constexpr int TILE_ROWS = Tile<T>::ROWS, TILE_K = Tile<T>::K, TILE_STRIDE = Tile<T>::STRIDE;
	double(*s_re)[TILE_STRIDE] = (double(*)[TILE_STRIDE])smem;
	double(*s_im)[TILE_STRIDE] = (double(*)[TILE_STRIDE])(smem + TILE_ROWS * TILE_STRIDE);
	const int r0 = blockIdx.y * TILE_ROWS, h0 = blockIdx.x * TILE_K;
	const int tid = threadIdx.y * 32 + threadIdx.x;
	const bool rows_contiguous = rs == 1;
	// each thread loads 4 elements (consecutive threads along the input's contiguous dimension),
	// all 4 loads in flight before the first store
	double re[4], im[4];
	int at[4][2];
#pragma unroll
	for (int t = 0; t < 4; ++t) {
		const int e = 256 * t + tid;
		const int rl = rows_contiguous ? e % TILE_ROWS : e / TILE_K, hl = rows_contiguous ? e / TILE_ROWS : e % TILE_K;
		const int r = r0 + rl, h = h0 + hl;
		at[t][0] = rl;
		at[t][1] = hl;
		re[t] = 0.0;
		im[t] = 0.0;
		if (r < rows && h < k) E::load(x, (long long)r * rs + (long long)h * cs, re[t], im[t]);
	}
#pragma unroll
	for (int t = 0; t < 4; ++t) {
		const bool finite = emu::finite(re[t]) && emu::finite(im[t]);
		const int column = at[t][1] ^ swizzle_of<TILE_K>(at[t][1]);
		s_re[at[t][0]][column] = finite ? re[t] : 0.0;
		if (E::complex) s_im[at[t][0]][column] = finite ? im[t] : 0.0;
	}
	__syncthreads();
	// TILE_K / 4 threads per row, 4 consecutive elements each, element j at column hl + (j ^ f)
	// (swizzled)
	const int rl = tid / (TILE_K / 4), hl = 4 * (tid % (TILE_K / 4)), f = swizzle_of<TILE_K>(hl);
	const int r = r0 + rl, h = h0 + hl;
	Quad quad;
#pragma unroll
	for (int j = 0; j < 4; ++j) {
		quad.re[j] = s_re[rl][hl + (j ^ f)];
		quad.im[j] = E::complex ? s_im[rl][hl + (j ^ f)] : 0.0;
	}
	// the tile has been read: the staged planes may overwrite it
	if (Layout::STAGED) __syncthreads();
	// kpad is a multiple of 16: the 4 elements are all in or all out
	if (!layout.skip(r, h)) op(layout.dst(r, h, rl, hl, (signed char*)smem), layout.plane(), min(r, rows - 1), quad);
	layout.finish((signed char*)smem, r0, h0);
}

}  // namespace

#define EMU_SPLIT(NAME, T)                                                                                                 \
	extern "C" __global__ void __launch_bounds__(256) split_digits_##NAME(const T* x, int rows, int k, long long rs,       \
	                                                                      long long cs, long long kpad, signed char* out,  \
	                                                                      const int* shifts, int p, int part) {            \
		split_tile<T>(x, rows, k, rs, cs, Planar{rows, kpad, out}, Digits{p, part, shifts});                             \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) split_digits_interleaved_##NAME(                                     \
	    const T* x, int rows, int k, long long rs, long long cs, long long kpad, signed char* out, const int* shifts, int p, \
	    int part) {                                                                                                         \
		split_tile<T>(x, rows, k, rs, cs, Interleaved{rows, p, kpad, out}, Digits{p, part, shifts});                     \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) split_residues_##NAME(                                               \
	    const T* x, int rows, int k, long long rs, long long cs, long long, const __grid_constant__ CUtensorMap map,         \
	    const int* shifts, int p) {                                                                                         \
		split_tile<T>(x, rows, k, rs, cs, StagedPlanar<T>{&map}, Residues<emu::Elem<T>::complex>{p, shifts});               \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) split_coarse_##NAME(const T* x, int rows, int k, long long rs,       \
	                                                                      long long cs, long long kpad, signed char* out,  \
	                                                                      const int* s0) {                                 \
		split_tile<T>(x, rows, k, rs, cs, Planar{rows, kpad, out}, Coarse{s0});                                           \
	}
EMU_FOR_EACH_TYPE(EMU_SPLIT)
