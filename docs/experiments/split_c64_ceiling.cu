// the complex split's byte mix alone (docs/PERF.md, issue 4 step 12): one c64 element in (16 B),
// 3 P bytes out (planes re, im, re + im per modulus, P = 15 moduli), no arithmetic beyond what keeps
// the compiler from dropping loads, against the device copy, in three store patterns:
//   w4     a lane owns 4 consecutive elements, one 4-byte store per plane (split_residues_c64's)
//   pairs  a lane owns 4 consecutive elements; lanes 2k and 2k+1 swap one word per two planes
//          (shfl.xor 1), so each lane stores 8 bytes of every other plane
//   w8     a lane owns 8 consecutive elements, one 8-byte store per plane
// Standalone: on the GPU machine
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o split_c64_ceiling split_c64_ceiling.cu && ./split_c64_ceiling
#include "timing.cuh"

constexpr int P = 15, PLANES = 3 * P;

// the plane word of 4 elements (bytes of b[0..3] plus the plane index)
__device__ __forceinline__ unsigned word(const unsigned* b, int l) {
	return ((b[0] + l) & 255) | (((b[1] + l) & 255) << 8) | (((b[2] + l) & 255) << 16) | ((b[3] + l) << 24);
}

// E consecutive elements per lane (E = 4 or 8), one E-byte store per plane
template <int E>
__global__ void split_wide(const double2* __restrict__ in, unsigned char* __restrict__ planes, long long plane_bytes, long long groups) {
	for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < groups; g += (long long)gridDim.x * blockDim.x) {
		unsigned b[E];
#pragma unroll
		for (int e = 0; e < E; ++e) { const double2 x = in[g * E + e]; b[e] = (unsigned)(long long)x.x + (unsigned)(long long)x.y; }
#pragma unroll
		for (int l = 0; l < PLANES; ++l) {
			unsigned char* d = planes + l * plane_bytes + g * E;
			if constexpr (E == 4) *(unsigned*)d = word(b, l);
			else *(uint2*)d = uint2{word(b, l), word(b + 4, l)};
		}
	}
}

// 4 consecutive elements per lane; lane pairs store 8 bytes of alternate planes
__global__ void split_pairs(const double2* __restrict__ in, unsigned char* __restrict__ planes, long long plane_bytes, long long groups) {
	const int odd = threadIdx.x & 1;
	for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < groups; g += (long long)gridDim.x * blockDim.x) {
		unsigned b[4];
#pragma unroll
		for (int e = 0; e < 4; ++e) { const double2 x = in[g * 4 + e]; b[e] = (unsigned)(long long)x.x + (unsigned)(long long)x.y; }
		const long long pair = g >> 1;  // the pair's 8 elements start at 8 pair
#pragma unroll
		for (int l = 0; l < PLANES; l += 2) {
			// even lane stores plane l, odd lane plane l + 1: each sends the word of the plane the partner stores
			const unsigned mine = word(b, l + odd), theirs = word(b, l + 1 - odd);
			const unsigned got = __shfl_xor_sync(0xffffffffu, theirs, 1);
			const int plane = l + odd;
			if (plane < PLANES) {
				unsigned char* d = planes + plane * plane_bytes + pair * 8;
				*(uint2*)d = odd ? uint2{got, mine} : uint2{mine, got};
			}
		}
	}
}

int main() {
	const int sms = device_banner();
	for (long long n : {4096ll, 8192ll, 16384ll}) {
		const long long mn = n * n;
		unsigned char* planes; double2* x; void* copy_b;
		CK(cudaMalloc(&planes, mn * PLANES)); CK(cudaMalloc(&x, mn * 16)); CK(cudaMalloc(&copy_b, mn * 16));
		cudaMemset(planes, 1, mn * PLANES); cudaMemset(x, 0, mn * 16);
		const float copy_ms = median_ms([&] { cudaMemcpyAsync(copy_b, x, mn * 16, cudaMemcpyDeviceToDevice); });
		const double copy_bw = 2.0 * mn * 16 / copy_ms / 1e6, bytes = (double)mn * (16 + PLANES);
		auto pct = [&](float ms) { return 100 * (bytes / ms / 1e6) / copy_bw; };
		printf("n=%lld  device copy (c64 matrix): %.3f ms, %.0f GB/s\n", n, copy_ms, copy_bw);
		for (int per_sm : {4, 8, 16}) {
			const int grid = sms * per_sm;
			const float w4 = median_ms([&] { split_wide<4><<<grid, 256>>>(x, planes, mn, mn / 4); });
			const float pr = median_ms([&] { split_pairs<<<grid, 256>>>(x, planes, mn, mn / 4); });
			const float w8 = median_ms([&] { split_wide<8><<<grid, 256>>>(x, planes, mn, mn / 8); });
			printf("  blocks/SM %2d: c64 split mix: w4 %5.1f%%  pairs %5.1f%%  w8 %5.1f%%\n", per_sm, pct(w4), pct(pr), pct(w8));
		}
		CK(cudaGetLastError());
		cudaFree(planes); cudaFree(x); cudaFree(copy_b);
	}
}
