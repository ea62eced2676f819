//! batches of products on device views, on a caller's stream: the products that the policy
//! computes natively before reading their operands run as one cuBLAS batched GEMM per shape and
//! layout, each exactly as its single call would run it; the others run one by one
//! ([`view_product`])

use crate::cost::NativeArithmetic;
use crate::device_view::Borrowed;
use crate::gpu::kernels::layout::scale;
use crate::gpu::orchestration::borrowed::{ViewRequest, joined, on_caller, view_product};
use crate::gpu::orchestration::engine::named;
use crate::gpu::product::job::Outcome;
use crate::gpu::runtime::blas::{NativeMath, native_gemm_batched};
use crate::gpu::runtime::context::gpu_on;
use crate::gpu::runtime::launch::{ptr, to_device};
use crate::policy::{PolicyInput, native_arithmetic};
use crate::settings::Settings;
use crate::{Accum, Error, NativeReason, PhaseTimes, Report, Scalar};
use cudarc::driver::sys;

/// every product `(dst, request)` of a batch (`dst = alpha lhs rhs`, or `+ beta dst` where it
/// adds), its report in the batch's order; shapes and precisions checked by the caller
pub(crate) fn view_batch<T: Scalar>(
	products: &[(Borrowed<T>, ViewRequest<T>)],
	beta: T,
	caller: sys::CUstream,
) -> Result<Vec<Report>, Error> {
	let mut reports: Vec<Option<Report>> = vec![None; products.len()];
	let mut groups: Vec<Vec<usize>> = Vec::new();
	for (i, (dst, request)) in products.iter().enumerate() {
		let (_, settings) = on_caller(request.settings, caller)?;
		if !runs_natively_unread(dst, request, &settings) {
			continue;
		}
		match groups.iter_mut().find(|g| same_launch(&products[g[0]], &products[i])) {
			Some(group) => group.push(i),
			None => groups.push(vec![i]),
		}
	}
	for group in &groups {
		let members: Vec<_> = group.iter().map(|&i| products[i]).collect();
		for (&i, report) in group.iter().zip(native_group(&members, beta, caller)?) {
			reports[i] = Some(report);
		}
	}
	for (i, &(dst, request)) in products.iter().enumerate() {
		if reports[i].is_none() {
			reports[i] = Some(view_product(dst, request, beta, caller)?);
		}
	}
	Ok(reports.into_iter().map(|r| r.expect("every product ran")).collect())
}

/// whether the single call of this product would be one cuBLAS GEMM on the views as they are:
/// a real type at its own or TF32 arithmetic, operands read as stored at aligned addresses, not
/// empty, and a shape the policy sends native before reading the operands
/// ([`PolicyInput::skips_bound`])
fn runs_natively_unread<T: Scalar>(dst: &Borrowed<T>, request: &ViewRequest<T>, settings: &Settings) -> bool {
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
		&& PolicyInput::in_context::<T>(request.shape, settings).skips_bound(request.precision)
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
/// where it adds, then one batched GEMM over the group, on the caller's stream's GPU; the reports
/// of their single calls
fn native_group<T: Scalar>(members: &[(Borrowed<T>, ViewRequest<T>)], beta: T, caller: sys::CUstream) -> Result<Vec<Report>, Error> {
	let (_, first) = members[0];
	let (ordinal, settings) = on_caller(first.settings, caller)?;
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
		let a = to_device(&g, &members.iter().map(|(_, r)| r.lhs.addr).collect::<Vec<u64>>())?;
		let b = to_device(&g, &members.iter().map(|(_, r)| r.rhs.addr).collect::<Vec<u64>>())?;
		let c = to_device(&g, &members.iter().map(|(d, _)| d.addr).collect::<Vec<u64>>())?;
		let lds = (first.lhs.ld(), first.rhs.ld(), members[0].0.ld());
		let arrays = (ptr(&g, &a), ptr(&g, &b), ptr(&g, &c));
		let beta_gemm = T::from_parts(if adds { 1.0 } else { 0.0 }, 0.0);
		native_gemm_batched(
			&g.handles,
			(first.shape, lds),
			(arrays, members.len()),
			(first.alpha, beta_gemm),
			math,
		)
	})?;
	let report = |(_, r): &(Borrowed<T>, ViewRequest<T>)| {
		let outcome = Outcome::native(r.shape.m, NativeReason::FasterNatively);
		named(outcome.report::<T>(r.shape, PhaseTimes::default()), settings)
	};
	Ok(members.iter().map(report).collect())
}
