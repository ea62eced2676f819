// emugemm: the normative arithmetic of both schemes, mirroring src/fp.rs, src/scheme1.rs and
// src/scheme2.rs operation for operation (compiled with --fmad=false: no contraction; fma only
// where __fma_rn is written), plus element access for the four element types.
#pragma once
#include <stdint.h>

// the triangles of a rank-k update's output, as `OutputTriangle::params` (src/gpu/product/job.rs)
// passes them: 0 every entry, the lower (i >= j) or the upper (i <= j) triangle, j counted from
// the output's first column `first_col` (a column tile's)
constexpr int TRIANGLE_LOWER = 1, TRIANGLE_UPPER = 2;

namespace emu {

// ---- exact floating-point helpers (src/fp.rs) ----

__device__ __forceinline__ double pow2(int e) { return __longlong_as_double((long long)(e + 1023) << 52); }

__device__ __forceinline__ double scale_pow2(double x, int e) {
	// the common case, one multiplication (what the loops below end with)
	if ((unsigned)(e + 1022) <= 2045u) return __dmul_rn(x, pow2(e));
	while (e > 1023) { x = __dmul_rn(x, pow2(1023)); e -= 1023; }
	while (e < -1022) { x = __dmul_rn(x, pow2(-1022)); e += 1022; }
	return __dmul_rn(x, pow2(e));
}

// floor(log2 |x|) of a finite nonzero x, subnormals included
__device__ __forceinline__ int exponent(double x) {
	unsigned long long bits = (unsigned long long)__double_as_longlong(x);
	int biased = (int)((bits >> 52) & 0x7FF);
	if (biased != 0) return biased - 1023;
	unsigned long long mant = bits & ((1ull << 52) - 1);
	return (63 - __clzll((long long)mant)) - 1074;
}

// the significand of a finite nonzero x as an integer in [2^52, 2^53)
__device__ __forceinline__ unsigned long long significand(double x) {
	unsigned long long bits = (unsigned long long)__double_as_longlong(x);
	unsigned long long biased = (bits >> 52) & 0x7FF;
	unsigned long long mant = bits & ((1ull << 52) - 1);
	return biased != 0 ? (mant | (1ull << 52)) : (mant << (__clzll((long long)mant) - 11));
}

// ---- scheme I (src/scheme1.rs) ----

__device__ __forceinline__ long long to_integer_rint(double x, int s) {
	return (long long)rint(scale_pow2(x, s));
}

// the least significant balanced base-256 digit of x, in [-128, 127], taken off x (x becomes
// (x - digit) / 256): p steps give the p digits of balanced_digits in src/scheme1.rs, least
// significant first
__device__ __forceinline__ int balanced_digit(long long& x) {
	const long long low = ((x + 128) & 255) - 128;
	x = (x - low) >> 8;
	return (int)low;
}

// one step of the shift-reduce (src/scheme1.rs shift_reduce), smallest weight first: v 2^-8 + c
__device__ __forceinline__ double shift_reduce_step(double v, int c) { return __dadd_rn(__dmul_rn(v, 1.0 / 256.0), (double)c); }

// ---- scheme II (src/scheme2.rs) ----

// v mod m in [0, m) for an integer-valued double |v| < 2^53, exactly: one multiplication by the
// rounded reciprocal gives the quotient within one, the fma gives the exact remainder, one
// correction step each way brings it into range (integer `%` by a run-time divisor is about 20x
// slower)
__device__ __forceinline__ double mod_exact(double v, double m, double inv_m) {
	double q = floor(__dmul_rn(v, inv_m));
	double r = __fma_rn(-q, m, v);
	if (r < 0.0) r = __dadd_rn(r, m);
	if (r >= m) r = __dsub_rn(r, m);
	return r;
}

// the symmetric residue of an integer-valued double |v| < 2^53 (sym_mod in src/scheme2.rs):
// in [-(m-1)/2, (m-1)/2] for odd m, [-128, 127] for m = 256
__device__ __forceinline__ signed char sym_mod_exact(double v, unsigned m) {
	double md = (double)m;
	double r = mod_exact(v, md, 1.0 / md);
	return (signed char)(r > (md - 1.0) * 0.5 ? r - md : r);
}

// ---- scheme II residues by compile-time modulus (the split's hot loop) ----

// X(l, m) for the moduli of src/scheme2.rs MODULI, in order (a unit test there checks this list)
#define EMU_MODULI(X)                                                                                                 \
	X(0, 256) X(1, 255) X(2, 253) X(3, 251) X(4, 247) X(5, 241) X(6, 239) X(7, 233) X(8, 229) X(9, 227) X(10, 223)   \
	    X(11, 217) X(12, 211) X(13, 199) X(14, 197) X(15, 193) X(16, 191) X(17, 181) X(18, 179) X(19, 173)

// x + ROUND_UNIT rounds x to the nearest integer, found in the low 32 bits of the sum (|x| < 2^51)
constexpr double ROUND_UNIT = 0x1.8p52;
// 2^e mod m, at compile time
__host__ __device__ constexpr unsigned pow2_mod(unsigned m, int e) {
	unsigned r = 1 % m;
	for (int i = 0; i < e; ++i) r = 2 * r % m;
	return r;
}

// an integer-valued double |v| < 2^91 split as v = hi 2^48 + lo, hi = rint(v 2^-48) (|hi| < 2^43),
// |lo| <= 2^47, both exact: once per value, so that each modulus needs a single fma to bring v
// below 2^51 (residue_rep)
struct Split48 {
	double hi, lo;
};

__device__ __forceinline__ Split48 split48(double v) {
	const double hi = __dsub_rn(__fma_rn(v, 0x1p-48, ROUND_UNIT), ROUND_UNIT);
	return Split48{hi, __fma_rn(-hi, 0x1p48, v)};
}

// an int8 representative of the integer v = hi 2^48 + lo modulo M (the split's residues):
// t = hi (2^48 mod M) + lo is exact (|t| < 2^51) and congruent to v; then r = t - qM with q the
// integer nearest to t fl(1/M). Both t + ROUND_UNIT and q + ROUND_UNIT are exact doubles whose low
// words are t and q mod 2^32, so r = t - qM is one integer multiply-add on the low words, exact
// because r is small (3 FP64 operations and one integer one, no division, no conversion
// instruction). q can miss the integer nearest to t/M by one, so |r| <= (M + 1)/2, not always the
// symmetric residue: congruent, which is all the products need; the one value outside int8, +128
// (M = 255 or 256), is taken as 128 - M
// (1/M rounded, by modulus index, from the constant bank: an operand of the fma, not two moves
// into registers per use)
#define EMU_INVERSE(L, M) 1.0 / M,
__constant__ double INVERSE_MODULI[] = {EMU_MODULI(EMU_INVERSE)};
#undef EMU_INVERSE

template <int L, unsigned M>
__device__ __forceinline__ int residue_rep(const Split48& v) {
	const double t = __fma_rn(v.hi, (double)pow2_mod(M, 48), v.lo);
	const int q = __double2loint(__fma_rn(t, INVERSE_MODULI[L], ROUND_UNIT));
	const int r = __double2loint(__dadd_rn(t, ROUND_UNIT)) - q * (int)M;
	return M >= 255 && r == 128 ? 128 - (int)M : r;
}

// the symmetric residue of an integer x with |x| <= M, as an int (one correction step)
template <unsigned M>
__device__ __forceinline__ int sym_small(int x) {
	if (x > (int)((M - 1) / 2)) x -= (int)M;
	if (x < -(int)(M / 2)) x += (int)M;
	return x;
}

// signed byte j of w as a double without a conversion instruction: `flipped` is w with the top bit
// of every byte flipped (w ^ 0x80808080), so byte j of it is the value + 128; 2^52 + that is
// exact, and subtracting 2^52 + 128 leaves the value
__device__ __forceinline__ double byte_as_double(unsigned flipped, int j) {
	return __dsub_rn(__hiloint2double(0x43300000, __byte_perm(flipped, 0, 0x4440 | j)), 0x1p52 + 128.0);
}

// the low bytes of four ints, the first in the lowest byte (three byte permutations)
__device__ __forceinline__ unsigned pack4(int a, int b, int c, int d) {
	return __byte_perm(__byte_perm(a, b, 0x0040), __byte_perm(c, d, 0x0040), 0x5410);
}

// ceil(|x| 2^s0), at least 1 when x != 0
__device__ __forceinline__ signed char coarse_magnitude(double x, int s0) {
	if (x == 0.0) return 0;
	int c = (int)ceil(scale_pow2(fabs(x), s0));
	return (signed char)(c < 1 ? 1 : c);
}

// ---- element access: every type read as two f64 parts ----

template <typename T> struct Elem;
template <> struct Elem<double> {
	static constexpr bool complex = false;
	__device__ static void load(const double* p, long long idx, double& re, double& im) { re = p[idx]; im = 0.0; }
	__device__ static void store(double* p, long long idx, double re, double) { p[idx] = re; }
};
template <> struct Elem<float> {
	static constexpr bool complex = false;
	__device__ static void load(const float* p, long long idx, double& re, double& im) { re = (double)p[idx]; im = 0.0; }
	__device__ static void store(float* p, long long idx, double re, double) { p[idx] = __double2float_rn(re); }
};
// aligned to their size, so that an element is one 16-byte (8-byte) access: a warp's loads and
// stores of consecutive elements cover whole sectors (the device buffers are allocated aligned)
struct alignas(16) c64 { double re, im; };
struct alignas(8) c32 { float re, im; };
template <> struct Elem<c64> {
	static constexpr bool complex = true;
	__device__ static void load(const c64* p, long long idx, double& re, double& im) { re = p[idx].re; im = p[idx].im; }
	__device__ static void store(c64* p, long long idx, double re, double im) { p[idx].re = re; p[idx].im = im; }
};
template <> struct Elem<c32> {
	static constexpr bool complex = true;
	__device__ static void load(const c32* p, long long idx, double& re, double& im) { re = (double)p[idx].re; im = (double)p[idx].im; }
	__device__ static void store(c32* p, long long idx, double re, double im) {
		p[idx].re = __double2float_rn(re);
		p[idx].im = __double2float_rn(im);
	}
};

__device__ __forceinline__ bool finite(double x) { return isfinite(x); }

// a x, or 0 where a is 0: a zero alpha of a real product contributes nothing, even against an
// infinite product (src/fp.rs `scaled_part`)
__device__ __forceinline__ double scaled_part(double a, double x) { return a == 0.0 ? 0.0 : __dmul_rn(a, x); }

// the kind of sum alpha scales (Sum in src/fp.rs): Native, a native sum (non-finite operands
// included), scaled by the full complex product as cuBLAS scales its own; Emulated, an emulated sum
// of finite operands, whose part non-finite where its scaling overflowed meets only alpha's nonzero
// parts (overflowed_part)
enum class Sum { Native, Emulated };

// a x, or 0 where a is 0 and x is not finite (src/fp.rs `overflowed_part`): a x on every finite x
__device__ __forceinline__ double overflowed_part(double a, double x) { return a == 0.0 && !isfinite(x) ? 0.0 : __dmul_rn(a, x); }

// alpha c (+ old when accumulating) for a sum c of the kind S, each operation rounded in f64
// (src/fp.rs `combine`)
template <Sum S, typename T>
__device__ __forceinline__ T combined(const T& old, double cre, double cim, double ar, double ai, int accumulate) {
	double re, im;
	if (Elem<T>::complex && S == Sum::Native) {
		re = __dsub_rn(__dmul_rn(ar, cre), __dmul_rn(ai, cim));
		im = __dadd_rn(__dmul_rn(ar, cim), __dmul_rn(ai, cre));
	} else if (Elem<T>::complex) {
		re = __dsub_rn(overflowed_part(ar, cre), overflowed_part(ai, cim));
		im = __dadd_rn(overflowed_part(ar, cim), overflowed_part(ai, cre));
	} else {
		re = scaled_part(ar, cre);
		im = 0.0;
	}
	if (accumulate) {
		double ore, oim;
		Elem<T>::load(&old, 0, ore, oim);
		re = __dadd_rn(ore, re);
		im = __dadd_rn(oim, im);
	}
	T x;
	Elem<T>::store(&x, 0, re, im);
	return x;
}

// every entry of the rows x k operand x (row r, inner index h at r rs + h cs, parts re and im) as
// visit(h, re, im, at), at = r out_rs + h out_cs its place in a copy with strides out_rs and
// out_cs, over a grid-stride loop of 256-thread blocks that walks the copy's contiguous dimension
// (the rows where out_rs == 1, K otherwise), so that the copy's stores coalesce
template <typename T, typename F>
__device__ void for_each_copied(const T* x, int rows, int k, long long rs, long long cs, long long out_rs, long long out_cs, F&& visit) {
	const bool rows_fast = out_rs == 1;
	for (long long idx = blockIdx.x * 256ll + threadIdx.x; idx < (long long)rows * k; idx += (long long)gridDim.x * 256) {
		const int r = (int)(rows_fast ? idx % rows : idx / k), h = (int)(rows_fast ? idx / rows : idx % k);
		double re, im;
		Elem<T>::load(x, (long long)r * rs + (long long)h * cs, re, im);
		visit(h, re, im, (long long)r * out_rs + (long long)h * out_cs);
	}
}

// s = fl(a + b) and its error e, s + e = a + b exactly (Knuth's TwoSum; two_sum in src/scheme2.rs)
__device__ __forceinline__ double two_sum(double a, double b, double& e) {
	const double s = __dadd_rn(a, b);
	const double bb = __dsub_rn(s, a);
	e = __dadd_rn(__dsub_rn(a, __dsub_rn(s, bb)), __dsub_rn(b, bb));
	return s;
}

// the entry dst[idx] combined with a sum c of the kind S (read first when accumulating)
template <Sum S, typename T>
__device__ __forceinline__ void combine_store(T* dst, long long idx, double cre, double cim, double ar, double ai, int accumulate) {
	T old{};
	if (accumulate) old = dst[idx];
	dst[idx] = combined<S>(old, cre, cim, ar, ai, accumulate);
}

}  // namespace emu

// instantiates `extern "C"` entry points NAME_f64, NAME_f32, NAME_c64, NAME_c32 of a template
#define EMU_FOR_EACH_TYPE(MACRO) MACRO(f64, double) MACRO(f32, float) MACRO(c64, emu::c64) MACRO(c32, emu::c32)
