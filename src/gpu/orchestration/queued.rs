//! products on device views that return once queued: each GPU has [`LANES`] lanes, each a
//! pipeline of its own driven by a thread of its own. A call records where the caller's stream
//! stands, makes that stream wait for the lane's [`Fence`] to pass the call's number, and hands
//! the product to the lane; the lane's thread orders its pipeline after the caller's work,
//! decides the plan (waiting on the host for the statistics, on its own thread), enqueues the
//! product and raises the fence. The caller's thread waits for nothing, holds no lock across
//! device work, and two callers on different streams of one GPU run on different lanes

use crate::gpu::orchestration::recorded::Recording;
use crate::gpu::runtime::capture::{self, Relaxed};
use crate::gpu::runtime::context::{Device, Gpu, MAX_GPUS, facts, gpu_at, kept_scratch_of};
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::fence::Fence;
use crate::pending::PendingReport;
use crate::{Error, Report};
use cudarc::driver::{CudaEvent, CudaStream, result, sys};
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Instant;

/// the lanes of one GPU: two, so that a second caller's product computes while the first lane's
/// thread waits for statistics, and each lane's workspace is kept between its products
pub(crate) const LANES: usize = 2;

/// what a GPU's lanes serve: products queued by their calls, or the replays of products recorded
/// into graphs. Each has lanes of its own, so that a replay, whose graph's stream waits for it,
/// never waits behind a queued product that waits for that stream
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
	Queued,
	Replays,
}

impl Kind {
	/// the pipeline copy of the kind's first lane on a GPU: after those a batch spreads over, so
	/// that a batch, the queued products and the replays do not wait for each other's locks
	fn first_copy(self) -> usize {
		match self {
			Kind::Queued => super::batch::LANES,
			Kind::Replays => super::batch::LANES + LANES,
		}
	}

	/// the name of its lanes' threads
	fn name(self) -> &'static str {
		match self {
			Kind::Queued => "lane",
			Kind::Replays => "replays",
		}
	}
}

/// what a lane runs: the product, on its pipeline, to its report
pub(crate) type Work = Box<dyn FnOnce(&Gpu) -> Result<Report, Error> + Send>;

/// what a lane's thread does next
enum Job {
	/// a product queued by its call
	Queued(Queued),
	/// a replay of a product recorded into a graph, whose work before it has completed
	Replay(Arc<Recording>, Instant),
	/// the lane's workspace freed, its last recording's graph destroyed
	Release,
}

/// one queued product: its work, the number the lane's fence reaches once it is enqueued, the
/// event the caller's stream recorded before it, and where its report goes
struct Queued {
	work: Work,
	number: u32,
	before: CudaEvent,
	report: PendingReport,
	submitted: Instant,
}

/// a pipeline, its thread and its queue
pub(crate) struct Lane {
	device: Device,
	fence: Fence,
	/// a stream of the lane's own, where the fence is raised when the pipeline cannot be had
	spare: Arc<CudaStream>,
	queue: Mutex<Queue>,
	work: Condvar,
	started: OnceLock<Result<(), Error>>,
	/// the portable path's kernels loaded, by the first caller that asks for them
	portable: OnceLock<Result<(), Error>>,
	/// the recordings of products into graphs that live and run here
	recordings: AtomicUsize,
}

#[derive(Default)]
struct Queue {
	jobs: VecDeque<Job>,
	/// the number given to the last job queued
	issued: u32,
}

/// the product `work` queued on a lane of GPU `ordinal` for the stream `caller` (live, of that
/// GPU's primary context), on the portable path's code where `portable`: `caller` waits for the
/// product's work, and the report comes when the lane has enqueued it. `None` where the GPU has no
/// lanes (the product then runs on the calling thread)
pub(crate) fn submit(ordinal: usize, caller: sys::CUstream, work: Work, portable: bool) -> Result<Option<PendingReport>, Error> {
	let Some(lane) = lane_of(ordinal, caller, (portable, Kind::Queued))? else {
		return Ok(None);
	};
	let flags = Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
	let before = facts(ordinal)?.ctx.new_event(flags).map_err(driver)?;
	// SAFETY: `caller` is a live stream of this GPU's primary context, the event is that context's
	unsafe { result::event::record(before.cu_event(), caller) }.map_err(driver)?;
	let report = PendingReport::to_come();
	let mut queue = lane.queue.lock().unwrap_or_else(|e| e.into_inner());
	let number = queue.issued.wrapping_add(1);
	// the caller's wait first: where it cannot be enqueued, nothing is queued
	lane.fence.wait(caller, number)?;
	queue.issued = number;
	queue.jobs.push_back(Job::Queued(Queued {
		work,
		number,
		before,
		report: report.clone(),
		submitted: Instant::now(),
	}));
	lane.work.notify_one();
	Ok(Some(report))
}

/// the lane of `kind` on GPU `ordinal` that products from `caller` run on, its thread started
/// and, where `portable`, the portable path's kernels loaded; `None` where the GPU has no lanes.
/// A replay lane must have been made ([`ready_to_replay`]): it is asked for during a capture,
/// which making it would end
pub(crate) fn lane_of(ordinal: usize, caller: sys::CUstream, (portable, kind): (bool, Kind)) -> Result<Option<&'static Lane>, Error> {
	let Some(lanes) = lanes(ordinal, kind)? else {
		return Ok(None);
	};
	let lane = &lanes[assigned(ordinal, caller)];
	if portable {
		if kind == Kind::Replays && lane.portable.get().is_none() {
			return Err(unready());
		}
		// before the caller's stream waits for the lane (once per lane: this waits for its
		// pipeline's lock)
		lane.load_portable()?;
	}
	lane.started
		.get_or_init(|| {
			std::thread::Builder::new()
				.name(format!("emugemm-gpu{ordinal}-{}{}", kind.name(), lane.device.1 - kind.first_copy()))
				.spawn(move || lane.serve())
				.map(|_| ())
				.map_err(|e| Error::gpu(format!("a lane's thread cannot start: {e}")))
		})
		.clone()?;
	Ok(Some(lane))
}

/// the replay lanes of GPU `ordinal` made, where they are not yet, and, where `portable`, the
/// portable path's kernels loaded on them: called outside any capture (making a pipeline loads
/// modules and waits for the device, which would end a capture in progress). A GPU whose lanes
/// cannot be made has none, and its products are not recorded
pub(crate) fn ready_to_replay(ordinal: usize, portable: bool) -> Result<(), Error> {
	let lanes = made(ordinal, Kind::Replays, slot(ordinal, Kind::Replays)?)?;
	for lane in lanes.into_iter().flatten().filter(|_| portable) {
		lane.load_portable()?;
	}
	Ok(())
}

/// the refusal of a product captured before its GPU's replay lanes were made
fn unready() -> Error {
	capture::refused(
		"the GPU's replay lanes are made at a product on device views outside any capture, with recording on, and none has run there yet",
	)
}

/// the device memory the lane of `kind` that a product from `caller` on GPU `ordinal` runs on can
/// take now: what the driver reports free and the scratch that lane keeps; the first pipeline's
/// where the GPU has no lanes
pub(crate) fn available(ordinal: usize, caller: sys::CUstream, kind: Kind) -> Result<usize, Error> {
	let copy = match lanes(ordinal, kind)? {
		Some(lanes) => lanes[assigned(ordinal, caller)].device.1,
		None => 0,
	};
	let (free, _) = facts(ordinal)?.ctx.mem_get_info().map_err(driver)?;
	Ok(free.saturating_add(kept_scratch_of((ordinal, copy))))
}

/// the lanes of `kind` of one GPU: made once, or why they cannot be
type Lanes = OnceLock<Result<Vec<Lane>, String>>;

/// where the lanes of `kind` of GPU `ordinal` are kept
fn slot(ordinal: usize, kind: Kind) -> Result<&'static Lanes, Error> {
	static GPUS: [[Lanes; 2]; MAX_GPUS] = [const { [const { OnceLock::new() }; 2] }; MAX_GPUS];
	GPUS.get(ordinal)
		.map(|kinds| &kinds[kind as usize])
		.ok_or_else(|| Error::gpu(format!("GPU {ordinal}: no lanes beyond the GPUs this crate drives")))
}

/// the lanes of `kind` of GPU `ordinal`: the queued products' made on first use, the replays'
/// only by [`ready_to_replay`] (an error where they are not made yet); `None` where they cannot
/// be made (a driver that runs no stream memory operations)
fn lanes(ordinal: usize, kind: Kind) -> Result<Option<&'static [Lane]>, Error> {
	let slot = slot(ordinal, kind)?;
	match (slot.get(), kind) {
		(None, Kind::Replays) => Err(unready()),
		_ => made(ordinal, kind, slot),
	}
}

/// why GPU `ordinal` has no lanes of `kind`, where it has none
pub(crate) fn none_because(ordinal: usize, kind: Kind) -> Option<&'static str> {
	slot(ordinal, kind).ok()?.get()?.as_ref().err().map(String::as_str)
}

/// the lanes of `kind` of GPU `ordinal` kept in `slot`, made there where they are not yet (or
/// those another thread made first); `None`, kept too, where they cannot be: where the driver
/// loads kernels lazily, or runs no stream memory operations
fn made(ordinal: usize, kind: Kind, slot: &'static Lanes) -> Result<Option<&'static [Lane]>, Error> {
	if let Some(lanes) = slot.get() {
		return Ok(lanes.as_deref().ok());
	}
	let ctx = &facts(ordinal)?.ctx;
	let made = loads_eagerly().and_then(|()| {
		(0..LANES)
			.map(|i| {
				let device = (ordinal, kind.first_copy() + i);
				// the pipeline made and its kernels loaded before any caller waits for it
				let g = gpu_at(device)?;
				g.load_every_kernel(g.arch)?;
				drop(g);
				Ok(Lane {
					device,
					fence: Fence::new(ctx)?,
					spare: ctx.new_stream().map_err(driver)?,
					queue: Mutex::default(),
					work: Condvar::new(),
					started: OnceLock::new(),
					portable: OnceLock::new(),
					recordings: AtomicUsize::new(0),
				})
			})
			.collect::<Result<Vec<Lane>, Error>>()
	});
	let lanes = made.map_err(|e| {
		log::warn!(
			"emugemm: GPU {ordinal} has no {kind:?} lanes ({e}): products on device views wait on the host for their plan, and are not recorded into graphs"
		);
		e.to_string()
	});
	Ok(slot.get_or_init(|| lanes).as_deref().ok())
}

/// `Ok` where the driver loads every kernel of a module with the module
/// (`CUDA_MODULE_LOADING=EAGER`): a kernel loaded lazily, at its first launch (cuBLAS's, which
/// the lanes launch), may wait for the whole context to synchronise, and so for ever for a stream
/// that waits on a lane (the caller's on its fence, a graph's on its word). Necessary, not
/// sufficient: on an H100 a lane's first product had not returned after 45 s with eager loading
/// either
fn loads_eagerly() -> Result<(), Error> {
	let mut mode = sys::CUmoduleLoadingMode::CU_MODULE_LAZY_LOADING;
	// SAFETY: a writable local
	unsafe { sys::cuModuleGetLoadingMode(&mut mode) }.result().map_err(driver)?;
	match mode {
		sys::CUmoduleLoadingMode::CU_MODULE_EAGER_LOADING => Ok(()),
		_ => Err(Error::gpu(
			"the CUDA driver loads kernels lazily: start the process with CUDA_MODULE_LOADING=EAGER",
		)),
	}
}

/// the lane of the stream `caller` on GPU `ordinal`: the one its earlier products went to, or,
/// for a stream new here, the next in turn (the per-thread default stream is each thread's own)
fn assigned(ordinal: usize, caller: sys::CUstream) -> usize {
	/// streams remembered, the oldest forgotten first
	const REMEMBERED: usize = 256;
	type Key = (usize, usize, u64);
	static STREAMS: Mutex<(Vec<(Key, usize)>, usize)> = Mutex::new((Vec::new(), 0));
	let thread = match caller as usize {
		2 => thread_key(),
		_ => 0,
	};
	let key = (ordinal, caller as usize, thread);
	let mut streams = STREAMS.lock().unwrap_or_else(|e| e.into_inner());
	let (known, turn) = &mut *streams;
	if let Some(&(_, lane)) = known.iter().find(|s| s.0 == key) {
		return lane;
	}
	let lane = *turn % LANES;
	*turn += 1;
	if known.len() == REMEMBERED {
		known.remove(0);
	}
	known.push((key, lane));
	lane
}

/// a number of the calling thread's own
fn thread_key() -> u64 {
	use std::hash::{Hash, Hasher};
	let mut hasher = std::collections::hash_map::DefaultHasher::new();
	std::thread::current().id().hash(&mut hasher);
	hasher.finish()
}

impl Lane {
	/// the lane's thread: each job in turn, for ever. Its capture mode is relaxed: a replay's
	/// work runs while other threads of the program may be capturing graphs
	fn serve(&self) {
		if let Err(e) = Relaxed::new().map(std::mem::forget) {
			log::warn!("emugemm: a lane of GPU {} keeps its capture mode: {e}", self.device.0);
		}
		loop {
			let job = {
				let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
				loop {
					if let Some(job) = queue.jobs.pop_front() {
						break job;
					}
					queue = self.work.wait(queue).unwrap_or_else(|e| e.into_inner());
				}
			};
			match job {
				Job::Queued(queued) => self.run(queued),
				Job::Replay(recording, fired) => self.replay(&recording, fired),
				Job::Release => self.release(),
			}
		}
	}

	/// `job` appended to the lane's queue
	fn push(&self, job: Job) {
		self.queue.lock().unwrap_or_else(|e| e.into_inner()).jobs.push_back(job);
		self.work.notify_one();
	}

	/// a replay of `recording` queued, from the graph's host node that `fired` (no CUDA call)
	pub fn replay_later(&self, recording: Arc<Recording>, fired: Instant) {
		self.push(Job::Replay(recording, fired));
	}

	/// the portable path's kernels loaded on the lane's pipeline, once
	fn load_portable(&self) -> Result<(), Error> {
		self.portable
			.get_or_init(|| gpu_at(self.device)?.load_every_kernel(crate::arch::Arch::Portable))
			.clone()
	}

	/// one more recording lives here
	pub fn recorded(&self) {
		self.recordings.fetch_add(1, Ordering::Relaxed);
	}

	/// a recording here is gone with its graph (no CUDA call): the last one's workspace is freed
	/// by the lane's thread
	pub fn forget(&self) {
		if self.recordings.fetch_sub(1, Ordering::AcqRel) == 1 {
			self.push(Job::Release);
		}
	}

	/// `job` on the lane's pipeline, after the caller's work that came before it; the fence raised
	/// to its number whatever happened, then its report given
	fn run(&self, job: Queued) {
		let Queued {
			work,
			number,
			before,
			report,
			submitted,
		} = job;
		let result = match gpu_at(self.device) {
			Ok(g) => {
				let ran = g.stream.wait(&before).map_err(driver).and_then(|()| {
					catch_unwind(AssertUnwindSafe(|| work(&g))).unwrap_or_else(|_| Err(Error::gpu("a queued product panicked")))
				});
				let raised = self.fence.raise(g.stream.cu_stream(), number);
				ran.and_then(|report| raised.map(|()| report))
			},
			Err(e) => {
				// the caller's stream must not wait for ever: the fence is raised after its own work
				let raised = self
					.spare
					.wait(&before)
					.map_err(driver)
					.and_then(|()| self.fence.raise(self.spare.cu_stream(), number));
				if let Err(r) = raised {
					log::error!("emugemm: a lane of GPU {} cannot release its caller's stream: {r}", self.device.0);
				}
				Err(e)
			},
		};
		if let Err(e) = &result {
			log::error!("emugemm: a product on device views failed after its call returned: {e}");
		}
		report.fill(result.map(|r| crate::report::finished(r, submitted)));
	}

	/// one replay of `recording`, whose graph's host node `fired`: the product decided and
	/// enqueued on the lane's pipeline (the graph's work before it has completed), its report
	/// given, then the graph's word raised after the product, so that the graph goes on once
	/// the product is computed, and whatever happened
	fn replay(&self, recording: &Recording, fired: Instant) {
		let (result, stream) = match gpu_at(self.device) {
			Ok(g) => {
				let ran =
					catch_unwind(AssertUnwindSafe(|| recording.run(&g))).unwrap_or_else(|_| Err(Error::gpu("a recorded product panicked")));
				(ran, g.stream.cu_stream())
			},
			Err(e) => (Err(e), self.spare.cu_stream()),
		};
		if let Err(e) = &result {
			log::error!("emugemm: a replay of a product recorded into a CUDA graph failed: {e}");
		}
		recording.report.fill(result.map(|r| crate::report::finished(r, fired)));
		if let Err(e) = recording.word.raise(stream, 1) {
			log::error!("emugemm: a lane of GPU {} cannot release a graph's replay: {e}", self.device.0);
		}
	}

	/// the lane's scratch freed (stream-ordered: after the work enqueued on its pipeline), where no
	/// recording lives here any more
	fn release(&self) {
		if self.recordings.load(Ordering::Acquire) > 0 {
			return;
		}
		match gpu_at(self.device) {
			Ok(g) => g.free_kept_scratch(),
			Err(e) => log::warn!("emugemm: a lane of GPU {} keeps its workspace: {e}", self.device.0),
		}
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	/// a stream keeps its lane; new streams take the lanes in turn; the per-thread default stream
	/// is each thread's own; another GPU's stream of the same address is another stream
	#[test]
	fn streams_keep_their_lane_and_new_ones_take_turns() {
		let stream = |address: usize| address as sys::CUstream;
		let first = assigned(3, stream(0x7000));
		let second = assigned(3, stream(0x7100));
		assert_ne!(first, second, "two new streams in a row share a lane");
		for _ in 0..3 {
			assert_eq!(assigned(3, stream(0x7000)), first);
			assert_eq!(assigned(3, stream(0x7100)), second);
		}
		let here = assigned(3, stream(2));
		let there = std::thread::spawn(move || assigned(3, stream(2))).join().unwrap();
		assert_ne!(here, there, "two threads' per-thread default streams share a lane");
		assert_eq!(assigned(3, stream(2)), here);
		let elsewhere = assigned(4, stream(0x7000));
		assert_eq!(assigned(4, stream(0x7000)), elsewhere);
	}
}
