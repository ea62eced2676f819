//! the interposer's configuration, from the environment, read once

use emugemm::Precision;
use std::sync::OnceLock;

/// what the interposer emulates: a precision per element type (`None`: off), the size below
/// which calls go native, and the log file
///
/// # example
/// ```
/// let config = emugemm_cublas::Config::from_env();
/// assert!(config.min_size >= 1);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
	/// double (`EMUGEMM_HOOK_D`), complex double (`_Z`), single (`_S`), complex single (`_C`)
	pub precision: [Option<Precision>; 4],
	/// calls with `m`, `n` or `k` below this go native (`EMUGEMM_HOOK_MIN`)
	pub min_size: i64,
	/// where one JSON line per intercepted call goes (`EMUGEMM_HOOK_LOG`)
	pub log: Option<String>,
	/// whether batched calls are emulated (`EMUGEMM_HOOK_BATCHED=on`); off by default, they are
	/// forwarded
	pub batched: bool,
	/// whether rank-k updates (SYRK, HERK) are emulated (`EMUGEMM_HOOK_RANK_K=on`); off by
	/// default, they are forwarded: a solver's updates (cuSOLVER's Cholesky, k = 512) ran slower
	/// emulated, or computed natively as a whole GEMM, than cuBLAS's own SYRK and HERK
	pub rank_k: bool,
}

/// the element types of the intercepted calls, as the configuration indexes them
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
	D = 0,
	Z = 1,
	S = 2,
	C = 3,
}

impl Kind {
	/// whether the type is complex: its rank-k update is cuBLAS's HERK, a real type's its SYRK
	pub(crate) fn complex(self) -> bool {
		matches!(self, Kind::Z | Kind::C)
	}
}

impl Config {
	/// the configuration the environment gives; a value that cannot be read is reported on
	/// standard error once and leaves that type's calls native
	///
	/// # example
	/// ```
	/// let config = emugemm_cublas::Config::from_env();
	/// println!("{:?}", config.precision);
	/// ```
	pub fn from_env() -> Config {
		let precision = |key: &str, default: Precision| match std::env::var(key) {
			Err(_) => Some(default),
			Ok(v) if v.trim().eq_ignore_ascii_case("off") => None,
			Ok(v) => v
				.parse::<Precision>()
				.map_err(|e| eprintln!("emugemm-cublas: {key}={v:?}: {e}; its calls go native"))
				.ok(),
		};
		let min_size = match std::env::var("EMUGEMM_HOOK_MIN") {
			Err(_) => 256,
			Ok(v) => v.trim().parse::<i64>().unwrap_or_else(|e| {
				eprintln!("emugemm-cublas: EMUGEMM_HOOK_MIN={v:?}: {e}; 256 is used");
				256
			}),
		};
		Config {
			precision: [
				precision("EMUGEMM_HOOK_D", Precision::F64),
				precision("EMUGEMM_HOOK_Z", Precision::F64),
				precision("EMUGEMM_HOOK_S", Precision::F32),
				precision("EMUGEMM_HOOK_C", Precision::F32),
			],
			min_size: min_size.max(1),
			log: std::env::var("EMUGEMM_HOOK_LOG").ok().filter(|p| !p.is_empty()),
			batched: on("EMUGEMM_HOOK_BATCHED"),
			rank_k: on("EMUGEMM_HOOK_RANK_K"),
		}
	}

	/// the process's configuration
	pub(crate) fn get() -> &'static Config {
		static CONFIG: OnceLock<Config> = OnceLock::new();
		CONFIG.get_or_init(Config::from_env)
	}

	/// the precision of `kind`'s calls, where they are emulated
	pub(crate) fn precision(&self, kind: Kind) -> Option<Precision> {
		self.precision[kind as usize]
	}
}

/// whether the environment variable `name` says `on`
fn on(name: &str) -> bool {
	std::env::var(name).is_ok_and(|v| v.trim().eq_ignore_ascii_case("on"))
}
