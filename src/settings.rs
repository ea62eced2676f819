//! what a context has set that the policy and the engines read: the scaling rule, the routes
//! allowed, the staging buffers, the device memory and the GPUs

use crate::Scaling;
use crate::devices::GpuModel;

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
}
