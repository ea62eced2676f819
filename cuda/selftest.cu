// emugemm: kernels that the GPU tests use to verify the arithmetic the other kernels rely on.
//
// sym_mod_exhaustive: the symmetric residue by exact double arithmetic (emu::sym_mod_exact, used by
// the unfused route's reductions) against integer `%`, for every 32-bit input and every modulus;
// counts the mismatches (the fused epilogues' integer arithmetic has its own, modulus_exhaustive,
// in sm90_chassis.cu)
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256) sym_mod_exhaustive(const unsigned* moduli, int p, unsigned long long* mismatches) {
	unsigned long long wrong = 0;
	const unsigned long long stride = (unsigned long long)gridDim.x * 256;
	for (int l = 0; l < p; ++l) {
		const unsigned m = moduli[l];
		const long long mm = m;
		for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < (1ull << 32); i += stride) {
			const int v = (int)(unsigned)i;
			long long r = (long long)v % mm;
			if (r < 0) r += mm;
			const signed char expected = (signed char)(r > (mm - 1) / 2 ? r - mm : r);
			wrong += emu::sym_mod_exact((double)v, m) != expected;
		}
	}
	atomicAdd(mismatches, wrong);
}

// residue_check: the split's residue arithmetic (emu::residue_rep, one instantiation per modulus)
// against integer arithmetic on v = +-s 2^e (s < 2^53 random, e in [0, 37], so |v| < 2^91) and on
// the values next to the half-modulus boundaries of v/M, where the rounded reciprocal can misplace
// the quotient by one: the representative must be congruent to v and lie in [-128, 127];
// `samples` values per thread and modulus; counts the mismatches
namespace {

__device__ __forceinline__ unsigned long long splitmix(unsigned long long& state) {
	unsigned long long z = (state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

template <int L, unsigned M>
__device__ unsigned long long residue_mismatches(unsigned long long seed, int samples) {
	unsigned long long wrong = 0, state = seed * 0x2545F4914F6CDD1Dull + M;
	for (int i = 0; i < samples; ++i) {
		const unsigned long long bits = splitmix(state);
		unsigned long long s;
		unsigned e;
		if (i % 2 == 0) {
			s = bits >> 11;
			e = (unsigned)(splitmix(state) % 38);
		} else {
			// q M + M/2 + d for d in [-2, 2]: the rounding boundaries of v / M
			s = (bits >> 20) * M + M / 2 + (unsigned long long)((long long)(splitmix(state) % 5) - 2);
			e = 0;
		}
		const bool negative = splitmix(state) & 1;
		unsigned long long pw = 1;
		for (unsigned t = 0; t < e; ++t) pw = pw * 2 % M;
		const long long r = (long long)((s % M) * pw % M);
		const long long expected = negative ? (M - r) % M : r;  // v mod M in [0, M)
		const double v = (negative ? -(double)s : (double)s) * emu::pow2((int)e);
		const int got = emu::residue_rep<L, M>(emu::split48(v));
		wrong += got < -128 || got > 127 || ((got % (long long)M) + M) % M != expected;
	}
	return wrong;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(256) residue_check(int samples, unsigned long long* mismatches) {
	const unsigned long long seed = blockIdx.x * 256ull + threadIdx.x;
	unsigned long long wrong = 0;
#define EMU_CHECK_MODULUS(L, M) wrong += residue_mismatches<L, M>(seed, samples);
	EMU_MODULI(EMU_CHECK_MODULUS)
#undef EMU_CHECK_MODULUS
	atomicAdd(mismatches, wrong);
}
