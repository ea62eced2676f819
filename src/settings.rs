//! what a context has set that the policy and the engines read: the scaling rule, the routes
//! allowed, the staging buffers, the device memory and the GPUs

use crate::Scaling;
use crate::datasheets::GpuModel;
#[cfg(any(feature = "cuda", test))]
use crate::{Route, shape::Shape};

/// the default size of each page-locked staging buffer: 24 MiB, 192 MiB in all (two sets of four)
pub(crate) const DEFAULT_STAGING: usize = 24 << 20;

/// the GPUs a context's products run on, by ordinal, in order (at most [`Devices::MAX`]); an
/// ordinal may repeat, for one pipeline per repetition on that GPU
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Devices {
	ordinals: [u16; Devices::MAX],
	len: usize,
}

impl Devices {
	pub const MAX: usize = 8;

	/// GPU 0 alone
	pub const FIRST: Devices = Devices {
		ordinals: [0; Devices::MAX],
		len: 1,
	};

	/// `ordinals`, where there are 1 to [`Devices::MAX`] of them, each below 65536
	pub fn new(ordinals: &[usize]) -> Option<Devices> {
		if ordinals.is_empty() || ordinals.len() > Devices::MAX {
			return None;
		}
		let mut set = Devices {
			ordinals: [0; Devices::MAX],
			len: ordinals.len(),
		};
		for (slot, &o) in set.ordinals.iter_mut().zip(ordinals) {
			*slot = u16::try_from(o).ok()?;
		}
		Some(set)
	}

	pub fn ordinals(&self) -> impl Iterator<Item = usize> + '_ {
		self.ordinals[..self.len].iter().map(|&o| usize::from(o))
	}
}

/// a context's settings that the policy and the pipelines read
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
	pub scaling: Scaling,
	pub fused: bool,
	/// whether a scheme I product takes the route its cost model predicts faster (off: the fused
	/// kernel wherever `fused` is on)
	pub priced_routes: bool,
	/// whether the native product competes with the emulated plans by predicted time (off: it
	/// computes only what no plan certifies); on by default, but off for the oracle
	/// ([`crate::Backend::CpuEmulation`]), whose cost model is a GPU's, not the CPU's
	pub native_candidate: bool,
	/// the size of each page-locked staging buffer of host products on the GPU
	pub staging_bytes: usize,
	/// whether host products at target precisions may run on the host's cores where that is
	/// predicted faster than the GPU
	pub host_routing: bool,
	/// the device memory a host product on the GPU may take before it runs out of core, tiled
	/// (`None`: 90% of the GPU's memory)
	pub device_memory: Option<usize>,
	/// the GPUs host products run on
	pub devices: Devices,
	/// the portable path on every GPU: the generic kernels' `compute_80` PTX and cuBLASLt's INT8
	/// products (a GPU that is not a Hopper GPU takes it whatever this says)
	pub portable: bool,
	/// the cost model the policy prices plans with: the GPU's, or on the CPU backends the Hopper
	/// one (so that the CPU oracle picks the plans a Hopper GPU picks)
	pub model: GpuModel,
	/// whether products on device views are queued to a lane and return at once (see
	/// `Emulator::with_queued_views`)
	pub queued_views: bool,
	/// whether products on streams being captured into CUDA graphs are recorded there (see
	/// `Emulator::with_graph_recording`)
	pub graph_recording: bool,
}

// (the route serves the GPU engine only)
#[cfg(any(feature = "cuda", test))]
impl Settings {
	/// the route a scheme I product of `slices` slices and `shape` takes on a Hopper GPU: the
	/// unfused pipeline where fused products are off, on the portable path, or where the routes
	/// are priced and the cost model predicts the unfused pipeline faster
	/// ([`crate::cost::CostModel::scheme1_unfused`]); the fused kernel otherwise (which the GPU
	/// then takes where its coordinates fit)
	pub fn scheme1_route(&self, slices: u32, shape: Shape, complex: bool) -> Route {
		let unfused = self.priced_routes && self.model.model().scheme1_unfused(slices, shape, complex);
		if self.fused && !self.portable && !unfused {
			Route::Fused
		} else {
			Route::Unfused
		}
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	fn sm90a_h100() -> Settings {
		Settings {
			scaling: Scaling::Fast,
			fused: true,
			priced_routes: true,
			native_candidate: true,
			staging_bytes: DEFAULT_STAGING,
			host_routing: false,
			device_memory: None,
			devices: Devices::FIRST,
			portable: false,
			model: GpuModel::named("NVIDIA H100 80GB HBM3").expect("in the table"),
			queued_views: false,
			graph_recording: false,
		}
	}

	/// scheme I runs where its cost model prices it cheaper: few slices on the unfused pipeline
	/// up to n = 8192, the fused kernel from 4 slices on and for 2 slices at 16384; the user's
	/// choices override the model
	#[test]
	fn scheme1_takes_the_route_the_model_prices_cheaper() {
		let square = |n| Shape::new(n, n, n);
		let settings = sm90a_h100();
		let model = settings.model.model();
		for (slices, n, route) in [
			(1, 8192, Route::Unfused),
			(2, 4096, Route::Unfused),
			(2, 8192, Route::Unfused),
			(2, 16384, Route::Fused),
			(4, 4096, Route::Fused),
			(4, 8192, Route::Fused),
			(8, 8192, Route::Fused),
		] {
			assert_eq!(settings.scheme1_route(slices, square(n), false), route, "p={slices} n={n}");
			assert_eq!(model.scheme1_unfused(slices, square(n), false), route == Route::Unfused);
		}
		// the user's choices: with_fused_products(false), with_priced_routes(false), the portable path
		let overrides = [
			(Settings { fused: false, ..settings }, 4, Route::Unfused),
			(
				Settings {
					priced_routes: false,
					..settings
				},
				2,
				Route::Fused,
			),
			(
				Settings {
					portable: true,
					..settings
				},
				4,
				Route::Unfused,
			),
		];
		for (i, (chosen, slices, route)) in overrides.into_iter().enumerate() {
			assert_eq!(chosen.scheme1_route(slices, square(8192), false), route, "override {i}");
		}
	}
}
