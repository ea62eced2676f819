// emugemm: the split of an operand into int8 planes, K-major, zero for k <= h < kpad, in one of
// two layouts:
//   Planar       plane t, row r at out[(t * rows + r) * kpad + h]
//   Interleaved  (fused scheme I, cuda/sm90_scheme1_fused.cu) row r at out[r * p * kpad], K chunk c = h / 32
//                holding its p planes one after the other: plane t at byte (c p + t) 32 + h % 32
// one template kernel moves a tile of ROWS x 256 elements (32 KiB) through shared memory: the loads
// are 16-byte vectors along the input's contiguous dimension (a tile column is 128 bytes, a tile
// row 256 elements), then each thread turns N consecutive elements of one row into one N-byte
// store per plane: N = 8 for real types, so that a warp writes 256 contiguous bytes of each plane
// (91-95% of the device copy's rate; 128 bytes per warp and plane stay near 80%); N = 4 for complex
// types, whose three planes per modulus need 118 registers at N = 8, which leaves 2 blocks per SM
// against 4 at N = 4, and runs slower. what is written per element comes from the operation:
//   Digits   scheme I balanced digits of rint(x 2^s_r) (real part, imaginary part, or -imaginary)
//   Residues scheme II residues of trunc(x 2^s_r) for the first p moduli (complex: re, im, re+im),
//            each modulus a compile-time constant (residue_rep: 3 FP64 operations and an integer
//            one, no division); int8 representatives, congruent to the oracle's symmetric residues
//            (the products and everything after them depend on the values modulo m only)
//   Coarse   accurate scaling: ceil(|re| 2^s0) + ceil(|im| 2^s0)
//   Window   the error bound's magnitudes floor(|x| 2^w), w = bits - 1 - e_max of the row
//            (src/bound.rs `magnitude`): plane 0 the real parts, plane 1 the imaginary parts
#include "common.cuh"

namespace {

// the tile a block of element type T splits: ROWS x K elements, ROWS = 128 / sizeof(T) (a tile
// column is 128 bytes), in 16-byte chunks of PER_CHUNK elements, 2048 chunks (32 KiB), N elements
// per thread and plane store. Row rr of the tile keeps its chunk c at rr * CHUNKS_PER_ROW + (c ^
// swizzle): the XOR spreads the chunks that one load or read instruction touches over all banks
// (see `chunk_at`). `Job::tiles` in src/gpu/product/job.rs launches the same shape
template <typename T>
struct Tile {
	static constexpr int K = 256, ROWS = 128 / sizeof(T), PER_CHUNK = 16 / sizeof(T), CHUNKS_PER_ROW = K / PER_CHUNK,
	                     CHUNKS = ROWS * CHUNKS_PER_ROW, PER_THREAD = CHUNKS / 256, N = emu::Elem<T>::complex ? 4 : 8;
	// where chunk c of tile row rr is kept: 8 consecutive chunks of a row (a quarter of a warp
	// reading its lanes' N elements, or loading a row) and the 8 row groups of one column (a warp
	// loading columns) each land in 8 different 16-byte bank groups
	__device__ static int chunk_at(int rr, int c) { return rr * CHUNKS_PER_ROW + (c ^ (((c >> 3) ^ (rr / PER_CHUNK)) & 7)); }
};
static_assert(Tile<double>::PER_THREAD == 8 && Tile<emu::c64>::PER_THREAD == 8, "2048 chunks, 8 per thread");

// N (4 or 8) consecutive elements of row r: real and imaginary parts
template <int N>
struct Elements {
	double re[N], im[N];
};

// the low bytes of N (4 or 8) ints at dst (N-byte aligned), the first at the lowest address
template <int N>
__device__ __forceinline__ void store_bytes(signed char* dst, const int (&b)[N]) {
	if constexpr (N == 4)
		*(unsigned*)dst = emu::pack4(b[0], b[1], b[2], b[3]);
	else
		*(uint2*)dst = make_uint2(emu::pack4(b[0], b[1], b[2], b[3]), emu::pack4(b[4], b[5], b[6], b[7]));
}

struct Digits {
	int p, part;  // part: 0 real, 1 imaginary, 2 negated imaginary
	const int* shifts;
	template <int N>
	__device__ void operator()(signed char* dst, long long plane, int r, const Elements<N>& x) const {
		long long v[N];
#pragma unroll
		for (int j = 0; j < N; ++j) v[j] = emu::to_integer_rint(part == 0 ? x.re[j] : (part == 1 ? x.im[j] : -x.im[j]), shifts[r]);
		// least significant digit (plane p - 1) first
		for (int t = p - 1; t >= 0; --t) {
			int d[N];
#pragma unroll
			for (int j = 0; j < N; ++j) d[j] = emu::balanced_digit(v[j]);
			store_bytes<N>(dst + t * plane, d);
		}
	}
};

// the residue planes of N values for the first p moduli (complex: re, im, re + im per modulus),
// moduli outermost so that the values' arithmetic interleaves
template <bool COMPLEX, int N>
__device__ __forceinline__ void residue_planes(signed char* dst, long long plane, int p, const emu::Split48 (&re)[N],
                                               const emu::Split48 (&im)[N]) {
	// dst walks the planes: re (, im, re + im) of each modulus in turn
#define EMU_RESIDUE_PLANES(L, M)                                                                                  \
	if (L < p) {                                                                                                  \
		int a[N], b[N];                                                                                           \
		_Pragma("unroll") for (int j = 0; j < N; ++j) a[j] = emu::residue_rep<L, M>(re[j]);                          \
		store_bytes<N>(dst, a);                                                                                   \
		dst += plane;                                                                                             \
		if (COMPLEX) {                                                                                            \
			_Pragma("unroll") for (int j = 0; j < N; ++j) b[j] = emu::residue_rep<L, M>(im[j]);                      \
			store_bytes<N>(dst, b);                                                                               \
			_Pragma("unroll") for (int j = 0; j < N; ++j) b[j] = emu::sym_small<M>((signed char)a[j] + (signed char)b[j]); \
			store_bytes<N>(dst + plane, b);                                                                       \
			dst += 2 * plane;                                                                                     \
		}                                                                                                         \
	}
	EMU_MODULI(EMU_RESIDUE_PLANES)
#undef EMU_RESIDUE_PLANES
}

template <bool COMPLEX>
struct Residues {
	int p;
	const int* shifts;
	template <int N>
	__device__ void operator()(signed char* dst, long long plane, int r, const Elements<N>& x) const {
		emu::Split48 re[N], im[N];
#pragma unroll
		for (int j = 0; j < N; ++j) re[j] = emu::split48(trunc(emu::scale_pow2(x.re[j], shifts[r])));
#pragma unroll
		for (int j = 0; j < N; ++j) im[j] = emu::split48(COMPLEX ? trunc(emu::scale_pow2(x.im[j], shifts[r])) : 0.0);
		residue_planes<COMPLEX, N>(dst, plane, p, re, im);
	}
};

template <bool COMPLEX>
struct Window {
	const int* e_max;
	int bits;
	template <int N>
	__device__ void operator()(signed char* dst, long long plane, int r, const Elements<N>& x) const {
		const int w = bits - 1 - e_max[r];
		int q[N];
#pragma unroll
		for (int j = 0; j < N; ++j) q[j] = (int)floor(emu::scale_pow2(fabs(x.re[j]), w));
		store_bytes<N>(dst, q);
		if (COMPLEX) {
#pragma unroll
			for (int j = 0; j < N; ++j) q[j] = (int)floor(emu::scale_pow2(fabs(x.im[j]), w));
			store_bytes<N>(dst + plane, q);
		}
	}
};

struct Coarse {
	const int* s0;
	template <int N>
	__device__ void operator()(signed char* dst, long long, int r, const Elements<N>& x) const {
		int c[N];
#pragma unroll
		for (int j = 0; j < N; ++j) c[j] = emu::coarse_magnitude(x.re[j], s0[r]) + emu::coarse_magnitude(x.im[j], s0[r]);
		store_bytes<N>(dst, c);
	}
};

// where the planes of element (r, h) go (h a multiple of N): the destination of its plane 0 and the
// distance between planes
struct Planar {
	int rows;
	long long kpad;
	signed char* out;
	__device__ signed char* dst(int r, int h) const { return out + (long long)r * kpad + h; }
	__device__ long long plane() const { return (long long)rows * kpad; }
};

struct Interleaved {
	int rows, p;
	long long kpad;
	signed char* out;
	__device__ signed char* dst(int r, int h) const { return out + ((long long)r * kpad + (h & ~31)) * p + (h & 31); }
	__device__ long long plane() const { return 32; }
};

// the 16-byte chunk of PER_CHUNK elements from element (r, h) on, along K (step = cs) or along
// the rows (step = rs), one element at a time: zero outside rows x k
template <typename T>
__device__ __forceinline__ uint4 load_elements(const T* x, int rows, int k, long long rs, long long cs, int r, int h, bool along_k) {
	union {
		uint4 chunk;
		T v[Tile<T>::PER_CHUNK];
	} u;
	u.chunk = make_uint4(0, 0, 0, 0);
#pragma unroll
	for (int e = 0; e < Tile<T>::PER_CHUNK; ++e) {
		const int re = along_k ? r : r + e, he = along_k ? h + e : h;
		if (re < rows && he < k) u.v[e] = x[(long long)re * rs + (long long)he * cs];
	}
	return u.chunk;
}

template <typename T, typename Layout, typename Op>
__device__ void split_tile(const T* x, int rows, int k, long long rs, long long cs, long long kpad, const Layout& layout,
                           const Op& op) {
	using E = emu::Elem<T>;
	using TileT = Tile<T>;
	constexpr int PER = TileT::PER_CHUNK, N = TileT::N, SEGMENTS = TileT::K / (32 * N);
	__shared__ __align__(128) uint4 tile[TileT::CHUNKS];
	const int r0 = blockIdx.x * TileT::ROWS, h0 = blockIdx.y * TileT::K, tid = threadIdx.x;
	// 16-byte vector loads along the contiguous dimension where the operand's alignment allows
	const bool aligned = ((uintptr_t)x & 15) == 0;
	const bool rows_contiguous = rs == 1 && cs != 1 && aligned && (cs * (long long)sizeof(T)) % 16 == 0;
	const bool k_vectors = cs == 1 && aligned && (rs * (long long)sizeof(T)) % 16 == 0;
	// every load of the thread in flight before the first shared store. Rows contiguous: chunk g is
	// rows 8-chunk group g % 8 of tile column g / 8 (a warp loads 4 columns of 128 bytes); otherwise
	// chunk c = g % CHUNKS_PER_ROW of tile row g / CHUNKS_PER_ROW (a warp loads 512 bytes of a row)
	uint4 v[TileT::PER_THREAD];
#pragma unroll
	for (int i = 0; i < TileT::PER_THREAD; ++i) {
		const int g = 256 * i + tid;
		if (rows_contiguous) {
			const int r = r0 + (g % 8) * PER, h = h0 + g / 8;
			v[i] = r + PER <= rows && h < k ? *(const uint4*)(x + r + (long long)h * cs) : load_elements(x, rows, k, rs, cs, r, h, false);
		} else {
			const int r = r0 + g / TileT::CHUNKS_PER_ROW, h = h0 + (g % TileT::CHUNKS_PER_ROW) * PER;
			v[i] = k_vectors && r < rows && h + PER <= k ? *(const uint4*)(x + (long long)r * rs + h) : load_elements(x, rows, k, rs, cs, r, h, true);
		}
	}
#pragma unroll
	for (int i = 0; i < TileT::PER_THREAD; ++i) {
		const int g = 256 * i + tid;
		if (rows_contiguous) {
			// the chunk's PER elements lie in PER tile rows, at slot hl % PER of chunk hl / PER
			const int rl = (g % 8) * PER, hl = g / 8;
			const T* elements = (const T*)&v[i];
#pragma unroll
			for (int e = 0; e < PER; ++e) ((T*)&tile[TileT::chunk_at(rl + e, hl / PER)])[hl % PER] = elements[e];
		} else {
			tile[TileT::chunk_at(g / TileT::CHUNKS_PER_ROW, g % TileT::CHUNKS_PER_ROW)] = v[i];
		}
	}
	__syncthreads();
	// the tile's rows in SEGMENTS of 32 N elements; warp w takes segments w, w + 8, ..., lane L the
	// elements N L .. N L + N - 1 of its segment
	const int lane = tid % 32;
	for (int item = tid / 32; item < TileT::ROWS * SEGMENTS; item += 8) {
		const int rl = item / SEGMENTS, hl = (item % SEGMENTS) * 32 * N + N * lane, r = r0 + rl, h = h0 + hl;
		// kpad is a multiple of 16: the N elements are all in or all out
		if (r >= rows || h >= kpad) continue;
		union {
			uint4 chunks[N / PER];
			T v[N];
		} u;
#pragma unroll
		for (int q = 0; q < N / PER; ++q) u.chunks[q] = tile[TileT::chunk_at(rl, hl / PER + q)];
		Elements<N> x;
#pragma unroll
		for (int j = 0; j < N; ++j) {
			double re, im;
			E::load(u.v, j, re, im);
			const bool finite = emu::finite(re) && emu::finite(im);
			x.re[j] = finite ? re : 0.0;
			x.im[j] = finite ? im : 0.0;
		}
		op(layout.dst(r, h), layout.plane(), r, x);
	}
}

}  // namespace

// every split kernel: the operand (rows x k, strides rs and cs), the padded K, the planes' buffer,
// then the operation's own arguments
#define EMU_SPLIT(NAME, T)                                                                                                 \
	extern "C" __global__ void __launch_bounds__(256) split_digits_##NAME(const T* x, int rows, int k, long long rs,       \
	                                                                      long long cs, long long kpad, signed char* out,  \
	                                                                      const int* shifts, int p, int part) {            \
		split_tile<T>(x, rows, k, rs, cs, kpad, Planar{rows, kpad, out}, Digits{p, part, shifts});                       \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) split_digits_interleaved_##NAME(                                     \
	    const T* x, int rows, int k, long long rs, long long cs, long long kpad, signed char* out, const int* shifts, int p, \
	    int part) {                                                                                                         \
		split_tile<T>(x, rows, k, rs, cs, kpad, Interleaved{rows, p, kpad, out}, Digits{p, part, shifts});               \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) split_residues_##NAME(const T* x, int rows, int k, long long rs,     \
	                                                                        long long cs, long long kpad,                  \
	                                                                        signed char* out, const int* shifts, int p) {  \
		split_tile<T>(x, rows, k, rs, cs, kpad, Planar{rows, kpad, out}, Residues<emu::Elem<T>::complex>{p, shifts});   \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) split_coarse_##NAME(const T* x, int rows, int k, long long rs,       \
	                                                                      long long cs, long long kpad, signed char* out,  \
	                                                                      const int* s0) {                                 \
		split_tile<T>(x, rows, k, rs, cs, kpad, Planar{rows, kpad, out}, Coarse{s0});                                     \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) split_window_##NAME(const T* x, int rows, int k, long long rs,       \
	                                                                      long long cs, long long kpad, signed char* out,  \
	                                                                      const int* e_max, int bits) {                    \
		split_tile<T>(x, rows, k, rs, cs, kpad, Planar{rows, kpad, out}, Window<emu::Elem<T>::complex>{e_max, bits});    \
	}
EMU_FOR_EACH_TYPE(EMU_SPLIT)
