//! the kernels an embedded cubin defines, read from its ELF symbol table, so that a module is
//! loaded only when one of its kernels is first launched

use object::{Object, ObjectSymbol, SymbolKind};
use std::collections::HashMap;

/// the module index of every kernel entry point of `cubins` (`(file, cubin)` pairs, as
/// `crate::kernels::KERNELS`); a cubin that does not parse as ELF is an error naming its file
pub(crate) fn entries(cubins: &[(&'static str, &'static [u8])]) -> Result<HashMap<&'static str, usize>, String> {
	let mut entries = HashMap::new();
	for (module, (file, cubin)) in cubins.iter().enumerate() {
		let elf = object::File::parse(*cubin).map_err(|e| format!("{file}.cubin: {e}"))?;
		for symbol in elf.symbols() {
			if symbol.kind() == SymbolKind::Text && symbol.is_global() && symbol.is_definition() {
				let name = symbol.name().map_err(|e| format!("{file}.cubin: {e}"))?;
				entries.insert(name, module);
			}
		}
	}
	Ok(entries)
}

#[cfg(test)]
mod tests {
	/// every embedded cubin parses and names its kernels: among them the pipeline's split, CRT
	/// and fused product entry points (a build without nvcc embeds none)
	#[test]
	fn embedded_cubins_name_their_kernels() {
		let kernels = crate::kernels::KERNELS;
		let entries = super::entries(kernels).unwrap();
		if kernels.is_empty() {
			eprintln!("no kernels embedded (built without nvcc): nothing to check");
			return;
		}
		for name in ["split_residues_f64", "crt_f64", "fast_shifts", "bound_maxima"] {
			let module = entries.get(name).unwrap_or_else(|| panic!("{name} not found"));
			assert!(kernels[*module].1.windows(name.len()).any(|w| w == name.as_bytes()));
		}
		assert!(entries.keys().any(|k| k.starts_with("scheme2_residues")));
	}
}
