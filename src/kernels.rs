//! the GPU kernels, by architecture ([`modules`]): the `sm_90a` code of every `cuda/<stem>.cu`, and
//! the portable path's `compute_80` PTX of the generic ones, compiled by `build.rs` and
//! embedded in the library as compressed fatbins, which the driver unpacks (and for PTX compiles
//! for the GPU) when it loads the module
//!
//! the tables are empty when the crate was built without nvcc (cfg `emugemm_no_kernels`); the GPU
//! backend then reports `Error::NoKernels` instead of loading anything.

/// the module of one `cuda/<stem>.cu`
pub(crate) struct Module {
	/// the file's stem
	pub stem: &'static str,
	/// the compressed fatbin of its cubin, for `cuModuleLoadData`
	pub image: &'static [u8],
	/// the kernel entry points it defines (read by `build.rs` from the cubin's symbol table: the
	/// compressed image hides it)
	pub kernels: &'static [&'static str],
}

use crate::arch::Arch;

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn table_is_sorted_and_holds_fatbins() {
		let sm90a = modules(Arch::Sm90a);
		assert_eq!(sm90a.is_empty(), cfg!(emugemm_no_kernels));
		for arch in Arch::ALL {
			assert!(
				modules(arch).windows(2).all(|pair| pair[0].stem < pair[1].stem),
				"{arch:?} stems sorted and unique"
			);
		}
		for Module { stem, image, kernels } in Arch::ALL.into_iter().flat_map(modules) {
			assert_eq!(&image[..4], 0xba55_ed50_u32.to_le_bytes(), "{stem} is not a fatbin");
			assert_eq!(image.as_ptr() as usize % 64, 0, "{stem} is not 64-byte aligned");
			assert!(!kernels.is_empty(), "{stem} defines no kernel");
		}
		// the kernels only the benchmark and the tests launch are there with the feature `bench` alone
		let stems: Vec<&str> = sm90a.iter().map(|module| module.stem).collect();
		assert_eq!(stems.contains(&"selftest"), cfg!(feature = "bench") && !sm90a.is_empty());
	}
}
