//! the GPU architectures the crate carries code for: what `build.rs` compiles each kernel file to,
//! which embedded modules a GPU loads, which kernels a product may launch there, and which cost
//! model prices its plans
//!
//! `build.rs` reads this file too (`#[path]`), so it stands alone: no imports from the crate.
//! Adding an architecture means one variant here, its kernel files (`cuda/<family>.cu` or an
//! architecture's own file per family), a tuning table beside their launchers, and its rates in
//! the cost model.

/// one kind of GPU code the library embeds
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Arch {
	/// Hopper (`sm_90a` cubins): every kernel, the fused wgmma products among them
	Sm90a,
	/// any GPU of compute capability 8.0 or higher (Ampere on): `compute_80` PTX of the generic
	/// kernels, which the driver compiles for the GPU; INT8 products go through cuBLASLt
	Portable,
}

impl Arch {
	/// every architecture, in the order the embedded modules are indexed
	pub const ALL: [Arch; 2] = [Arch::Sm90a, Arch::Portable];

	/// the architecture whose code runs best on a GPU of compute capability `cc`; `None` below
	/// 8.0, where no code of the crate runs
	pub fn of_capability(cc: (i32, i32)) -> Option<Arch> {
		match cc {
			(9, 0) => Some(Arch::Sm90a),
			(major, _) if major >= 8 => Some(Arch::Portable),
			_ => None,
		}
	}

	/// nvcc's name of the code (`-arch`), which also names the compiled files
	pub fn nvcc_arch(self) -> &'static str {
		match self {
			Arch::Sm90a => "sm_90a",
			Arch::Portable => "compute_80",
		}
	}

	/// whether the code holds the fused wgmma products (scheme I and II), or leaves the INT8
	/// products to cuBLASLt
	pub fn fused(self) -> bool {
		match self {
			Arch::Sm90a => true,
			Arch::Portable => false,
		}
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn capabilities_map_to_their_code() {
		assert_eq!(Arch::of_capability((9, 0)), Some(Arch::Sm90a));
		for cc in [(8, 0), (8, 6), (8, 9), (10, 0), (12, 0)] {
			assert_eq!(Arch::of_capability(cc), Some(Arch::Portable), "{cc:?}");
		}
		assert_eq!(Arch::of_capability((7, 5)), None);
		assert!(Arch::ALL.iter().filter(|a| a.fused()).eq([&Arch::Sm90a]));
	}
}
