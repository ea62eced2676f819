// what the standalone experiments of docs/experiments share: an error check for main, the median
// of device-event timings, and the device banner
#pragma once
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

// the median over `runs` timings (device events, one warm-up first) of the work f enqueues, in ms
template <typename F>
float median_ms(F f, int runs = 30) {
	cudaEvent_t a, b;
	cudaEventCreate(&a);
	cudaEventCreate(&b);
	f();
	cudaDeviceSynchronize();
	std::vector<float> t;
	for (int r = 0; r < runs; ++r) {
		cudaEventRecord(a);
		f();
		cudaEventRecord(b);
		cudaEventSynchronize(b);
		float ms;
		cudaEventElapsedTime(&ms, a, b);
		t.push_back(ms);
	}
	std::sort(t.begin(), t.end());
	return t[runs / 2];
}

// prints the device's name and SM count, and returns the count
inline int device_banner() {
	int sms;
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
	cudaDeviceProp prop;
	cudaGetDeviceProperties(&prop, 0);
	printf("device: %s, %d SMs\n", prop.name, sms);
	return sms;
}
