// the split's byte mixes at n = 16384 (docs/PERF.md, issue 4 step 13): does the drop below 85% of
// the device copy come from the distance between planes (a power of two times 2 MiB, so that all
// planes' concurrent writes share their low address bits), or from the order of the tiles (which
// blocks run at the same time)? No arithmetic beyond what keeps the compiler from dropping loads.
// Answer (runs 1 and 2 of step 13): not the distance; the order moves the bytes alone by 3-4 points
// and the real kernel within noise; the store width (8 bytes against 4) by 9-10 points.
//   mix   f64: 8 B in, P bytes out; c64: 16 B in, 3 P bytes out (planes re, im, re + im)
//   tile  the kernel's shape: a block takes ROWS = 128 B / element rows x 256 elements of K (K
//         contiguous input), a lane E consecutive elements of a row, one E-byte store per plane
//   order rows: consecutive blocks take consecutive row groups (split.cu's grid);
//         k: consecutive blocks take consecutive K tiles of one row group; for rows-contiguous
//         input (split_tiles_rows): the K tiles of a group of row tiles, row tiles fastest
//   pad   the plane distance is rows x n + pad bytes
// Standalone: on the GPU machine
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o split_plane_stride split_plane_stride.cu && ./split_plane_stride
#include "timing.cuh"

constexpr int P = 15, K_TILE = 256;

// the plane word of 4 elements (bytes of b[0..3] plus the plane index)
__device__ __forceinline__ unsigned word(const unsigned* b, int l) {
	return ((b[0] + l) & 255) | (((b[1] + l) & 255) << 8) | (((b[2] + l) & 255) << 16) | ((b[3] + l) << 24);
}

// one E-byte store per plane, the words of v, from dst on
template <int PLANES, int E>
__device__ __forceinline__ void store_planes(unsigned char* dst, long long plane_bytes, const unsigned (&v)[E]) {
#pragma unroll
	for (int l = 0; l < PLANES; ++l) {
		unsigned char* d = dst + l * plane_bytes;
		if constexpr (E == 4) *(unsigned*)d = word(v, l);
		else *(uint2*)d = uint2{word(v, l), word(v + 4, l)};
	}
}

// PLANES planes per element, element type of BYTES (8: f64, 16: c64), E elements per lane
template <int BYTES, int PLANES, int E>
__global__ void __launch_bounds__(256) split_tiles(const char* __restrict__ in, unsigned char* __restrict__ planes, long long plane_bytes, int n,
                                                   bool k_order) {
	constexpr int ROWS = 128 / BYTES, SEGMENTS = K_TILE / (32 * E);
	const int row_groups = n / ROWS, k_tiles = n / K_TILE;
	const int b = blockIdx.x, rg = k_order ? b / k_tiles : b % row_groups, kt = k_order ? b % k_tiles : b / row_groups;
	const int lane = threadIdx.x % 32;
	for (int item = threadIdx.x / 32; item < ROWS * SEGMENTS; item += 8) {
		const int r = rg * ROWS + item / SEGMENTS, h = kt * K_TILE + (item % SEGMENTS) * 32 * E + E * lane;
		// coalesced loads of the segment's 32 E elements (lane: elements lane + 32 e), as the kernel's
		// tile loads are; the words only need to depend on them
		const long long first = (long long)r * n + h - E * lane;
		unsigned v[E];
#pragma unroll
		for (int e = 0; e < E; ++e) {
			const char* src = in + (first + 32 * e + lane) * BYTES;
			if constexpr (BYTES == 16) {
				const uint4 x = *(const uint4*)src;
				v[e] = x.x + x.y + x.z + x.w;
			} else {
				const uint2 x = *(const uint2*)src;
				v[e] = x.x + x.y;
			}
		}
		store_planes<PLANES, E>(planes + (long long)r * n + h, plane_bytes, v);
	}
}

// rows-contiguous input (element (r, h) at in[h n + r]): a thread loads its 8 16-byte pieces of
// the tile first (a warp: 4 columns of 128 bytes, as split.cu does), then writes the planes as
// split_tiles does; consecutive blocks take the K tiles of `group` row tiles, row tiles fastest
template <int BYTES, int PLANES, int E>
__global__ void __launch_bounds__(256) split_tiles_rows(const char* __restrict__ in, unsigned char* __restrict__ planes, long long plane_bytes,
                                                        int n, int group) {
	constexpr int ROWS = 128 / BYTES, SEGMENTS = K_TILE / (32 * E), PER = 16 / BYTES;
	const int row_groups = n / ROWS, k_tiles = n / K_TILE;
	const int first = blockIdx.x / (group * k_tiles) * group, in_group = min(group, row_groups - first);
	const int within = blockIdx.x % (group * k_tiles), rg = first + within % in_group, kt = within / in_group;
	unsigned acc = 0;
	uint4 v[8];
#pragma unroll
	for (int i = 0; i < 8; ++i) {
		const int g = 256 * i + threadIdx.x, r = rg * ROWS + (g % 8) * PER, h = kt * K_TILE + g / 8;
		v[i] = *(const uint4*)(in + ((long long)h * n + r) * BYTES);
	}
#pragma unroll
	for (int i = 0; i < 8; ++i) acc += v[i].x + v[i].y + v[i].z + v[i].w;
	const int lane = threadIdx.x % 32;
	for (int item = threadIdx.x / 32; item < ROWS * SEGMENTS; item += 8) {
		const int r = rg * ROWS + item / SEGMENTS, h = kt * K_TILE + (item % SEGMENTS) * 32 * E + E * lane;
		unsigned b[E];
#pragma unroll
		for (int e = 0; e < E; ++e) b[e] = acc + e;
		store_planes<PLANES, E>(planes + (long long)r * n + h, plane_bytes, b);
	}
}

// one sweep of a mix, % of copy per case: the plane distance and the tile order (K-contiguous
// input), or the group of row tiles (rows-contiguous input)
template <int BYTES, int PLANES, int E>
void sweep(const char* x, unsigned char* planes, int n, double copy_bw, const char* name, bool rows_contiguous) {
	const long long mn = (long long)n * n;
	const int blocks = (n / (128 / BYTES)) * (n / K_TILE);
	auto pct = [&](auto launch) { return 100 * ((double)mn * (BYTES + PLANES) / median_ms(launch) / 1e6) / copy_bw; };
	printf("  %-10s%s", name, rows_contiguous ? " rows contiguous, group of row tiles:" : "");
	if (rows_contiguous) {
		for (int group : {1, 2, 4, 8, 16, 32, 1 << 20})
			printf("  %d %5.1f%%", group, pct([&] { split_tiles_rows<BYTES, PLANES, E><<<blocks, 256>>>(x, planes, mn, n, group); }));
	} else {
		for (long long pad : {0ll, 256ll, 4096ll + 256, 65536ll + 768, 1048576ll + 4352})
			for (bool k_order : {false, true})
				printf("  pad %7lld %s %5.1f%%", pad, k_order ? "k   " : "rows",
				       pct([&] { split_tiles<BYTES, PLANES, E><<<blocks, 256>>>(x, planes, mn + pad, n, k_order); }));
	}
	printf("\n");
}

// `./split_plane_stride rows`: the rows-contiguous sweep only
int main(int argc, char** argv) {
	const bool rows_only = argc > 1;
	device_banner();
	for (int n : {8192, 16384}) {
		const long long mn = (long long)n * n;
		unsigned char* planes; char* x; void* copy_b;
		CK(cudaMalloc(&planes, mn * 3 * P + 3 * P * (1048576ll + 4352)));
		CK(cudaMalloc(&x, mn * 16));
		CK(cudaMalloc(&copy_b, mn * 16));
		cudaMemset(planes, 1, mn * 3 * P); cudaMemset(x, 0, mn * 16);
		const float copy_ms = median_ms([&] { cudaMemcpyAsync(copy_b, x, mn * 16, cudaMemcpyDeviceToDevice); });
		const double copy_bw = 2.0 * mn * 16 / copy_ms / 1e6;
		printf("n=%d  device copy (c64 matrix): %.3f ms, %.0f GB/s\n", n, copy_ms, copy_bw);
		if (!rows_only) {
			sweep<8, P, 8>(x, planes, n, copy_bw, "f64 w8", false);
			sweep<16, 3 * P, 4>(x, planes, n, copy_bw, "c64 w4", false);
			sweep<16, 3 * P, 8>(x, planes, n, copy_bw, "c64 w8", false);
		}
		sweep<8, P, 8>(x, planes, n, copy_bw, "f64 w8", true);
		sweep<16, 3 * P, 8>(x, planes, n, copy_bw, "c64 w8", true);
		CK(cudaGetLastError());
		cudaFree(planes); cudaFree(x); cudaFree(copy_b);
	}
}
