//! the module of every embedded kernel, from the kernel names `build.rs` read out of each cubin's
//! ELF symbol table, so that a module is loaded only when one of its kernels is first launched

use crate::kernels::Module;
use std::collections::HashMap;

/// the module index of every kernel entry point of `modules` (as `crate::kernels::KERNELS`); an
/// image that is not one whole fatbin is an error naming its file (found here, not by the driver
/// when a product first needs the module)
pub(crate) fn entries(modules: &[Module]) -> Result<HashMap<&'static str, usize>, String> {
	let mut entries = HashMap::new();
	for (index, module) in modules.iter().enumerate() {
		if !is_fatbin(module.image) {
			return Err(format!("{}.fatbin: not a fatbin image", module.stem));
		}
		entries.extend(module.kernels.iter().map(|&name| (name, index)));
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
	/// every embedded image is a fatbin whose kernels are indexed: among them the pipeline's split,
	/// CRT and fused product entry points (a build without nvcc embeds none)
	#[test]
	fn embedded_modules_name_their_kernels() {
		let modules = crate::kernels::KERNELS;
		let entries = super::entries(modules).unwrap();
		if modules.is_empty() {
			eprintln!("no kernels embedded (built without nvcc): nothing to check");
			return;
		}
		for (name, stem) in [
			("split_residues_f64", "split"),
			("crt_f64", "reconstruct"),
			("fast_shifts", "stats"),
			("bound_maxima", "bound"),
			("scheme1_fused_p4_f64", "scheme1"),
		] {
			let module = entries.get(name).unwrap_or_else(|| panic!("{name} not found"));
			assert_eq!(modules[*module].stem, stem, "{name}");
		}
		assert!(entries.keys().any(|k| k.starts_with("scheme2_residues")));
		assert_eq!(
			entries.len(),
			modules.iter().map(|m| m.kernels.len()).sum::<usize>(),
			"no name twice"
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
