//! the GPU kernels: the `sm_90a` cubin of every `cuda/<stem>.cu`, compiled by `build.rs` and
//! embedded in the library
//!
//! the table is empty when the crate was built without nvcc (cfg `emugemm_no_kernels`); the GPU
//! backend then reports `Error::NoKernels` instead of loading anything.

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn table_is_sorted_and_holds_cubins() {
		assert_eq!(KERNELS.is_empty(), cfg!(emugemm_no_kernels));
		assert!(KERNELS.windows(2).all(|pair| pair[0].0 < pair[1].0), "stems sorted and unique");
		for (stem, image) in KERNELS {
			assert_eq!(&image[..4], b"\x7fELF", "{stem} is not an ELF cubin");
			assert_eq!(image.as_ptr() as usize % 64, 0, "{stem} is not 64-byte aligned");
		}
	}
}
