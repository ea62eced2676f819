//! the module of every embedded kernel, from the kernel names `build.rs` read out of each cubin's
//! ELF symbol table, so that a module is loaded only when one of its kernels is first launched

use crate::kernels::Module;

/// the module index and the name of every kernel entry point of `modules` (as
/// `crate::kernels::modules(arch)`); an image that is not one whole fatbin is an error naming its file
/// (found here, not by the driver when a product first needs the module)
pub(crate) fn entries(modules: &[Module]) -> Result<Vec<(usize, &'static str)>, String> {
	let mut entries = Vec::new();
	for (index, module) in modules.iter().enumerate() {
		if !is_fatbin(module.image) {
			return Err(format!("{}.fatbin: not a fatbin image", module.stem));
		}
		entries.extend(module.kernels.iter().map(|&name| (index, name)));
	}
	Ok(entries)
}

/// whether `image` is one fatbin: its header (magic, version, header size, size of the rest, little
/// endian) spans it exactly
fn is_fatbin(image: &[u8]) -> bool {
	const MAGIC: u32 = 0xba55_ed50;
	let Some(header) = image.get(..16) else { return false };
	let magic = u32::from_le_bytes(header[..4].try_into().expect("4 bytes"));
	let header_size = u16::from_le_bytes(header[6..8].try_into().expect("2 bytes")) as u64;
	let rest = u64::from_le_bytes(header[8..16].try_into().expect("8 bytes"));
	magic == MAGIC && header_size.checked_add(rest) == Some(image.len() as u64)
}

#[cfg(test)]
mod tests {
	use std::collections::HashMap;

	/// says that a build without nvcc has nothing to check, and fails where the build was asked to
	/// embed the kernels (`EMUGEMM_REQUIRE_KERNELS=1`, as CI's release tests and GPU bundles set)
	fn skipped_without_kernels() {
		assert_ne!(
			std::env::var("EMUGEMM_REQUIRE_KERNELS").as_deref(),
			Ok("1"),
			"EMUGEMM_REQUIRE_KERNELS=1, but no kernel is embedded"
		);
		eprintln!("SKIPPED: no kernels embedded (built without nvcc), nothing to check");
	}

	/// every embedded image is a fatbin whose kernels are indexed: among them the pipeline's split,
	/// CRT and fused product entry points (a build without nvcc embeds none)
	use crate::arch::Arch;
	use crate::kernels::modules;

	#[test]
	fn embedded_modules_name_their_kernels() {
		let modules = modules(Arch::Sm90a);
		let entries: HashMap<&str, usize> = super::entries(modules).unwrap().into_iter().map(|(i, name)| (name, i)).collect();
		if modules.is_empty() {
			skipped_without_kernels();
			return;
		}
		for (name, stem) in [
			("split_residues_f64", "split"),
			("crt_f64", "reconstruct"),
			("fast_shifts", "stats"),
			("bound_maxima", "bound"),
			("scheme1_fused_p4_f64", "sm90_scheme1_fused"),
		] {
			let module = entries.get(name).unwrap_or_else(|| panic!("{name} not found"));
			assert_eq!(modules[*module].stem, stem, "{name}");
		}
		assert!(entries.keys().any(|k| k.starts_with("scheme2_residues")));
		// the chassis' instances live in the Hopper file of the chassis
		for (name, module) in entries
			.iter()
			.filter(|(k, _)| k.starts_with("scheme2_residues") || k.starts_with("igemm_"))
		{
			assert_eq!(modules[*module].stem, "sm90_chassis", "{name}");
		}
		assert_eq!(
			entries.len(),
			modules.iter().map(|m| m.kernels.len()).sum::<usize>(),
			"no name twice"
		);
	}

	/// the portable path's PTX is embedded with its entry points: every kernel of the unfused
	/// pipeline, each also in the sm_90a code, and none of the Hopper-only fused kernels
	#[test]
	fn portable_modules_name_the_unfused_pipelines_kernels() {
		let (sm90a, portable) = (modules(Arch::Sm90a), modules(Arch::Portable));
		assert_eq!(portable.is_empty(), sm90a.is_empty(), "the portable path is built with the kernels");
		if portable.is_empty() {
			skipped_without_kernels();
			return;
		}
		let names: HashMap<&str, usize> = super::entries(portable).unwrap().into_iter().map(|(i, name)| (name, i)).collect();
		let unfused = [
			("row_stats_c32", "stats"),
			("fast_shifts", "stats"),
			("inner_ranges_f64", "balance"),
			("balance_c64", "balance"),
			("split_window_f64", "split"),
			("bound_maxima", "bound"),
			("split_residues_f32", "split"),
			("split_digits_c64", "split"),
			("split_coarse_f64", "split"),
			("row_col_max", "reduce"),
			("reduce_mod", "reduce"),
			("reduce_3m", "reduce"),
			("crt_c32", "reconstruct"),
			("crt_remainders_f64", "reconstruct"),
			("shift_reduce_f64", "reconstruct"),
			("native_fixup_c64", "reconstruct"),
			("gather_rows_f64", "rows"),
			("scatter_rows_c32", "rows"),
			("split_parts_c64", "parts"),
			("combine_parts_c32", "parts"),
		];
		for (name, stem) in unfused {
			let module = names.get(name).unwrap_or_else(|| panic!("{name} not in the portable code"));
			assert_eq!(portable[*module].stem, stem, "{name}");
		}
		let every_sm90a: Vec<&str> = sm90a.iter().flat_map(|m| m.kernels.iter().copied()).collect();
		assert!(
			names.keys().all(|name| every_sm90a.contains(name)),
			"the same kernels as the sm_90a code"
		);
		assert!(
			!names
				.keys()
				.any(|name| name.starts_with("scheme1_fused") || name.starts_with("scheme2_residues") || name.starts_with("igemm"))
		);
	}

	/// a fatbin's header must span the image exactly, after the magic number
	#[test]
	fn a_truncated_image_is_not_a_fatbin() {
		let mut image = vec![0u8; 64];
		image[..4].copy_from_slice(&0xba55_ed50_u32.to_le_bytes());
		image[6..8].copy_from_slice(&16u16.to_le_bytes());
		image[8..16].copy_from_slice(&48u64.to_le_bytes());
		assert!(super::is_fatbin(&image));
		assert!(!super::is_fatbin(&image[..63]));
		assert!(!super::is_fatbin(&image[..8]));
		image[0] ^= 1;
		assert!(!super::is_fatbin(&image));
	}
}
