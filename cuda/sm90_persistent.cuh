// emugemm: the warp-specialised persistent chassis of the wgmma kernels (cuda/sm90_chassis.cu,
// cuda/sm90_scheme1_fused.cu): a ring of shared-memory stages guarded by mbarriers, filled by TMA from one
// producer thread and drained by two consumer warpgroups; the register split between the producer
// and the consumers (setmaxnreg); the persistent walk of the output tiles. What a kernel loads into a
// stage and what it computes from it stay in the kernel.
#pragma once
#include <stdint.h>
#include "common.cuh"
#include "wgmma.cuh"

namespace emu::hopper {

// the dynamic shared memory of a ring of `stages` stages of `stage_bytes` each: the stages, 1024
// bytes of alignment slack (the 128-byte swizzle wants 1024-byte aligned stages, and the dynamic
// shared memory's start is not guaranteed to be) and a full and an empty mbarrier (8 bytes each) per
// stage
__host__ __device__ constexpr int ring_bytes(int stages, int stage_bytes) { return stages * stage_bytes + 1024 + 16 * stages; }

// the ring: STAGES stages of STAGE_BYTES at the first 1024-byte boundary of the dynamic shared
// memory, then a full barrier per stage, then an empty one per stage. Step `it` of the producer and
// of each consumer warpgroup takes stage it % STAGES in round it / STAGES; a barrier's phase parity
// alternates with the round (the producer's first round finds every stage free). CLUSTER: the CTAs
// whose producers multicast into each other's stages, so that a stage is refilled only once the
// consumers of every CTA of the cluster released it
template <int STAGES_, int STAGE_BYTES_, int CLUSTER_ = 1>
struct Ring {
	static constexpr int STAGES = STAGES_, STAGE_BYTES = STAGE_BYTES_, CLUSTER = CLUSTER_;
	// the consumer warpgroups per CTA: each releases every stage once per round
	static constexpr int CONSUMERS = 2;
	static constexpr int BYTES = ring_bytes(STAGES, STAGE_BYTES);
	uint32_t base;

	// the ring at the start of the kernel's dynamic shared memory
	__device__ Ring() {
		extern __shared__ __align__(1024) uint8_t smem_raw[];
		base = ((uint32_t)__cvta_generic_to_shared(smem_raw) + 1023) & ~1023u;
	}

	// the shared-memory addresses of stage s, of its full barrier and of its empty barrier
	__device__ uint32_t stage(int s) const { return base + s * STAGE_BYTES; }
	__device__ uint32_t full(int s) const { return base + STAGES * STAGE_BYTES + 8 * s; }
	__device__ uint32_t empty(int s) const { return base + STAGES * STAGE_BYTES + 8 * STAGES + 8 * s; }
	// the first byte past the ring's barriers, where a kernel's own shared memory may start
	__device__ uint32_t end() const { return empty(STAGES); }

	// one thread, before any other touches the ring: a full barrier completes on the producer's
	// one arrival (with the stage's bytes, bar_expect), an empty one on the releases of the
	// consumer warpgroups of every CTA of the cluster; the fence makes the initialisation visible
	// to the cluster's TMA and remote arrivals
	__device__ void init() const {
		for (int s = 0; s < STAGES; ++s) {
			bar_init(full(s), 1);
			bar_init(empty(s), CONSUMERS * CLUSTER);
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}

	// the stage of step `it`
	__device__ int slot(int it) const { return it % STAGES; }

	// the producer's step `it`: waits until its stage is free, then arms the stage's full barrier
	// for `bytes` of loads (completing on full(s)); returns the stage
	__device__ int acquire(int it, uint32_t bytes) const {
		const int s = slot(it);
		bar_wait(empty(s), ((it / STAGES) & 1) ^ 1);
		bar_expect(full(s), bytes);
		return s;
	}

	// a consumer's step `it`: waits until the loads of its stage have landed; returns the stage
	__device__ int wait(int it) const {
		const int s = slot(it);
		bar_wait(full(s), (it / STAGES) & 1);
		return s;
	}

	// every thread of the CTA, before the warpgroups split: thread 0 initialises the ring, a
	// barrier (of the cluster where CLUSTER > 1: no multicast may land before the peer's barriers
	// exist) publishes it
	__device__ void start() const {
		if (threadIdx.x == 0) init();
		if constexpr (CLUSTER == 1) __syncthreads();
		else cluster_sync();
	}

	// every thread of the CTA, last: with clusters, a cluster barrier, so that no CTA leaves while
	// its peer may still arrive on its barriers
	__device__ void finish() const {
		if constexpr (CLUSTER > 1) cluster_sync();
	}

	// a consumer warpgroup's release of stage s (one thread, after its wgmma reads of the stage
	// have completed, wgmma_wait): in every CTA of the cluster, whose producers multicast into it
	__device__ __forceinline__ void release(int s) const {
		if constexpr (CLUSTER == 1) {
			bar_arrive(empty(s));
		} else {
#pragma unroll
			for (int r = 0; r < CLUSTER; ++r) bar_arrive_cluster(empty(s), r);
		}
	}

	// a consumer warpgroup's end of its step on stage s, every thread, once its wgmma reading the
	// stage are issued: commits them and waits for them to complete (their reads of the stage are
	// then done, not merely ordered), then releases the stage
	__device__ __forceinline__ void retire(int s) const {
		wgmma_commit();
		wgmma_wait<0>();
		if (threadIdx.x % 128 == 0) release(s);
	}
};

// a CTA's output tile: rows m0.., columns n0.. of plane `plane`
struct Tile {
	int plane, m0, n0;
};

// the persistent walk of `planes` planes of BM x BN output tiles: a unit is CLUSTER vertically
// adjacent tiles, one per CTA of the cluster (rank r takes the r-th); unit index = (plane, unit of
// the plane), plane outermost. The clusters (a single CTA is a cluster of one) take the units
// u = cluster, cluster + clusters, ... (`for (u = first; u < units; u += stride)`, first and stride
// read when the Schedule is made), rasterised in groups of 8 tile rows along M so that the operand
// panels of the units running at once stay in L2
//
// A walk over a triangle of a square output (a rank-k update's) passes over the units that hold
// no entry of it: triangle 0 keeps every unit, TRIANGLE_LOWER the units with an entry (i, j),
// i >= j, TRIANGLE_UPPER those with one i <= j, where j counts from the output's first column
// `first_col` (a column tile's). Its producer and consumers skip the same units, so their ring
// steps stay in step
template <int BM, int BN, int CLUSTER = 1>
struct Schedule {
	int tiles_n, units_m, units, first, stride, rank, triangle, first_col;
	// tiles_m x tiles_n tiles per plane (the caller's ceilings of m / BM and n / BN)
	__device__ Schedule(int tiles_m, int tiles_n, int planes, int triangle = 0, int first_col = 0)
	    : tiles_n(tiles_n),
	      units_m((tiles_m + CLUSTER - 1) / CLUSTER),
	      units(planes * units_m * tiles_n),
	      first(CLUSTER == 1 ? (int)blockIdx.x : cluster_id()),
	      stride(CLUSTER == 1 ? (int)gridDim.x : cluster_count()),
	      rank(CLUSTER == 1 ? 0 : cluster_rank()),
	      triangle(triangle),
	      first_col(first_col) {}

	// whether unit u of the walk holds no entry of the triangle: every CTA of its cluster skips it
	__device__ bool skips(int u) const {
		if (triangle == 0) return false;
		const int2 at = grouped_raster(u % (units_m * tiles_n), units_m, tiles_n, 8 / CLUSTER);
		const int row0 = at.x * CLUSTER * BM, row1 = row0 + CLUSTER * BM - 1;
		const int col0 = first_col + at.y * BN, col1 = col0 + BN - 1;
		return triangle == TRIANGLE_LOWER ? row1 < col0 : row0 > col1;
	}

	// this CTA's tile of unit u of plane `plane` (u < units_m tiles_n; a one-plane walk's units
	// as they are, without the division)
	__device__ Tile tile(int plane, int u) const {
		const int2 at = grouped_raster(u, units_m, tiles_n, 8 / CLUSTER);
		return Tile{plane, (at.x * CLUSTER + rank) * BM, at.y * BN};
	}

	// this CTA's tile of unit u of the walk
	__device__ Tile tile(int u) const {
		const int per_plane = units_m * tiles_n;
		return tile(u / per_plane, u % per_plane);
	}
};

// the register split of the chassis' 384 threads (warpgroup 0 the producer, warpgroups 1 and 2 the
// consumers), once the ring is started, each warpgroup calling its own: the producer warpgroup
// drops to 40 registers per thread (one thread issues the loads), the consumer warpgroups rise to
// 232 for their accumulators. The kernels are compiled for 384 threads and one block per SM
// (__launch_bounds__(384, 1): 168 registers per thread), and 40 + 2 x 232 = 3 x 168 keeps the
// block's total
__device__ __forceinline__ void producer_registers() { asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n"); }
__device__ __forceinline__ void consumer_registers() { asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n"); }

}  // namespace emu::hopper
