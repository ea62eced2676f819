//! the products of a batch on device views that share their launches: products of one shape at
//! an explicit scheme II precision, whose plan the policy gives without reading the operands. The
//! products of a chunk (as many as the context's device memory holds) are split into buffers of
//! the whole chunk, their planes one after the other, so that one launch of the fused kernel,
//! which walks planes with the moduli repeated per product, computes every product's residues
//! where one product of 1024³ alone fills a quarter of the GPU. The statistics of the whole batch
//! come down in one copy at its end, for the non-finite entries' fixup. Each product's bits are those
//! of its single call: the same statistics, shifts, splits, exact products mod each modulus and
//! CRT, on the same rows

use crate::device_view::Borrowed;
use crate::gpu::kernels::crt::launch_crt;
use crate::gpu::kernels::layout::scale;
use crate::gpu::kernels::native::fixup;
use crate::gpu::kernels::residues::{Overrides, fused_residues, fused_route};
use crate::gpu::kernels::stats::{StatsRegion, download_stats, launch_stats_at, nonfinite_entries};
use crate::gpu::orchestration::borrowed::{ViewRequest, joined, left, reported, right, transposed_in_place};
use crate::gpu::product::job::{Job, Outcome, Output, ResiduePlanes, pad16};
use crate::gpu::runtime::context::{Gpu, gpu_on};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::gpu::schemes::scheme2::{launch_fast_shifts_at, residue_planes, split_residues};
use crate::policy::PolicyInput;
use crate::request::Routine;
use crate::scheme2::Crt;
use crate::settings::Settings;
use crate::shape::Shape;
use crate::{Accum, Error, PhaseTimes, Precision, Report, Scalar, Scaling};
use cudarc::driver::sys;

/// whether a product of a batch run with `settings` (adapted to its GPU) can share its launches
/// with others of its shape: a general product at an explicit scheme II precision on the fused
/// kernels with fast scaling (its shifts from its own statistics, on the device), its operands
/// read where they lie, not empty, K within the fused kernel's reach
pub(crate) fn shares_launches<T: Scalar>(request: &ViewRequest<T>, settings: &Settings) -> bool {
	let Shape { m, n, k } = request.shape;
	matches!(request.precision, Precision::SchemeII { .. })
		&& request.routine == Routine::Gemm
		&& settings.fused
		&& settings.scaling == Scaling::Fast
		&& m > 0
		&& n > 0
		&& k > 0
		&& pad16(k) <= i32::MAX as usize - 128
		&& request.lhs.plain()
		&& (request.rhs.plain() || transposed_in_place(&request.rhs))
}

/// the most device memory a chunk's split and residue planes take: enough planes to fill the GPU
/// many times over (45 products of 1024³ f64 at 15 moduli, 21,600 tile units on 132 SMs), and no
/// more scratch than that kept by the context after the batch
const CHUNK_BYTES: usize = 2 << 30;

/// the products `which` of a batch (all [`shares_launches`], of one shape and precision, no
/// destination shared), on GPU `ordinal` with `settings` and at most `budget` bytes of device
/// memory, ordered on the caller's stream: in chunks that share their launches; their reports
pub(crate) fn shared<T: Scalar>(
	products: &[(Borrowed<T>, ViewRequest<T>)],
	which: &[usize],
	beta: T,
	(ordinal, settings, budget): (usize, Settings, usize),
	caller: sys::CUstream,
) -> Result<Vec<(usize, Report)>, Error> {
	let Some(&first) = which.first() else {
		return Ok(Vec::new());
	};
	let request = products[first].1;
	let Precision::SchemeII { moduli } = request.precision else {
		return Err(Error::gpu("shared launches take explicit scheme II products"));
	};
	let layout = Layout::<T>::new(request.shape, moduli);
	// the statistics and shifts of the whole batch first, then as many products' planes as fit
	let Shape { m, n, .. } = request.shape;
	let whole = which.len() * (layout.stats_bytes() + 4 * (m + n));
	let per_chunk = (budget.saturating_sub(whole).min(CHUNK_BYTES) / layout.planes_bytes()).max(1);
	let members: Vec<_> = which.iter().map(|&i| products[i]).collect();
	let g = gpu_on(ordinal)?;
	let _code = g.using(&settings);
	let outcomes = joined(&g, caller, || layout.run(&g, &members, beta, (settings, per_chunk)))?;
	Ok(which
		.iter()
		.zip(outcomes)
		.map(|(&i, (outcome, count))| {
			let report = Report {
				shared_launch: Some(count),
				..reported::<T>(outcome, request.shape, settings)
			};
			(i, report)
		})
		.collect())
}

/// a product whose work is enqueued: its job (the CRT's and the fixup's) and the regions of its
/// statistics (A's rows, B's columns)
type Enqueued<'g, T> = (Job<'g, T>, [StatsRegion; 2]);

/// the layout of the buffers of products of one shape at `moduli` moduli: per product, the
/// statistics of A's rows and of B's columns and their shifts (for the whole batch), A's and B's
/// residue planes and the residues of the products (for a chunk), each product's after the one
/// before it in a scratch buffer of its own
struct Layout<T> {
	shape: Shape,
	crt: &'static Crt,
	/// the residue planes per modulus: 1 (real) or 3 (complex: re, im, re + im)
	per: usize,
	_t: std::marker::PhantomData<T>,
}

impl<T: Scalar> Layout<T> {
	fn new(shape: Shape, moduli: u32) -> Self {
		Layout {
			shape,
			crt: Crt::of(moduli),
			per: if T::IS_COMPLEX { 3 } else { 1 },
			_t: std::marker::PhantomData,
		}
	}

	/// one product's bytes of statistics (A's rows and B's columns, the next product's 16-byte
	/// aligned)
	fn stats_bytes(&self) -> usize {
		StatsRegion::bytes(self.shape.m) + StatsRegion::bytes(self.shape.n)
	}

	/// one product's bytes of split planes, A's and B's
	fn split_bytes(&self) -> (usize, usize) {
		let Shape { m, n, k } = self.shape;
		let planes = self.per * self.crt.len() * pad16(k);
		(planes * m, planes * n)
	}

	/// one product's bytes of planes in a chunk: split, residues (and the intermediate plane of
	/// complex products computed in three launches)
	fn planes_bytes(&self) -> usize {
		let Shape { m, n, .. } = self.shape;
		let (a, b) = self.split_bytes();
		let residues = if T::IS_COMPLEX { 3 } else { 1 };
		a + b + residues * self.crt.len() * ResiduePlanes::stride(m, n)
	}

	/// `members` (`dst = alpha lhs rhs`, `+ beta dst` where they add) on `gpu`'s stream with
	/// `settings`, `per_chunk` sharing each launch of the residue products; each one's outcome
	/// and the number of products of its launch, once all completed
	fn run(
		&self,
		gpu: &Gpu,
		members: &[(Borrowed<T>, ViewRequest<T>)],
		beta: T,
		(settings, per_chunk): (Settings, usize),
	) -> Result<Vec<(Outcome, usize)>, Error> {
		let Shape { m, n, k } = self.shape;
		let stats = gpu.scratch(Slot::Stats, members.len() * self.stats_bytes())?;
		let shifts = gpu.scratch(Slot::FastShifts, 4 * members.len() * (m + n))?.cast::<i32>();
		let mut jobs = Vec::with_capacity(members.len());
		let mut regions = Vec::with_capacity(2 * members.len());
		for (c, chunk) in members.chunks(per_chunk).enumerate() {
			let first = c * per_chunk;
			let planes = self.chunk(
				gpu,
				chunk,
				beta,
				(stats.byte_add(first * self.stats_bytes()), shifts.add(first * (m + n))),
			)?;
			jobs.extend(planes.iter().map(|(job, _)| (*job, chunk.len())));
			regions.extend(planes.iter().flat_map(|(_, r)| *r));
		}
		// the statistics of the batch in one copy: the rows and columns with a NaN or an
		// infinity, whose entries the native fixup computes (the CRT skipped them)
		let stats = download_stats(gpu, &regions)?;
		let plan = PolicyInput::in_context::<T>(self.shape, &settings)
			.choose(members[0].1.precision)
			.plan;
		let route = fused_route(T::IS_COMPLEX, Shape::new(m, n, pad16(k)));
		let mut outcomes = Vec::with_capacity(members.len());
		for ((job, count), pair) in jobs.iter().zip(stats.chunks_exact(2)) {
			let (rows, cols) = (pair[0].nonfinite_rows(), pair[1].nonfinite_rows());
			if (rows, cols) != (0, 0) {
				fixup(job)?;
			}
			let outcome = Outcome {
				plan,
				route,
				nonfinite_entries: nonfinite_entries((rows, cols), (m, n)),
				native_rows: Vec::new(),
				times: PhaseTimes::default(),
				native_reason: None,
			};
			outcomes.push((outcome, *count));
		}
		Ok(outcomes)
	}

	/// the products `chunk` on `gpu`'s stream, their statistics and shifts from `(stats, shifts)`
	/// on, all their residue products in one launch; each one's job (the CRT's and the fixup's)
	/// and the regions of its statistics
	fn chunk<'g>(
		&self,
		gpu: &'g Gpu,
		chunk: &[(Borrowed<T>, ViewRequest<T>)],
		beta: T,
		(stats, shifts): (DevPtr<u8>, DevPtr<i32>),
	) -> Result<Vec<Enqueued<'g, T>>, Error> {
		let Shape { m, n, k } = self.shape;
		let (count, p, kpad) = (chunk.len(), self.crt.len(), pad16(k));
		let (plane_a, plane_b) = self.split_bytes();
		let ra = gpu.scratch(Slot::SplitA, count * plane_a)?.cast::<i8>();
		let rb = gpu.scratch(Slot::SplitB, count * plane_b)?.cast::<i8>();
		let planes = residue_planes::<T>(gpu, (m, n), p * count, None)?;
		let mut jobs = Vec::with_capacity(count);
		let mut shifted = Vec::with_capacity(count);
		for (i, &(dst, request)) in chunk.iter().enumerate() {
			let (a, b) = (left(gpu, &request.lhs)?, right(gpu, &request.rhs)?);
			let adds = request.accum == Accum::Add;
			if adds && beta != T::from_parts(1.0, 0.0) {
				scale(gpu, &dst, beta)?;
			}
			let regions = launch_stats_at(gpu, &[&a, &b], stats.byte_add(i * self.stats_bytes()))?;
			let regions = <[StatsRegion; 2]>::try_from(regions).map_err(|_| Error::gpu("the statistics of two operands"))?;
			let own = launch_fast_shifts_at(gpu, (regions[0], regions[1]), self.crt.lambda, shifts.add(i * (m + n)))?;
			split_residues::<T>(gpu, ra.add(i * plane_a), &a, own.0, p as u32)?;
			split_residues::<T>(gpu, rb.add(i * plane_b), &b, own.1, p as u32)?;
			let out = Output {
				ptr: DevPtr::new(dst.addr),
				ld: dst.ld(),
				accumulate: adds,
				remainder: None,
				triangle: None,
			};
			let job = Job {
				gpu,
				a,
				b,
				out,
				alpha: request.alpha,
				bad_rows: regions[0].nonfinite(),
				bad_cols: regions[1].nonfinite(),
			};
			jobs.push((job, regions));
			shifted.push(own);
		}
		// plane `p i + l` of the chunk is product i's of modulus l
		let moduli = self.crt.moduli.repeat(count);
		fused_residues(gpu, (ra, rb), Shape::new(m, n, kpad), &moduli, planes, Overrides::default())?;
		for (i, ((job, _), own)) in jobs.iter().zip(shifted).enumerate() {
			let at = |plane: DevPtr<i8>| plane.add(i * p * planes.stride);
			let mine = ResiduePlanes {
				re: at(planes.re),
				im: planes.im.map(at),
				..planes
			};
			launch_crt(job, self.crt, mine, own)?;
		}
		Ok(jobs)
	}
}
