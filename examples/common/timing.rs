//! device-event timing for the examples that compare products on a caller's stream
// each example that includes this file uses some of its functions
#![allow(dead_code)]

use cudarc::driver::CudaStream;
use cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;
use std::sync::Arc;

/// the median device time in ms of `runs` calls of `f` on `stream` (after one untimed call), by
/// timing events recorded around each call: the time the stream takes from the call's first
/// enqueued work to its last, host waits between them included
pub fn median_ms(stream: &Arc<CudaStream>, runs: usize, mut f: impl FnMut()) -> f32 {
	f();
	let mut times: Vec<f32> = (0..runs.max(1))
		.map(|_| {
			let start = stream.record_event(Some(CU_EVENT_DEFAULT)).unwrap();
			f();
			let end = stream.record_event(Some(CU_EVENT_DEFAULT)).unwrap();
			end.synchronize().unwrap();
			start.elapsed_ms(&end).unwrap()
		})
		.collect();
	times.sort_by(f32::total_cmp);
	times[times.len() / 2]
}

/// the median host time in ms of `runs` calls of `f` (after one untimed call): the time the call
/// takes to return, `stream` drained before each
pub fn median_host_ms(stream: &Arc<CudaStream>, runs: usize, mut f: impl FnMut()) -> f32 {
	f();
	let mut times: Vec<f32> = (0..runs.max(1))
		.map(|_| {
			stream.synchronize().unwrap();
			let start = std::time::Instant::now();
			f();
			start.elapsed().as_secs_f32() * 1e3
		})
		.collect();
	stream.synchronize().unwrap();
	times.sort_by(f32::total_cmp);
	times[times.len() / 2]
}

/// the medians of the device time and of the host time, in ms, of `runs` calls of `f` on `stream`
/// (after one untimed call), both from the same calls: the events' span as [`median_ms`] times it,
/// and the time the call takes to return, `stream` drained before each
pub fn median_spans(stream: &Arc<CudaStream>, runs: usize, mut f: impl FnMut()) -> (f32, f32) {
	f();
	let (mut device, mut host): (Vec<f32>, Vec<f32>) = (0..runs.max(1))
		.map(|_| {
			stream.synchronize().unwrap();
			let start = stream.record_event(Some(CU_EVENT_DEFAULT)).unwrap();
			let returned = std::time::Instant::now();
			f();
			let host = returned.elapsed().as_secs_f32() * 1e3;
			let end = stream.record_event(Some(CU_EVENT_DEFAULT)).unwrap();
			end.synchronize().unwrap();
			(start.elapsed_ms(&end).unwrap(), host)
		})
		.unzip();
	let median = |v: &mut Vec<f32>| {
		v.sort_by(f32::total_cmp);
		v[v.len() / 2]
	};
	(median(&mut device), median(&mut host))
}
