// traffic ceilings (docs/PERF.md, issue 4 step 8): the device copy against ideal kernels with the
// split's and the CRT's byte mix (no arithmetic beyond what keeps the compiler from dropping loads),
// in several access patterns. Standalone: on the GPU machine
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o ceiling traffic_ceilings.cu && ./ceiling
#include "timing.cuh"

constexpr int P = 15;

// the byte sums of word w over the P planes (4 entries)
__device__ __forceinline__ void sum_words(const unsigned* __restrict__ planes, long long plane_words, long long w, unsigned (&acc)[4]) {
	unsigned v[P];
#pragma unroll
	for (int l = 0; l < P; ++l) v[l] = planes[l * plane_words + w];
	acc[0] = acc[1] = acc[2] = acc[3] = 0;
#pragma unroll
	for (int l = 0; l < P; ++l) {
		acc[0] += v[l] & 255; acc[1] += (v[l] >> 8) & 255; acc[2] += (v[l] >> 16) & 255; acc[3] += v[l] >> 24;
	}
}

// CRT mix: P byte planes in, one f64 out; thread: 4 entries (one word per plane), 32 B out
__global__ void crt_words(const unsigned* __restrict__ planes, long long plane_words, double* __restrict__ out, long long words) {
	for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < words; w += (long long)gridDim.x * blockDim.x) {
		unsigned acc[4];
		sum_words(planes, plane_words, w, acc);
		double4_32a r = {(double)acc[0], (double)acc[1], (double)acc[2], (double)acc[3]};
		((double2*)out)[2 * w] = double2{r.x, r.y}; ((double2*)out)[2 * w + 1] = double2{r.z, r.w};
	}
}
// CRT mix with whole-warp-contiguous stores: thread t of a warp stores entries via shuffles
__global__ void crt_words_coalesced(const unsigned* __restrict__ planes, long long plane_words, double* __restrict__ out, long long words) {
	const int lane = threadIdx.x & 31;
	for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < words; w += (long long)gridDim.x * blockDim.x) {
		unsigned acc[4];
		sum_words(planes, plane_words, w, acc);
		// warp covers 128 entries; store q (0..3): entries 32q + lane of the warp's 128
		const long long base = (w - lane) * 4;
#pragma unroll
		for (int q = 0; q < 4; ++q) {
			int e = 32 * q + lane, src = e >> 2, which = e & 3;
			unsigned x0 = __shfl_sync(~0u, acc[0], src), x1 = __shfl_sync(~0u, acc[1], src), x2 = __shfl_sync(~0u, acc[2], src), x3 = __shfl_sync(~0u, acc[3], src);
			unsigned x = which == 0 ? x0 : which == 1 ? x1 : which == 2 ? x2 : x3;
			out[base + e] = (double)x;
		}
	}
}
// split mix: one f64 in, P bytes out (P planes); thread: 4 entries (32 B in, one word per plane)
__global__ void split_words(const double4_32a* __restrict__ in, unsigned* __restrict__ planes, long long plane_words, long long words) {
	for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < words; w += (long long)gridDim.x * blockDim.x) {
		const double2 x01 = ((const double2*)in)[2 * w], x23 = ((const double2*)in)[2 * w + 1]; double4_32a x = {x01.x, x01.y, x23.x, x23.y};
		unsigned b[4] = {(unsigned)(long long)x.x, (unsigned)(long long)x.y, (unsigned)(long long)x.z, (unsigned)(long long)x.w};
#pragma unroll
		for (int l = 0; l < P; ++l) {
			unsigned word = ((b[0] + l) & 255) | (((b[1] + l) & 255) << 8) | (((b[2] + l) & 255) << 16) | ((b[3] + l) << 24);
			planes[l * plane_words + w] = word;
		}
	}
}

// CRT mix, lane pairs share sectors: lane 2k+h holds entries 8k+2h+{0,1} and 8k+4+2h+{0,1}
__global__ void crt_pairs(const unsigned* __restrict__ planes, long long plane_words, double* __restrict__ out, long long words) {
	const int lane = threadIdx.x & 31, k = lane >> 1, h = lane & 1;
	const unsigned sel = h ? 0x7632u : 0x5410u;  // bytes (2h, 2h+1) of w0 then of w1
	for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < words; w += (long long)gridDim.x * blockDim.x) {
		const long long wb = w - lane;  // the warp's first word
		unsigned acc[4] = {0, 0, 0, 0};
		uint2 v[P];
#pragma unroll
		for (int l = 0; l < P; ++l) v[l] = *(const uint2*)(planes + l * plane_words + wb + 2 * k);
#pragma unroll
		for (int l = 0; l < P; ++l) {
			unsigned x = __byte_perm(v[l].x, v[l].y, sel);
			acc[0] += x & 255; acc[1] += (x >> 8) & 255; acc[2] += (x >> 16) & 255; acc[3] += x >> 24;
		}
		double2* o = (double2*)(out + 4 * wb + 8 * k + 2 * h);
		o[0] = double2{(double)acc[0], (double)acc[1]};
		o[2] = double2{(double)acc[2], (double)acc[3]};
	}
}
// complex CRT mix: 2P planes in, 16 B out per entry; consecutive (lane: 4 consecutive entries) or strided (lane L: L + 32 v)
template <bool STRIDED>
__global__ void crt_c64(const unsigned char* __restrict__ planes, long long plane_bytes, double2* __restrict__ out, long long words) {
	const int lane = threadIdx.x & 31;
	for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < words; w += (long long)gridDim.x * blockDim.x) {
		const long long wb = w - lane;
		unsigned acc[4] = {0, 0, 0, 0};
#pragma unroll
		for (int l = 0; l < 2 * P; ++l) {
			if (STRIDED) {
#pragma unroll
				for (int v = 0; v < 4; ++v) acc[v] += planes[l * plane_bytes + 4 * wb + lane + 32 * v];
			} else {
				unsigned x = ((const unsigned*)(planes + l * plane_bytes))[w];
				acc[0] += x & 255; acc[1] += (x >> 8) & 255; acc[2] += (x >> 16) & 255; acc[3] += x >> 24;
			}
		}
#pragma unroll
		for (int v = 0; v < 4; ++v) {
			long long e = STRIDED ? 4 * wb + lane + 32 * v : 4 * w + v;
			out[e] = double2{(double)acc[v], 1.0};
		}
	}
}
// split mix, E entries per thread (E = 4, 8, 16): one E-byte store per plane
template <int E>
__global__ void split_wide(const double* __restrict__ in, unsigned char* __restrict__ planes, long long plane_bytes, long long groups) {
	for (long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x; g < groups; g += (long long)gridDim.x * blockDim.x) {
		unsigned b[E];
#pragma unroll
		for (int e = 0; e < E; e += 2) { double2 x = ((const double2*)in)[(g * E + e) / 2]; b[e] = (unsigned)(long long)x.x; b[e + 1] = (unsigned)(long long)x.y; }
#pragma unroll
		for (int l = 0; l < P; ++l) {
			unsigned wv[E / 4];
#pragma unroll
			for (int q = 0; q < E / 4; ++q) wv[q] = ((b[4*q] + l) & 255) | (((b[4*q+1] + l) & 255) << 8) | (((b[4*q+2] + l) & 255) << 16) | ((b[4*q+3] + l) << 24);
			unsigned char* d = planes + l * plane_bytes + g * E;
			if (E == 4) *(unsigned*)d = wv[0];
			if (E == 8) *(uint2*)d = uint2{wv[0], wv[1 % (E / 4)]};
			if (E == 16) *(uint4*)d = uint4{wv[0], wv[1 % (E / 4)], wv[2 % (E / 4)], wv[3 % (E / 4)]};
		}
	}
}
__global__ void copy16(const int4* __restrict__ a, int4* __restrict__ b, long long n) {
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) b[i] = a[i];
}

int main() {
	const int sms = device_banner();
	for (long long n : {4096ll, 8192ll, 16384ll}) {
		const long long mn = n * n, words = mn / 4;
		unsigned char* planes; double* f; void* big_a; void* big_b;
		CK(cudaMalloc(&planes, mn * P)); CK(cudaMalloc(&f, mn * 8));
		const size_t copy_bytes = mn * 8;  // the copy reference: as many bytes each way as an f64 matrix
		CK(cudaMalloc(&big_a, copy_bytes)); CK(cudaMalloc(&big_b, copy_bytes));
		cudaMemset(planes, 1, mn * P); cudaMemset(f, 0, mn * 8); cudaMemset(big_a, 0, copy_bytes);
		float copy_ms = median_ms([&] { cudaMemcpyAsync(big_b, big_a, copy_bytes, cudaMemcpyDeviceToDevice); });
		double copy_bw = 2.0 * copy_bytes / copy_ms / 1e6;
		unsigned char* cplanes = nullptr; void* cout = nullptr;
		if (n <= 8192) { CK(cudaMalloc(&cplanes, mn * 2 * P)); CK(cudaMalloc(&cout, mn * 16)); cudaMemset(cplanes, 1, mn * 2 * P); }
		printf("n=%lld  device copy: %.3f ms, %.0f GB/s\n", n, copy_ms, copy_bw);
		for (int per_sm : {4, 16}) {
			int grid = sms * per_sm;
			const double real_bytes = (double)mn * (P + 8), cplx_bytes = (double)mn * (2 * P + 16);
			auto pct = [&](double bytes, float ms) { return 100 * (bytes / ms / 1e6) / copy_bw; };
			float k_ms = median_ms([&] { copy16<<<grid, 256>>>((const int4*)big_a, (int4*)big_b, copy_bytes / 16); });
			float c_ms = median_ms([&] { crt_words<<<grid, 256>>>((const unsigned*)planes, words, f, words); });
			float cc_ms = median_ms([&] { crt_words_coalesced<<<grid, 256>>>((const unsigned*)planes, words, f, words); });
			float cp_ms = median_ms([&] { crt_pairs<<<grid, 256>>>((const unsigned*)planes, words, f, words); });
			printf("  blocks/SM %2d: copy kernel %5.1f%%  crt f64 mix: 4 consecutive per lane %5.1f%%, warp-contiguous %5.1f%%, lane pairs %5.1f%%\n", per_sm,
			       pct(2.0 * copy_bytes, k_ms), pct(real_bytes, c_ms), pct(real_bytes, cc_ms), pct(real_bytes, cp_ms));
			if (n <= 8192) {
				float z0 = median_ms([&] { crt_c64<false><<<grid, 256>>>(cplanes, mn, (double2*)cout, words); });
				float z1 = median_ms([&] { crt_c64<true><<<grid, 256>>>(cplanes, mn, (double2*)cout, words); });
				printf("                 crt c64 mix: 4 consecutive per lane %5.1f%%, lane-strided %5.1f%%\n", pct(cplx_bytes, z0), pct(cplx_bytes, z1));
			}
			float s4 = median_ms([&] { split_wide<4><<<grid, 256>>>(f, planes, mn, mn / 4); });
			float s8 = median_ms([&] { split_wide<8><<<grid, 256>>>(f, planes, mn, mn / 8); });
			float s16 = median_ms([&] { split_wide<16><<<grid, 256>>>(f, planes, mn, mn / 16); });
			printf("                 split f64 mix: 4 B per plane %5.1f%%, 8 B %5.1f%%, 16 B %5.1f%%\n", pct(real_bytes, s4), pct(real_bytes, s8), pct(real_bytes, s16));
		}
		CK(cudaGetLastError());
		cudaFree(planes); cudaFree(cplanes); cudaFree(cout); cudaFree(f); cudaFree(big_a); cudaFree(big_b);
	}
}
