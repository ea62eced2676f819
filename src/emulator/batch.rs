//! batches of products on host matrices: every product certified on its own terms, a report each

use super::Emulator;
use crate::report::last_report;
use crate::view::View;
use crate::{Error, Precision, Report, Scalar};
use faer::traits::Conjugate;
use faer::{Accum, MatMut, MatRef, Par};

impl Emulator {
	/// `dst[i] = alpha lhs[i] rhs[i]` ([`Accum::Replace`]) or `dst[i] += alpha lhs[i] rhs[i]`
	/// ([`Accum::Add`]) for every product of a batch, at `precision`, the CPU's part on `par`; the
	/// products may have different shapes. Each product is planned and certified on its own
	/// terms, and is bit for bit what [`Emulator::matmul`] writes for it alone; the reports come
	/// back in the batch's order (and [`Emulator::last_report`] holds the last one's).
	///
	/// Every shape is checked before anything is written: a batch whose lengths differ, or one
	/// product whose shapes do not fit, is an error that leaves every destination as it was. The
	/// products run one after another: the batch shares no launch between them yet, so it costs
	/// what its products cost alone
	///
	/// # example
	/// ```
	/// use emugemm::{Accum, Backend, Emulator, Precision};
	/// let emu = Emulator::with_backend(Backend::CpuEmulation)?;
	/// let a: Vec<_> = (0..3).map(|s| emugemm::testing::random_matrix::<f64>(8, 5, 1.0, s)).collect();
	/// let mut c: Vec<_> = (0..3).map(|_| faer::Mat::<f64>::zeros(8, 8)).collect();
	/// let lhs: Vec<_> = a.iter().map(|m| m.as_ref()).collect();
	/// let rhs: Vec<_> = a.iter().map(|m| m.transpose()).collect();
	/// let mut dst: Vec<_> = c.iter_mut().map(|m| m.as_mut()).collect();
	/// let reports = emu.matmul_batch(&mut dst, Accum::Replace, (&lhs, &rhs), 1.0, (faer::Par::Seq, Precision::F64))?;
	/// assert_eq!(reports.len(), 3);
	/// # Ok::<(), emugemm::Error>(())
	/// ```
	pub fn matmul_batch<T: Scalar, L: Conjugate<Canonical = T>, R: Conjugate<Canonical = T>>(
		&self,
		dst: &mut [MatMut<'_, T>],
		accum: Accum,
		(lhs, rhs): (&[MatRef<'_, L>], &[MatRef<'_, R>]),
		alpha: T,
		(par, precision): (Par, Precision),
	) -> Result<Vec<Report>, Error> {
		if lhs.len() != dst.len() || rhs.len() != dst.len() {
			return Err(Error::BatchLengths {
				dst: dst.len(),
				lhs: lhs.len(),
				rhs: rhs.len(),
			});
		}
		for ((d, l), r) in dst.iter().zip(lhs).zip(rhs) {
			crate::shape::check_shapes(l.shape(), r.shape(), Some(d.shape()))?;
		}
		let mut reports = Vec::with_capacity(dst.len());
		for ((d, l), r) in dst.iter_mut().zip(lhs).zip(rhs) {
			self.matmul_views(d.as_mut(), accum, (View::of(*l), View::of(*r)), alpha, (precision, par))?;
			reports.push(last_report().expect("a product that returned Ok has published its report"));
		}
		Ok(reports)
	}
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::testing::{random_matrix, same_bits};
	use crate::{Backend, NativeReason, Scheme};
	use faer::Mat;

	fn oracle() -> Emulator {
		Emulator::with_backend(Backend::CpuEmulation).expect("the oracle runs anywhere")
	}

	/// a batch of products of different shapes and scales, each against its single call, bit for
	/// bit, with the same report's plan
	fn equals_single_calls<T: Scalar>(precision: Precision) {
		let emu = oracle();
		let shapes = [(7, 9, 11), (16, 3, 40), (1, 1, 1), (30, 25, 20), (5, 0, 4), (0, 6, 3), (4, 6, 0)];
		let a: Vec<Mat<T>> = shapes
			.iter()
			.enumerate()
			.map(|(s, &(m, _, k))| random_matrix(m, k, s as f64, s as u64))
			.collect();
		let b: Vec<Mat<T>> = shapes
			.iter()
			.enumerate()
			.map(|(s, &(_, n, k))| random_matrix(k, n, 1.0, 50 + s as u64))
			.collect();
		let start: Vec<Mat<T>> = shapes
			.iter()
			.enumerate()
			.map(|(s, &(m, n, _))| random_matrix(m, n, 1.0, 90 + s as u64))
			.collect();
		let alpha = T::from_parts(0.75, -0.5);
		for accum in [Accum::Replace, Accum::Add] {
			let mut batch = start.clone();
			let (lhs, rhs): (Vec<_>, Vec<_>) = a.iter().zip(&b).map(|(x, y)| (x.as_ref(), y.as_ref())).unzip();
			let mut dst: Vec<_> = batch.iter_mut().map(|m| m.as_mut()).collect();
			let reports = emu
				.matmul_batch(&mut dst, accum, (&lhs, &rhs), alpha, (Par::Seq, precision))
				.unwrap();
			assert_eq!(reports.len(), shapes.len());
			for (i, report) in reports.iter().enumerate() {
				let mut single = start[i].clone();
				emu.matmul(&mut single, accum, (&a[i], &b[i]), alpha, (Par::Seq, precision))
					.unwrap();
				let alone = emu.last_report().unwrap();
				// by `Debug`: an explicit plan's certified bits are NaN
				assert_eq!(
					format!("{:?}", report.plan),
					format!("{:?}", alone.plan),
					"product {i}: its own plan"
				);
				assert_eq!(report.native_reason, alone.native_reason, "product {i}");
				assert!(
					same_bits(single.as_ref(), batch[i].as_ref()),
					"{precision} {accum:?} product {i} {:?}: the batch against the single call",
					shapes[i]
				);
			}
			// the empty products are native, for that reason
			for report in &reports[4..] {
				assert_eq!(report.plan.scheme, Scheme::Native);
				assert_eq!(report.native_reason, Some(NativeReason::NotEmulated));
			}
		}
	}

	#[test]
	fn every_product_of_a_batch_is_its_single_call() {
		equals_single_calls::<f64>(Precision::F64);
		equals_single_calls::<f64>(Precision::SchemeII { moduli: 10 });
		equals_single_calls::<f32>(Precision::F32);
		equals_single_calls::<faer::c64>(Precision::F64);
		equals_single_calls::<faer::c32>(Precision::SchemeI { slices: 3 });
	}

	#[test]
	fn lengths_and_shapes_are_checked_before_anything_is_written() {
		let emu = oracle();
		let a = random_matrix::<f64>(4, 4, 1.0, 1);
		let mut c = [Mat::<f64>::from_fn(4, 4, |i, j| (i * 4 + j) as f64), Mat::<f64>::zeros(3, 4)];
		let before = c.clone();
		let (lhs, rhs) = ([a.as_ref(), a.as_ref()], [a.as_ref(), a.as_ref()]);
		{
			let mut dst: Vec<_> = c.iter_mut().map(|m| m.as_mut()).collect();
			let short = emu.matmul_batch(&mut dst, Accum::Replace, (&lhs[..1], &rhs), 1.0, (Par::Seq, Precision::F64));
			assert_eq!(short.unwrap_err(), Error::BatchLengths { dst: 2, lhs: 1, rhs: 2 });
			// the second destination is 3 x 4: the first product must not run either
			let misfit = emu.matmul_batch(&mut dst, Accum::Replace, (&lhs, &rhs), 1.0, (Par::Seq, Precision::F64));
			assert!(matches!(misfit, Err(Error::ShapeMismatch { dst: Some((3, 4)), .. })), "{misfit:?}");
		}
		assert_eq!(c, before);
		let empty = emu.matmul_batch::<f64, f64, f64>(&mut [], Accum::Add, (&[], &[]), 1.0, (Par::Seq, Precision::F64));
		assert_eq!(empty.unwrap().len(), 0);
	}
}
