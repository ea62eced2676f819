//! the checked-in header (include/emugemm.h) is the one cbindgen generates from the crate's
//! source: a change to the C ABI that leaves it stale fails here. `EMUGEMM_BLESS=1` rewrites it
use std::path::Path;

#[test]
fn the_header_is_current() {
	let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
	let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
	let mut generated = Vec::new();
	cbindgen::Builder::new()
		.with_crate(crate_dir)
		.with_config(config)
		.generate()
		.expect("cbindgen reads the crate")
		.write(&mut generated);
	let generated = String::from_utf8(generated).expect("the header is UTF-8");
	let path = crate_dir.join("include/emugemm.h");
	if std::env::var("EMUGEMM_BLESS").as_deref() == Ok("1") {
		std::fs::write(&path, &generated).expect("the header written");
	}
	let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
	assert!(
		checked_in == generated,
		"capi/include/emugemm.h is stale: run `EMUGEMM_BLESS=1 cargo test -p emugemm-capi --test header` and commit it"
	);
}
