//! a caller's stream being captured into a CUDA graph: whether it is, the capture's graph and
//! where the stream stands in it, the nodes a product adds there (through the driver's capture
//! dependency API), the thread's capture mode relaxed while the library makes what a recording
//! needs, and what the graph keeps alive until it is destroyed

use crate::Error;
use crate::gpu::runtime::errors::driver;
use cudarc::driver::sys;
use std::ffi::c_void;
use std::ptr::null_mut;

/// a capture in progress on a stream: its graph and the nodes the stream's next work depends on
pub(crate) struct Capture {
	stream: sys::CUstream,
	graph: sys::CUgraph,
	dependencies: Vec<sys::CUgraphNode>,
}

/// the capture in progress on `stream`, or `None` where it is not capturing. A capture that was
/// invalidated, and one whose stream's next work depends on its last nodes through edges other
/// than the default (a programmatic launch's), is [`Error::Placement`]: nothing is added there
pub(crate) fn capturing(stream: sys::CUstream) -> Result<Option<Capture>, Error> {
	let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
	let (mut id, mut graph, mut count) = (0, null_mut(), 0usize);
	let (mut nodes, mut edges): (*const sys::CUgraphNode, *const sys::CUgraphEdgeData) = (std::ptr::null(), std::ptr::null());
	// SAFETY: `stream` is live or a default one; every output is a writable local
	unsafe { sys::cuStreamGetCaptureInfo_v3(stream, &mut status, &mut id, &mut graph, &mut nodes, &mut edges, &mut count) }
		.result()
		.map_err(driver)?;
	match status {
		sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE => return Ok(None),
		sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE => {},
		_ => return Err(refused("its capture has been invalidated")),
	}
	// SAFETY: the driver's arrays of `count` entries, valid until the stream's next capture call
	let (dependencies, edges) = unsafe {
		(
			slice(nodes, count).to_vec(),
			match edges.is_null() {
				true => &[][..],
				false => slice(edges, count),
			},
		)
	};
	if edges.iter().any(|e| e.type_ != 0 || e.from_port != 0 || e.to_port != 0) {
		return Err(refused("the stream's last nodes lead to the next through programmatic edges"));
	}
	Ok(Some(Capture {
		stream,
		graph,
		dependencies,
	}))
}

/// the `count` entries at `at` (none where `count` is 0, whatever `at`)
///
/// # Safety
/// where `count` is not 0, `at` points to `count` readable entries, live for the slice's life
unsafe fn slice<'a, T>(at: *const T, count: usize) -> &'a [T] {
	match count {
		0 => &[],
		// SAFETY: the caller's promise
		_ => unsafe { std::slice::from_raw_parts(at, count) },
	}
}

/// [`Error::Placement`] for a product that cannot be recorded into a capturing stream's graph
pub(crate) fn refused(why: &str) -> Error {
	Error::Placement {
		reason: format!("the stream is being captured into a CUDA graph, and the product cannot be recorded there: {why}"),
	}
}

/// the calling thread's stream capture mode set to relaxed while this lives, and set back after:
/// the library may then make what a recording needs (a lane, a counter) while a capture of the
/// global or thread-local mode is in progress, where the driver would otherwise refuse those
/// calls and end the caller's capture
pub(crate) struct Relaxed(sys::CUstreamCaptureMode);

impl Relaxed {
	/// the calling thread relaxed
	pub fn new() -> Result<Self, Error> {
		let mut mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
		// SAFETY: exchanges the calling thread's mode for a writable local
		unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) }
			.result()
			.map_err(driver)?;
		Ok(Relaxed(mode))
	}
}

impl Drop for Relaxed {
	fn drop(&mut self) {
		let mut mode = self.0;
		// SAFETY: as in `new`
		let _ = unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) };
	}
}

/// the hook a graph's host node calls with its data
pub(crate) type HostHook = unsafe extern "C" fn(*mut c_void);

impl Capture {
	/// the graph being captured
	pub fn graph(&self) -> sys::CUgraph {
		self.graph
	}

	/// adds to the graph, after where the stream stands: `word = 0`, then a host node that calls
	/// `hook(data)`, then a wait until `word >= 1`; the stream's next work depends on the wait.
	/// Each replay thus clears the word, tells the host, and goes on once the host's work has
	/// set the word (`word`: device memory of `ctx`, live as long as the graph)
	pub fn host_step(&self, ctx: sys::CUcontext, word: sys::CUdeviceptr, (hook, data): (HostHook, *mut c_void)) -> Result<(), Error> {
		let clear = memory_operation(ctx, word, Operation::Write(0));
		let host = sys::CUDA_HOST_NODE_PARAMS {
			fn_: Some(hook),
			userData: data,
		};
		let wait = memory_operation(ctx, word, Operation::WaitAtLeast(1));
		let (mut cleared, mut told, mut waited) = (null_mut(), null_mut(), null_mut());
		let mut wait_params = wait.0;
		let mut clear_params = clear.0;
		// SAFETY: the graph of a capture in progress, the stream's dependencies as the driver gave
		// them, parameters that outlive the calls (the driver copies them)
		unsafe {
			let clear_node = sys::CUDA_BATCH_MEM_OP_NODE_PARAMS {
				paramArray: &mut clear_params,
				..clear.1
			};
			sys::cuGraphAddBatchMemOpNode(
				&mut cleared,
				self.graph,
				self.dependencies.as_ptr(),
				self.dependencies.len(),
				&clear_node,
			)
			.result()
			.map_err(driver)?;
			sys::cuGraphAddHostNode(&mut told, self.graph, &cleared, 1, &host)
				.result()
				.map_err(driver)?;
			let wait_node = sys::CUDA_BATCH_MEM_OP_NODE_PARAMS {
				paramArray: &mut wait_params,
				..wait.1
			};
			sys::cuGraphAddBatchMemOpNode(&mut waited, self.graph, &told, 1, &wait_node)
				.result()
				.map_err(driver)?;
			let set = sys::CUstreamUpdateCaptureDependencies_flags::CU_STREAM_SET_CAPTURE_DEPENDENCIES as u32;
			sys::cuStreamUpdateCaptureDependencies_v2(self.stream, &mut waited, std::ptr::null(), 1, set)
				.result()
				.map_err(driver)
		}
	}
}

/// a stream memory operation on a 32-bit word
enum Operation {
	Write(u32),
	WaitAtLeast(u32),
}

/// the parameters of a graph node of one memory operation (the array pointer set by the caller)
fn memory_operation(
	ctx: sys::CUcontext,
	word: sys::CUdeviceptr,
	op: Operation,
) -> (sys::CUstreamBatchMemOpParams, sys::CUDA_BATCH_MEM_OP_NODE_PARAMS) {
	// the write's and the wait's parameters, one variant of the union each
	macro_rules! on_word {
		($variant:ident: $params:ident, $value:ident, $operation:ident, $flags:expr, $count:expr) => {
			sys::CUstreamBatchMemOpParams {
				$variant: sys::$params {
					operation: sys::CUstreamBatchMemOpType::$operation,
					address: word,
					__bindgen_anon_1: sys::$value { value: $count },
					flags: $flags as u32,
					alias: 0,
				},
			}
		};
	}
	let params = match op {
		Operation::Write(value) => on_word!(writeValue: CUstreamBatchMemOpParams_union_CUstreamMemOpWriteValueParams_st,
			CUstreamBatchMemOpParams_union_CUstreamMemOpWriteValueParams_st__bindgen_ty_1, CU_STREAM_MEM_OP_WRITE_VALUE_32,
			sys::CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT, value),
		Operation::WaitAtLeast(value) => on_word!(waitValue: CUstreamBatchMemOpParams_union_CUstreamMemOpWaitValueParams_st,
			CUstreamBatchMemOpParams_union_CUstreamMemOpWaitValueParams_st__bindgen_ty_1, CU_STREAM_MEM_OP_WAIT_VALUE_32,
			sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ, value),
	};
	let node = sys::CUDA_BATCH_MEM_OP_NODE_PARAMS {
		ctx,
		count: 1,
		paramArray: null_mut(),
		flags: 0,
	};
	(params, node)
}

/// `object` kept alive by `graph` and every executable graph made from it, and dropped (on a
/// thread of the driver's, which must make no CUDA call) once the last of them is destroyed and
/// has finished its work
pub(crate) fn keep_with_graph<T: Send + 'static>(graph: sys::CUgraph, object: T) -> Result<(), Error> {
	unsafe extern "C" fn dropped<T>(data: *mut c_void) {
		// SAFETY: the box leaked below, given back once, by the driver's last release
		drop(unsafe { Box::from_raw(data.cast::<T>()) });
	}
	let data = Box::into_raw(Box::new(object)).cast::<c_void>();
	let mut user = null_mut();
	let no_sync = sys::CUuserObject_flags::CU_USER_OBJECT_NO_DESTRUCTOR_SYNC as u32;
	let moved = sys::CUuserObjectRetain_flags::CU_GRAPH_USER_OBJECT_MOVE as u32;
	// SAFETY: the driver owns the one reference made here and moves it to the graph; the box is
	// freed by `dropped` alone, or here where the driver took nothing
	unsafe {
		if let Err(e) = sys::cuUserObjectCreate(&mut user, data, Some(dropped::<T>), 1, no_sync).result() {
			drop(Box::from_raw(data.cast::<T>()));
			return Err(driver(e));
		}
		if let Err(e) = sys::cuGraphRetainUserObject(graph, user, 1, moved).result() {
			// the reference made above released: the driver calls `dropped`
			let _ = sys::cuUserObjectRelease(user, 1);
			return Err(driver(e));
		}
	}
	Ok(())
}
