//! products recorded into a CUDA graph that a caller's stream is capturing. The graph gets three
//! nodes (see [`Capture::host_step`]): a word cleared, a host node that hands the product to a
//! replay lane of the GPU, and a wait until the lane has set the word. At each replay the lane's
//! thread runs the product as an uncaptured call would (statistics, screen, bound, plan, the
//! emulated or the native product, on the lane's own pipeline), with the graph's work before it
//! complete, and sets the word after it: every replay decides its plan on its own data. The graph
//! keeps the recording alive, and gives it back when it is destroyed

use crate::Error;
use crate::gpu::orchestration::queued::{self, Kind, Lane};
use crate::gpu::runtime::capture::{self, Capture};
use crate::gpu::runtime::context::{Gpu, facts};
use crate::gpu::runtime::fence::Word;
use crate::pending::PendingReport;
use crate::report::Report;
use cudarc::driver::sys;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Instant;

/// what a replay runs: the product, on a lane's pipeline, to its report
pub(crate) type Replayed = Box<dyn Fn(&Gpu) -> Result<Report, Error> + Send + Sync>;

/// a product recorded into a graph: its work, the word the graph waits on, its report (filled at
/// each replay) and the lane that runs it
pub(crate) struct Recording {
	work: Replayed,
	pub word: Word,
	pub report: PendingReport,
	lane: &'static Lane,
}

impl Recording {
	/// one replay's product on `gpu`, the lane's pipeline
	pub fn run(&self, gpu: &Gpu) -> Result<Report, Error> {
		(self.work)(gpu)
	}
}

/// what the graph keeps: the recording, whose lane hears when the graph is gone
struct Kept(Arc<Recording>);

impl Drop for Kept {
	fn drop(&mut self) {
		self.0.lane.forget();
	}
}

/// `work` (a product on views of GPU `ordinal`, on the portable path's code where `portable`)
/// recorded into `capture`, the graph `caller` is capturing: its report comes at each replay.
/// [`Error::Placement`] where the GPU has no replay lanes (none made yet: they are made at a
/// product outside a capture; or they could not be made), or the driver refuses the graph's
/// nodes; nothing is then added to the graph
pub(crate) fn record(
	(ordinal, caller): (usize, sys::CUstream),
	capture: Capture,
	work: Replayed,
	portable: bool,
) -> Result<PendingReport, Error> {
	let Some(lane) = queued::lane_of(ordinal, caller, (portable, Kind::Replays))? else {
		let why = queued::none_because(ordinal, Kind::Replays).unwrap_or("they could not be made");
		return Err(capture::refused(&format!("the GPU has no lanes to replay it on: {why}")));
	};
	let ctx = &facts(ordinal)?.ctx;
	let recording = Arc::new(Recording {
		work,
		word: Word::take(ctx, ordinal)?,
		report: PendingReport::recorded(),
		lane,
	});
	let data = Arc::as_ptr(&recording).cast_mut().cast::<c_void>();
	// kept by the graph before any node can call the lane with it
	lane.recorded();
	capture::keep_with_graph(capture.graph(), Kept(recording.clone()))?;
	let added = capture.host_step(ctx.cu_ctx(), recording.word.address(), (fired, data));
	added.map_err(|e| capture::refused(&format!("the driver refused its nodes: {e}")))?;
	Ok(recording.report.clone())
}

/// the host node of a replay: the recording at `data` handed to its lane's thread, with the time
/// the node ran; no CUDA call (a host node may make none)
///
/// # Safety
/// `data` is a recording that the graph keeps alive
unsafe extern "C" fn fired(data: *mut c_void) {
	let at = Instant::now();
	let recording = data.cast_const().cast::<Recording>();
	// a panic must not unwind into the driver
	let _ = catch_unwind(AssertUnwindSafe(|| {
		// SAFETY: a recording of an `Arc` that the graph holds while its nodes can run: one more
		// reference taken for the lane's job
		let recording = unsafe {
			Arc::increment_strong_count(recording);
			Arc::from_raw(recording)
		};
		let lane = recording.lane;
		lane.replay_later(recording, at);
	}));
}
