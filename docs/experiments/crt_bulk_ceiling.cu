// the CRT's bulk-copy pipeline without its arithmetic (docs/PERF.md, issue 4 step 10): chunks of
// CHUNK entries whose P = 15 byte planes thread 0 brings into shared memory by bulk copies
// (cp.async.bulk, one per plane, completing on the stage's mbarrier), STAGES stages, the stage
// refilled after a block barrier, each thread summing the bytes of one 32-bit word per plane and
// storing its 4 entries as f64 (two 16-byte stores), as the kept crt_f64 does; against the device
// copy; and against the load path that replaced it (step 11): each warp brings segments of 128
// entries of the P planes into its own stages by cp.async (16 bytes a copy, no block barrier), lane
// L summing the bytes of entries L + 32 v and storing each entry (8 bytes, a warp's store 256
// contiguous bytes). Standalone: on the GPU machine
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o bulk crt_bulk_ceiling.cu && ./bulk
// (BULK=1 ./bulk: the other bulk-copy chunk sizes and stage counts too)
#include <cstdint>
#include <cstdlib>
#include "timing.cuh"

constexpr int P = 15;

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

template <int CHUNK, int STAGES>
__global__ void __launch_bounds__(256) bulk_crt(const unsigned char* __restrict__ planes, long long stride, double* __restrict__ out, long long chunks) {
	extern __shared__ __align__(128) unsigned char smem[];
	const uint32_t bars = smem_addr(smem + STAGES * P * CHUNK);
	const int tid = threadIdx.x;
	if (tid == 0)
		for (int s = 0; s < STAGES; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bars + 8 * s));
	asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	__syncthreads();
	auto fetch = [&](long long c, int s) {
		if (c >= chunks) return;
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bars + 8 * s), "r"(P * CHUNK) : "memory");
		for (int l = 0; l < P; ++l)
			asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
			                 smem_addr(smem + (s * P + l) * CHUNK)),
			             "l"(planes + l * stride + c * CHUNK), "r"(CHUNK), "r"(bars + 8 * s)
			             : "memory");
	};
	if (tid == 0)
		for (int s = 0; s < STAGES; ++s) fetch(blockIdx.x + (long long)s * gridDim.x, s);
	int it = 0;
	for (long long c = blockIdx.x; c < chunks; c += gridDim.x, ++it) {
		const int s = it % STAGES;
		asm volatile("{\n.reg .pred p;\nW_%=:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W_%=;\n}\n" ::"r"(bars + 8 * s),
		             "r"((it / STAGES) & 1)
		             : "memory");
		for (int w = tid; w < CHUNK / 4; w += 256) {
			unsigned a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#pragma unroll
			for (int l = 0; l < P; ++l) {
				const unsigned v = ((const unsigned*)(smem + (s * P + l) * CHUNK))[w];
				a0 += v & 255; a1 += (v >> 8) & 255; a2 += (v >> 16) & 255; a3 += v >> 24;
			}
			double2* to = (double2*)(out + c * CHUNK + 4 * w);
			to[0] = double2{(double)a0, (double)a1};
			to[1] = double2{(double)a2, (double)a3};
		}
		__syncthreads();
		if (tid == 0) fetch(c + (long long)STAGES * gridDim.x, s);
	}
}

template <int STAGES>
__global__ void __launch_bounds__(256) warp_async_crt(const unsigned char* __restrict__ planes, long long stride, double* __restrict__ out, long long segments) {
	extern __shared__ __align__(128) unsigned char smem[];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	unsigned char* stages = smem + warp * STAGES * P * 128;
	const long long step = (long long)gridDim.x * 8;
	long long seg = blockIdx.x * 8ll + warp;
	auto fetch = [&](long long g, int s) {
		if (g < segments)
			for (int l = lane / 8; l < P; l += 4)
				asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(stages + (s * P + l) * 128 + 16 * (lane % 8))),
				             "l"(planes + l * stride + g * 128 + 16 * (lane % 8))
				             : "memory");
		asm volatile("cp.async.commit_group;\n" ::: "memory");
	};
	for (int s = 0; s < STAGES - 1; ++s) fetch(seg + s * step, s);
	for (int it = 0; seg < segments; seg += step, ++it) {
		fetch(seg + (STAGES - 1) * step, (it + STAGES - 1) % STAGES);
		asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 1) : "memory");
		__syncwarp();
		const signed char* b = (const signed char*)stages + it % STAGES * P * 128 + lane;
		int a[4] = {0, 0, 0, 0};
#pragma unroll
		for (int l = 0; l < P; ++l)
#pragma unroll
			for (int v = 0; v < 4; ++v) a[v] += b[l * 128 + 32 * v];
		__syncwarp();
#pragma unroll
		for (int v = 0; v < 4; ++v) out[seg * 128 + lane + 32 * v] = (double)a[v];
	}
}

template <int CHUNK, int STAGES>
int run(const unsigned char* planes, long long mn, double* f, double copy_bw, int sms) {
	const int smem = STAGES * P * CHUNK + 8 * STAGES;
	CK(cudaFuncSetAttribute(bulk_crt<CHUNK, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
	int per_sm = 0;
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bulk_crt<CHUNK, STAGES>, 256, smem));
	const long long chunks = mn / CHUNK;
	const int grid = (int)std::min<long long>(chunks, (long long)sms * per_sm);
	const float ms = median_ms([&] { bulk_crt<CHUNK, STAGES><<<grid, 256, smem>>>(planes, mn, f, chunks); });
	CK(cudaGetLastError());
	const double bytes = (double)mn * (P + 8);
	printf("  chunk %4d, %d stages: %2d blocks/SM, %6.1f KB in flight per SM: %5.1f%% of copy\n", CHUNK, STAGES, per_sm,
	       per_sm * (STAGES - 1) * P * CHUNK / 1024.0, 100 * (bytes / ms / 1e6) / copy_bw);
	return 0;
}

template <int STAGES>
int run_warp(const unsigned char* planes, long long mn, double* f, double copy_bw, int sms) {
	const int smem = 8 * STAGES * P * 128;
	CK(cudaFuncSetAttribute(warp_async_crt<STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
	int per_sm = 0;
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, warp_async_crt<STAGES>, 256, smem));
	const long long segments = mn / 128;
	const int grid = (int)std::min<long long>(segments / 8, (long long)sms * per_sm);
	const float ms = median_ms([&] { warp_async_crt<STAGES><<<grid, 256, smem>>>(planes, mn, f, segments); });
	CK(cudaGetLastError());
	const double bytes = (double)mn * (P + 8);
	printf("  warp cp.async, %d stages: %2d blocks/SM, %6.1f KB in flight per SM: %5.1f%% of copy\n", STAGES, per_sm,
	       per_sm * 8 * (STAGES - 1) * P * 128 / 1024.0, 100 * (bytes / ms / 1e6) / copy_bw);
	return 0;
}

int main() {
	const int sms = device_banner();
	for (long long n : {4096ll, 8192ll, 16384ll}) {
		const long long mn = n * n;
		unsigned char* planes; double* f; void* big;
		CK(cudaMalloc(&planes, mn * P)); CK(cudaMalloc(&f, mn * 8)); CK(cudaMalloc(&big, mn * 8));
		cudaMemset(planes, 1, mn * P); cudaMemset(big, 0, mn * 8);
		const float copy_ms = median_ms([&] { cudaMemcpyAsync(f, big, mn * 8, cudaMemcpyDeviceToDevice); });
		const double copy_bw = 2.0 * mn * 8 / copy_ms / 1e6;
		printf("n=%lld  device copy: %.3f ms, %.0f GB/s\n", n, copy_ms, copy_bw);
		if (getenv("BULK")) {
			run<512, 4>(planes, mn, f, copy_bw, sms);
			run<1024, 2>(planes, mn, f, copy_bw, sms);
			run<1024, 4>(planes, mn, f, copy_bw, sms);
			run<2048, 2>(planes, mn, f, copy_bw, sms);
			run<2048, 3>(planes, mn, f, copy_bw, sms);
			run<4096, 2>(planes, mn, f, copy_bw, sms);
		}
		run<1024, 3>(planes, mn, f, copy_bw, sms);
		run_warp<2>(planes, mn, f, copy_bw, sms);
		run_warp<3>(planes, mn, f, copy_bw, sms);
		run_warp<4>(planes, mn, f, copy_bw, sms);
		run_warp<6>(planes, mn, f, copy_bw, sms);
		cudaFree(planes); cudaFree(f); cudaFree(big);
	}
	return 0;
}
