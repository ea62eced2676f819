//! batches of products on device views, on a caller's stream: the products that the policy
//! computes natively before reading their operands run as one cuBLAS batched GEMM per shape and
//! layout (cuBLAS's batched bits, which may differ from its single GEMM's in the last bits);
//! explicit scheme II products of one shape share their launches (see [`shared_launches`]); the
//! others run each exactly as its single call runs it ([`view_product`]), side by side on several
//! pipelines of the GPU; a batch whose destinations repeat runs one product after another

use crate::cost::NativeArithmetic;
use crate::device_view::Borrowed;
use crate::gpu::kernels::layout::scale;
use crate::gpu::orchestration::borrowed::{
	ViewRequest, available, enqueued, fits, joined, on_caller, reported, view_product, workspace, written,
};
use crate::gpu::orchestration::engine::{device_budget, for_gpus, named};
use crate::gpu::orchestration::shared_launches::{shared, shares_launches};
use crate::gpu::product::job::Outcome;
use crate::gpu::runtime::blas::{BatchAddresses, NativeMath, native_gemm_batched};
use crate::gpu::runtime::capture::{capturing, refused};
use crate::gpu::runtime::context::{Device, gpu_at, gpu_on};
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::launch::{ptr, to_device};
use crate::pending::PendingReport;
use crate::policy::{PolicyInput, native_arithmetic};
use crate::settings::Settings;
use crate::shape::Shape;
use crate::{Accum, Error, NativeReason, PhaseTimes, Precision, Report, Scalar};
use cudarc::driver::{result, sys};
use std::collections::HashSet;

/// every product `(dst, request)` of a batch (`dst = alpha lhs rhs`, or `+ beta dst` where it
/// adds), its report in the batch's order; shapes and precisions checked by the caller. Every
/// product's workspace is checked against the context's budget and the memory free before any
/// runs: an [`Error::OutOfMemory`] leaves every destination as it was
pub(crate) fn view_batch<T: Scalar>(
	products: &[(Borrowed<T>, ViewRequest<T>)],
	beta: T,
	caller: sys::CUstream,
) -> Result<Vec<Report>, Error> {
	let Some((_, first)) = products.first() else {
		return Ok(Vec::new());
	};
	if capturing(caller)?.is_some() {
		return Err(refused(
			"a batch is not recorded (its products recorded one by one, as single calls, are)",
		));
	}
	// the products of one call share the context's settings and the caller's stream
	let (ordinal, settings) = on_caller(first.settings, caller)?;
	let free = available(&*gpu_on(ordinal)?)?;
	let budget = device_budget(&settings, &[(ordinal, 0)])?.min(free);
	for (dst, request) in products {
		fits(dst, request, budget)?;
	}
	ordered(products, beta, (ordinal, settings), caller).map_err(written)
}

/// [`view_batch`]'s products, checked, run on GPU `ordinal` with `settings`
fn ordered<T: Scalar>(
	products: &[(Borrowed<T>, ViewRequest<T>)],
	beta: T,
	(ordinal, settings): (usize, Settings),
	caller: sys::CUstream,
) -> Result<Vec<Report>, Error> {
	// a destination met twice makes the products' order matter: they run one by one, in order,
	// each checked before the first runs
	let mut destinations = HashSet::with_capacity(products.len());
	if !products.iter().all(|(d, _)| destinations.insert(d.addr)) {
		let budget = device_budget(&settings, &[(ordinal, 0)])?;
		for (dst, request) in products {
			fits(dst, request, budget)?;
		}
		let queued = products
			.iter()
			.map(|&(dst, request)| view_product(dst, request, beta, caller))
			.collect::<Result<Vec<_>, Error>>()?;
		return queued.iter().map(PendingReport::wait).collect();
	}
	let mut reports: Vec<Option<Report>> = vec![None; products.len()];
	let mut groups: Vec<Vec<usize>> = Vec::new();
	// the policy's answer once per shape and precision: pricing every plan takes microseconds,
	// which a batch of small products would pay per product
	let mut skips: Vec<((Shape, Precision), bool)> = Vec::new();
	for (i, (dst, request)) in products.iter().enumerate() {
		let key = (request.shape, request.precision);
		let skip = match skips.iter().find(|(k, _)| *k == key) {
			Some(&(_, skip)) => skip,
			None => {
				let skip = PolicyInput::in_context::<T>(request.shape, &settings).native_from_shape(request.precision, 1);
				skips.push((key, skip));
				skip
			},
		};
		if !(skip && runs_natively_unread(dst, request)) {
			continue;
		}
		match groups.iter_mut().find(|g| same_launch(&products[g[0]], &products[i])) {
			Some(group) => group.push(i),
			None => groups.push(vec![i]),
		}
	}
	for group in &groups {
		let members: Vec<_> = group.iter().map(|&i| products[i]).collect();
		for (&i, report) in group.iter().zip(native_group(&members, beta, (ordinal, settings), caller)?) {
			reports[i] = Some(report);
		}
	}
	// explicit scheme II products of one shape share their launches; the others run as their
	// single calls, side by side
	let mut sharing: Vec<Vec<usize>> = Vec::new();
	let mut rest = Vec::new();
	for i in (0..products.len()).filter(|&i| reports[i].is_none()) {
		let request = &products[i].1;
		if !shares_launches(request, &settings) {
			rest.push(i);
			continue;
		}
		let key = |r: &ViewRequest<T>| (r.shape, r.precision);
		match sharing.iter_mut().find(|g| key(&products[g[0]].1) == key(request)) {
			Some(group) => group.push(i),
			None => sharing.push(vec![i]),
		}
	}
	let budget = device_budget(&settings, &[(ordinal, 0)])?;
	for group in &sharing {
		for i in group {
			fits(&products[*i].0, &products[*i].1, budget)?;
		}
	}
	for group in &sharing {
		for (i, report) in shared(products, group, beta, (ordinal, settings, budget), caller)? {
			reports[i] = Some(report);
		}
	}
	for (i, report) in spread(products, &rest, beta, ordinal, caller)? {
		reports[i] = Some(report);
	}
	Ok(reports.into_iter().map(|r| r.expect("every product ran")).collect())
}

/// the most pipelines the products that run one by one spread over on their GPU: each pipeline
/// has its own stream and workspace, so that products too small to fill the GPU run side by side
pub(crate) const LANES: usize = 4;

/// the products `which` of a batch, each as its single call computes it, spread over up to
/// [`LANES`] pipelines of GPU `ordinal` (as many as the largest product's workspace fits the
/// context's budget for), each driven by a thread of its own: every pipeline's stream waits for
/// the caller's work so far, and the caller's stream waits for every pipeline's last work (also
/// where a product fails). The products share no destination ([`view_batch`] checks)
fn spread<T: Scalar>(
	products: &[(Borrowed<T>, ViewRequest<T>)],
	which: &[usize],
	beta: T,
	ordinal: usize,
	caller: sys::CUstream,
) -> Result<Vec<(usize, Report)>, Error> {
	let Some(&first) = which.first() else {
		return Ok(Vec::new());
	};
	let request = products[first].1;
	let need = which.iter().map(|&i| workspace(&products[i].1)).max().unwrap_or(0);
	let lanes_of = |count: usize| (0..count).map(|p| (ordinal, p)).collect::<Vec<Device>>();
	// each lane's share of the context's budget (an explicit one too)
	let budget_of = |count: usize| match request.settings.device_memory {
		Some(bytes) => Ok(bytes / count),
		None => device_budget(&request.settings, &lanes_of(count)),
	};
	let mut count = LANES.min(which.len());
	while count > 1 && budget_of(count)? < need {
		count -= 1;
	}
	let (lanes, budget) = (lanes_of(count), budget_of(count)?);
	let settings = for_gpus(request.settings, &lanes)?;
	for &i in which {
		fits(&products[i].0, &products[i].1, budget)?;
	}
	// the longest products first, each to the lane with the least work so far
	let mut work = vec![(0f64, Vec::new()); count];
	let mut order = which.to_vec();
	let flops = |i: usize| {
		let shape = products[i].1.shape;
		(shape.m * shape.n) as f64 * shape.k as f64
	};
	order.sort_by(|&x, &y| flops(y).total_cmp(&flops(x)));
	for i in order {
		let lane = work.iter_mut().min_by(|x, y| x.0.total_cmp(&y.0)).expect("one lane at least");
		lane.0 += flops(i);
		lane.1.push(i);
	}
	let flags = Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
	let before = gpu_on(ordinal)?.ctx.new_event(flags).map_err(driver)?;
	// SAFETY: `caller` is a live stream of this GPU's primary context (checked by `on_caller`),
	// the event is that context's
	unsafe { result::event::record(before.cu_event(), caller) }.map_err(driver)?;
	let ran = std::thread::scope(|scope| {
		let threads: Vec<_> = lanes
			.iter()
			.zip(&work)
			.map(|(&lane, (_, mine))| {
				let before = &before;
				scope.spawn(move || -> Result<_, Error> {
					let g = gpu_at(lane)?;
					let _code = g.using(&settings);
					g.stream.wait(before).map_err(driver)?;
					let mut done = Vec::with_capacity(mine.len());
					let mut failed = None;
					for &i in mine {
						let (dst, request) = products[i];
						match enqueued(&g, dst, request, beta, settings) {
							Ok(outcome) => done.push((i, reported::<T>(outcome, request.shape, settings))),
							Err(e) => {
								failed = Some(e);
								break;
							},
						}
					}
					let after = g.stream.record_event(flags).map_err(driver)?;
					Ok((done, failed, after))
				})
			})
			.collect();
		threads
			.into_iter()
			.map(|t| t.join().map_err(|_| Error::gpu("a batch's thread panicked"))?)
			.collect::<Vec<_>>()
	});
	let mut reports = Vec::with_capacity(which.len());
	let mut failure = None;
	for lane in ran {
		match lane {
			Ok((done, failed, after)) => {
				// SAFETY: as above
				unsafe { result::stream::wait_event(caller, after.cu_event(), sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }
					.map_err(driver)?;
				reports.extend(done);
				failure = failure.or(failed);
			},
			Err(e) => failure = failure.or(Some(e)),
		}
	}
	match failure {
		Some(e) => Err(e),
		None => Ok(reports),
	}
}

/// whether the single call of this product, of a shape the policy sends native before reading
/// the operands ([`PolicyInput::native_from_shape`]), would be one cuBLAS GEMM on the views as they
/// are: a real type at its own or TF32 arithmetic, operands read as stored at aligned addresses,
/// not empty
fn runs_natively_unread<T: Scalar>(dst: &Borrowed<T>, request: &ViewRequest<T>) -> bool {
	let (lhs, rhs) = (request.lhs, request.rhs);
	let aligned = [dst.addr, lhs.addr, rhs.addr]
		.iter()
		.all(|a| a.is_multiple_of(size_of::<T>() as u64));
	!T::IS_COMPLEX
		&& aligned
		&& dst.plain()
		&& lhs.plain()
		&& rhs.plain()
		&& !request.shape.is_empty()
		&& native_arithmetic(request.precision, T::MANTISSA_BITS) != NativeArithmetic::Wide
}

/// whether two products can share one batched launch: the same shape, leading dimensions,
/// accumulation, `alpha` and precision
fn same_launch<T: Scalar>((d, r): &(Borrowed<T>, ViewRequest<T>), (e, s): &(Borrowed<T>, ViewRequest<T>)) -> bool {
	let lds = |d: &Borrowed<T>, r: &ViewRequest<T>| (d.ld(), r.lhs.ld(), r.rhs.ld());
	r.shape == s.shape
		&& lds(d, r) == lds(e, s)
		&& r.accum == s.accum
		&& bytemuck::bytes_of(&r.alpha) == bytemuck::bytes_of(&s.alpha)
		&& r.precision == s.precision
		&& r.settings == s.settings
}

/// one group of [`same_launch`] products that run natively unread: `dst = beta dst` for each
/// where it adds, then one batched GEMM over the group (strided where the group's matrices lie
/// at one stride from each other), on GPU `ordinal` with `settings`, ordered on the caller's
/// stream; the reports of their single calls
fn native_group<T: Scalar>(
	members: &[(Borrowed<T>, ViewRequest<T>)],
	beta: T,
	(ordinal, settings): (usize, Settings),
	caller: sys::CUstream,
) -> Result<Vec<Report>, Error> {
	let (_, first) = members[0];
	let g = gpu_on(ordinal)?;
	let _code = g.using(&settings);
	let math = match native_arithmetic(first.precision, T::MANTISSA_BITS) {
		NativeArithmetic::Tf32 => NativeMath::Tf32,
		_ => NativeMath::Exact,
	};
	let adds = first.accum == Accum::Add;
	joined(&g, caller, || {
		if adds && beta != T::from_parts(1.0, 0.0) {
			for (dst, _) in members {
				scale(&g, dst, beta)?;
			}
		}
		let a: Vec<u64> = members.iter().map(|(_, r)| r.lhs.addr).collect();
		let b: Vec<u64> = members.iter().map(|(_, r)| r.rhs.addr).collect();
		let c: Vec<u64> = members.iter().map(|(d, _)| d.addr).collect();
		let lds = (first.lhs.ld(), first.rhs.ld(), members[0].0.ld());
		let beta_gemm = T::from_parts(if adds { 1.0 } else { 0.0 }, 0.0);
		let gemm = |addresses| {
			native_gemm_batched(
				&g.handles,
				(first.shape, lds),
				(addresses, members.len()),
				(first.alpha, beta_gemm),
				math,
			)
		};
		if let (Some(sa), Some(sb), Some(sc)) = (stride::<T>(&a), stride::<T>(&b), stride::<T>(&c)) {
			return gemm(BatchAddresses::Strided((a[0], b[0], c[0]), (sa, sb, sc)));
		}
		let (a, b, c) = (to_device(&g, &a)?, to_device(&g, &b)?, to_device(&g, &c)?);
		gemm(BatchAddresses::Arrays(ptr(&g, &a), ptr(&g, &b), ptr(&g, &c)))
	})?;
	let report = |(_, r): &(Borrowed<T>, ViewRequest<T>)| {
		let outcome = Outcome::native(r.shape.m, NativeReason::FasterNatively);
		named(outcome.report::<T>(r.shape, PhaseTimes::default()), settings)
	};
	Ok(members.iter().map(report).collect())
}

/// the stride in elements of `T` from each address to the next, where there is one (a single
/// address has stride 0)
fn stride<T>(addresses: &[u64]) -> Option<i64> {
	let size = size_of::<T>() as i64;
	let step = match addresses {
		[first, second, ..] => (*second as i64).wrapping_sub(*first as i64),
		_ => 0,
	};
	let even = addresses.windows(2).all(|w| (w[1] as i64).wrapping_sub(w[0] as i64) == step);
	(even && step % size == 0).then_some(step / size)
}
