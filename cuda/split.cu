// emugemm: the split of an operand into int8 planes, K-major: plane t, row r at
// out[(t * rows + r) * kpad + h], zero for k <= h < kpad. one template kernel moves a 32 x 32 tile
// (rows x k) through shared memory, so that reads are coalesced along the input's contiguous
// dimension and writes along k; what is written per element comes from the operation:
//   Digits   scheme I balanced digits of rint(x 2^s_r) (real part, imaginary part, or -imaginary)
//   Residues scheme II symmetric residues of trunc(x 2^s_r) for every modulus (complex: re, im, re+im)
//   Coarse   accurate scaling: ceil(|re| 2^s0) + ceil(|im| 2^s0)
#include "common.cuh"

namespace {

struct Digits {
	int p, part;  // part: 0 real, 1 imaginary, 2 negated imaginary
	const int* shifts;
	__device__ void operator()(signed char* out, int rows, long long kpad, int r, int h, double re, double im) const {
		double x = part == 0 ? re : (part == 1 ? im : -im);
		signed char d[8];
		emu::balanced_digits(emu::to_integer_rint(x, shifts[r]), p, d);
		for (int t = 0; t < p; ++t) out[((long long)t * rows + r) * kpad + h] = d[t];
	}
};

struct Residues {
	int p, complex;
	const int* shifts;
	const unsigned* moduli;
	__device__ void operator()(signed char* out, int rows, long long kpad, int r, int h, double re, double im) const {
		emu::ScaledInteger sre = emu::scaled_integer(re, shifts[r]);
		emu::ScaledInteger sim = emu::scaled_integer(im, shifts[r]);
		const int per = complex ? 3 : 1;
		for (int l = 0; l < p; ++l) {
			unsigned m = moduli[l];
			signed char a = emu::residue(sre, m);
			out[((long long)(per * l) * rows + r) * kpad + h] = a;
			if (complex) {
				signed char b = emu::residue(sim, m);
				out[((long long)(3 * l + 1) * rows + r) * kpad + h] = b;
				out[((long long)(3 * l + 2) * rows + r) * kpad + h] = emu::sym_mod_exact((double)a + (double)b, m);
			}
		}
	}
};

struct Coarse {
	const int* s0;
	__device__ void operator()(signed char* out, int rows, long long kpad, int r, int h, double re, double im) const {
		out[(long long)r * kpad + h] = emu::coarse_magnitude(re, s0[r]) + emu::coarse_magnitude(im, s0[r]);
	}
};

template <typename T, typename Op>
__device__ void split_tile(const T* x, int rows, int k, long long rs, long long cs, long long kpad, signed char* out, const Op& op) {
	using E = emu::Elem<T>;
	__shared__ double s_re[32][33];
	__shared__ double s_im[32][33];
	const int r0 = blockIdx.y * 32, h0 = blockIdx.x * 32;
	const bool rows_contiguous = rs == 1;
	for (int q = threadIdx.y; q < 32; q += 8) {
		// (rl, hl): the tile element this thread loads, with the contiguous dimension on threadIdx.x
		int rl = rows_contiguous ? threadIdx.x : q, hl = rows_contiguous ? q : threadIdx.x;
		int r = r0 + rl, h = h0 + hl;
		double re = 0.0, im = 0.0;
		if (r < rows && h < k) {
			E::load(x, (long long)r * rs + (long long)h * cs, re, im);
			if (!(emu::finite(re) && emu::finite(im))) { re = 0.0; im = 0.0; }
		}
		s_re[rl][hl] = re;
		s_im[rl][hl] = im;
	}
	__syncthreads();
	for (int q = threadIdx.y; q < 32; q += 8) {
		int r = r0 + q, h = h0 + threadIdx.x;
		if (r < rows && h < kpad) op(out, rows, kpad, r, h, s_re[q][threadIdx.x], s_im[q][threadIdx.x]);
	}
}

}  // namespace

#define EMU_SPLIT(NAME, T)                                                                                                 \
	extern "C" __global__ void __launch_bounds__(256) split_digits_##NAME(const T* x, int rows, int k, long long rs,       \
	                                                                      long long cs, long long kpad, signed char* out,  \
	                                                                      const int* shifts, int p, int part) {            \
		split_tile<T>(x, rows, k, rs, cs, kpad, out, Digits{p, part, shifts});                                          \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) split_residues_##NAME(const T* x, int rows, int k, long long rs,     \
	                                                                        long long cs, long long kpad, signed char* out, \
	                                                                        const int* shifts, const unsigned* moduli, int p) { \
		split_tile<T>(x, rows, k, rs, cs, kpad, out, Residues{p, emu::Elem<T>::complex ? 1 : 0, shifts, moduli});       \
	}                                                                                                                       \
	extern "C" __global__ void __launch_bounds__(256) split_coarse_##NAME(const T* x, int rows, int k, long long rs,       \
	                                                                      long long cs, long long kpad, signed char* out,  \
	                                                                      const int* s0) {                                 \
		split_tile<T>(x, rows, k, rs, cs, kpad, out, Coarse{s0});                                                       \
	}
EMU_FOR_EACH_TYPE(EMU_SPLIT)

