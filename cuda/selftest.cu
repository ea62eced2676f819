// emugemm: kernels that the GPU tests use to verify the arithmetic the other kernels rely on.
//
// sym_mod_exhaustive: the symmetric residue by exact double arithmetic (emu::sym_mod_exact, used by
// the fused scheme II epilogue and the reductions) against integer `%`, for every 32-bit input and
// every modulus; counts the mismatches
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
