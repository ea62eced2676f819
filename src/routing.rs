//! where a host product of a [`crate::Backend::Auto`] context runs: on the GPU, transfers
//! included, or by faer on the host's cores, whichever is predicted faster

// (the model and the host's rate serve the GPU backend only)
#[cfg(any(feature = "cuda", test))]
use {
	crate::{Accum, Precision, Scalar, cost::CostModel, policy::native_arithmetic, shape::Shape},
	faer::Mat,
	std::{collections::HashMap, sync::Mutex, time::Instant},
};

/// the effective rate of a host product's staging, bytes per second each way: what uploads (41
/// GB/s) and downloads (33 GB/s) reached through the page-locked buffers on an H100 (PCIe 5,
/// 54 GB/s page-locked), the slower of the two
#[cfg(any(feature = "cuda", test))]
const STAGING_RATE: f64 = 33e9;

/// the predicted seconds of a host product on both sides, and the choice
///
/// # example
/// ```
/// use emugemm::HostRouting;
/// let r = HostRouting { host_seconds: 1e-4, gpu_seconds: 2e-3 };
/// assert!(r.on_host());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostRouting {
	/// faer's native product on the host's cores, at the rate measured once per process
	pub host_seconds: f64,
	/// the GPU: the operands' and the result's transfers, a call's fixed cost and the GPU's native
	/// product (the emulation runs only where the policy predicts it faster still)
	pub gpu_seconds: f64,
}

impl HostRouting {
	/// whether the host is predicted faster
	pub fn on_host(&self) -> bool {
		self.host_seconds < self.gpu_seconds
	}
}

/// the routing of an `m x k` by `k x n` product of `T` at `precision`, for a host whose native
/// product runs at `host_rate` operations per second (`2·m·n·k` real, `8·m·n·k` complex) and a
/// GPU priced by `model`
#[cfg(any(feature = "cuda", test))]
pub(crate) fn route<T: Scalar>(shape: Shape, accum: Accum, precision: Precision, (host_rate, model): (f64, &CostModel)) -> HostRouting {
	let Shape { m, n, k } = shape;
	let ops = if T::IS_COMPLEX { 8.0 } else { 2.0 } * (m * n) as f64 * k as f64;
	let outputs = (m * n) as f64 * if accum == Accum::Add { 2.0 } else { 1.0 };
	let bytes = ((m * k + k * n) as f64 + outputs) * size_of::<T>() as f64;
	let arithmetic = native_arithmetic(precision, T::MANTISSA_BITS);
	let gpu = bytes / STAGING_RATE + model.overhead + model.native(shape, T::IS_COMPLEX, T::MANTISSA_BITS, arithmetic);
	HostRouting {
		host_seconds: ops / host_rate,
		gpu_seconds: gpu,
	}
}

/// the host's native rate for `T`, operations per second: the best of three faer products of
/// 256 x 256 x 256 on all cores, measured on the first call per type and process (a few ms)
#[cfg(any(feature = "cuda", test))]
pub(crate) fn host_rate<T: Scalar>() -> f64 {
	static RATES: Mutex<Option<HashMap<&'static str, f64>>> = Mutex::new(None);
	let mut rates = RATES.lock().unwrap_or_else(|e| e.into_inner());
	*rates.get_or_insert_with(HashMap::new).entry(T::NAME).or_insert_with(|| {
		const N: usize = 256;
		let a = Mat::<T>::from_fn(N, N, |i, j| T::from_parts(((i * 7 + j * 3) % 11) as f64 - 5.0, (i % 3) as f64));
		let best = (0..3)
			.map(|_| {
				let start = Instant::now();
				std::hint::black_box(&a * &a);
				start.elapsed().as_secs_f64()
			})
			.fold(f64::INFINITY, f64::min);
		let ops = if T::IS_COMPLEX { 8.0 } else { 2.0 } * (N * N * N) as f64;
		ops / best.max(1e-9)
	})
}

#[cfg(test)]
mod tests {
	use super::*;
	use crate::cost::H200;
	use faer::c64;

	/// at 1 TF/s on the host (16 cores) and the H100's transfer rates: small products, a long
	/// inner dimension with a tiny output, and a short one with a large output stay on the host;
	/// large square products go to the GPU
	#[test]
	fn small_and_transfer_bound_products_stay_on_the_host() {
		let on_host =
			|shape: (usize, usize, usize), precision| route::<f64>(shape.into(), Accum::Replace, precision, (1e12, &H200)).on_host();
		assert!(on_host((64, 64, 64), Precision::F64));
		assert!(on_host((256, 256, 256), Precision::F64));
		assert!(on_host((64, 64, 65536), Precision::F64));
		assert!(on_host((8192, 8192, 64), Precision::F64));
		assert!(!on_host((4096, 4096, 4096), Precision::F64));
		assert!(!on_host((8192, 8192, 8192), Precision::F64));
		assert!(!route::<c64>(Shape::new(2048, 2048, 2048), Accum::Add, Precision::F64, (1e12, &H200)).on_host());
		// a much faster host keeps more
		assert!(route::<f64>(Shape::new(2048, 2048, 2048), Accum::Replace, Precision::F64, (100e12, &H200)).on_host());
	}

	/// the host's rate is measured once, and is a plausible rate
	#[test]
	fn the_host_rate_is_measured_once() {
		let r = host_rate::<f64>();
		assert!(r > 1e8 && r < 1e15, "{r}");
		assert_eq!(host_rate::<f64>(), r);
	}
}
