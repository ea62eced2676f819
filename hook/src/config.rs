//! the interposer's configuration, from the environment, read and checked once: a value it cannot
//! use is named on standard error at the first call, with what is done instead

use crate::stderr::say;
use emugemm::Precision;
use emugemm_c::ElementType;
use emugemm_c::{Element, EmugemmComplex32, EmugemmComplex64};
use std::sync::OnceLock;

/// what the interposer emulates: a precision per element type (`None`: off), the size below
/// which calls are forwarded, the log file, the routines beyond single GEMMs, the workspace bound,
/// and what of the environment was ignored
///
/// # example
/// ```
/// let config = emugemm_cublas::Config::from_vars([("EMUGEMM_HOOK_D", "scheme2=99"), ("EMUGEMM_HOOK_MIN", "64")]);
/// assert_eq!(config.precision[0], None);
/// assert_eq!(config.min_size, 64);
/// assert!(config.ignored[0].contains("EMUGEMM_HOOK_D"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
	/// double (`EMUGEMM_HOOK_D`), complex double (`_Z`), single (`_S`), complex single (`_C`)
	pub precision: [Option<Precision>; 4],
	/// calls with `m`, `n` or `k` below this are forwarded (`EMUGEMM_HOOK_MIN`, default 256)
	pub min_size: i64,
	/// where one JSON line per intercepted call goes (`EMUGEMM_HOOK_LOG`)
	pub log: Option<String>,
	/// whether batched calls are emulated (`EMUGEMM_HOOK_BATCHED`: `on`, `1`, `true`, `yes`);
	/// off by default, they are forwarded
	pub batched: bool,
	/// whether rank-k updates (SYRK, HERK) are emulated (`EMUGEMM_HOOK_RANK_K`, as above); off by
	/// default, they are forwarded: a solver's updates (cuSOLVER's Cholesky, k = 512) ran slower
	/// emulated, or computed natively as a whole GEMM, than cuBLAS's own SYRK and HERK
	pub rank_k: bool,
	/// the most device memory one product's workspace may take, in bytes (`EMUGEMM_HOOK_MEMORY`:
	/// bytes, or with a suffix `K`, `M`, `G`, `T` of powers of 1024); a call that does not fit is
	/// forwarded. Unset: 90% of the GPU's memory. Either way a workspace is also bounded by the
	/// memory the program leaves free
	pub memory: Option<usize>,
	/// each variable that was ignored, why, and what is done instead
	pub ignored: Vec<String>,
}

/// the variables the interposer reads
const KNOWN: [&str; 9] = [
	"EMUGEMM_HOOK_D",
	"EMUGEMM_HOOK_Z",
	"EMUGEMM_HOOK_S",
	"EMUGEMM_HOOK_C",
	"EMUGEMM_HOOK_MIN",
	"EMUGEMM_HOOK_LOG",
	"EMUGEMM_HOOK_BATCHED",
	"EMUGEMM_HOOK_RANK_K",
	"EMUGEMM_HOOK_MEMORY",
];

impl Config {
	/// the configuration the process's environment gives
	///
	/// # example
	/// ```
	/// let config = emugemm_cublas::Config::from_env();
	/// println!("{:?}", config.precision);
	/// ```
	pub fn from_env() -> Config {
		Config::from_vars(std::env::vars().filter(|(k, _)| k.starts_with("EMUGEMM_HOOK")))
	}

	/// the configuration that these variables give
	///
	/// # example
	/// see [`Config`]
	pub fn from_vars<K: AsRef<str>, V: AsRef<str>>(vars: impl IntoIterator<Item = (K, V)>) -> Config {
		let vars: Vec<(String, String)> = vars
			.into_iter()
			.map(|(k, v)| (k.as_ref().to_string(), v.as_ref().to_string()))
			.collect();
		let get = |key: &str| vars.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.trim().to_string());
		let mut ignored: Vec<String> = vars
			.iter()
			.filter(|(k, _)| k.starts_with("EMUGEMM_HOOK") && !KNOWN.contains(&k.as_str()))
			.map(|(k, _)| format!("{k} is not a variable of the interposer (it reads {}): ignored", KNOWN.join(", ")))
			.collect();
		let mut precision = |key: &str, default: Precision, check: fn(Precision) -> Result<(), emugemm::Error>| match get(key) {
			None => Some(default),
			Some(v) if v.eq_ignore_ascii_case("off") => None,
			Some(v) => match v
				.parse::<Precision>()
				.map_err(|e| e.to_string())
				.and_then(|p| check(p).map(|()| p).map_err(|e| e.to_string()))
			{
				Ok(p) => Some(p),
				Err(e) => {
					ignored.push(format!("{key}={v:?}: {e}; this type's calls are forwarded"));
					None
				},
			},
		};
		let precision = [
			precision("EMUGEMM_HOOK_D", Precision::F64, Precision::check::<f64>),
			precision(
				"EMUGEMM_HOOK_Z",
				Precision::F64,
				Precision::check::<<EmugemmComplex64 as Element>::Scalar>,
			),
			precision("EMUGEMM_HOOK_S", Precision::F32, Precision::check::<f32>),
			precision(
				"EMUGEMM_HOOK_C",
				Precision::F32,
				Precision::check::<<EmugemmComplex32 as Element>::Scalar>,
			),
		];
		let min_size = match get("EMUGEMM_HOOK_MIN").map(|v| (v.parse::<i64>(), v)) {
			None => 256,
			Some((Ok(n), _)) if n >= 1 => n,
			Some((_, v)) => {
				ignored.push(format!("EMUGEMM_HOOK_MIN={v:?}: not a size of at least 1; 256 is used"));
				256
			},
		};
		let mut switch = |key: &str| match get(key).map(|v| (v.to_ascii_lowercase(), v)) {
			None => false,
			Some((lower, _)) if ["on", "1", "true", "yes"].contains(&lower.as_str()) => true,
			Some((lower, _)) if ["off", "0", "false", "no"].contains(&lower.as_str()) => false,
			Some((_, v)) => {
				ignored.push(format!(
					"{key}={v:?}: neither on (on, 1, true, yes) nor off (off, 0, false, no); off is used"
				));
				false
			},
		};
		let (batched, rank_k) = (switch("EMUGEMM_HOOK_BATCHED"), switch("EMUGEMM_HOOK_RANK_K"));
		let memory = get("EMUGEMM_HOOK_MEMORY").and_then(|v| {
			bytes(&v).or_else(|| {
				ignored.push(format!(
					"EMUGEMM_HOOK_MEMORY={v:?}: not a number of bytes (such as 8G or 512M); 90% of the GPU's memory is used"
				));
				None
			})
		});
		Config {
			precision,
			min_size,
			log: get("EMUGEMM_HOOK_LOG").filter(|p| !p.is_empty()),
			batched,
			rank_k,
			memory,
			ignored,
		}
	}

	/// the process's configuration: read at the first call, what it ignored said once on standard
	/// error, its workspace bound handed to the C ABI
	pub(crate) fn get() -> &'static Config {
		static CONFIG: OnceLock<Config> = OnceLock::new();
		CONFIG.get_or_init(|| {
			let config = Config::from_env();
			for line in &config.ignored {
				say(line);
			}
			if let Some(bytes) = config.memory {
				emugemm_c::limit_device_memory(bytes);
			}
			config
		})
	}

	/// the precision of `kind`'s calls, where they are emulated
	pub(crate) fn precision(&self, kind: ElementType) -> Option<Precision> {
		let index = match kind {
			ElementType::D => 0,
			ElementType::Z => 1,
			ElementType::S => 2,
			ElementType::C => 3,
		};
		self.precision[index]
	}
}

/// `text` as a number of bytes: digits, and an optional suffix K, M, G or T (powers of 1024,
/// `B` or `iB` after it allowed)
fn bytes(text: &str) -> Option<usize> {
	let upper = text.trim().to_ascii_uppercase();
	let number = upper.trim_end_matches('B').trim_end_matches('I');
	let (digits, shift) = match number.chars().last()? {
		'K' => (&number[..number.len() - 1], 10),
		'M' => (&number[..number.len() - 1], 20),
		'G' => (&number[..number.len() - 1], 30),
		'T' => (&number[..number.len() - 1], 40),
		_ => (number, 0),
	};
	let value: usize = digits.trim().parse().ok()?;
	value.checked_mul(1 << shift).filter(|&b| b > 0)
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn switches_take_the_usual_words() {
		for on in ["on", "1", "true", "YES"] {
			let config = Config::from_vars([("EMUGEMM_HOOK_BATCHED", on)]);
			assert!(config.batched && config.ignored.is_empty(), "{on}");
		}
		for off in ["off", "0", "false", "no"] {
			let config = Config::from_vars([("EMUGEMM_HOOK_RANK_K", off)]);
			assert!(!config.rank_k && config.ignored.is_empty(), "{off}");
		}
		let maybe = Config::from_vars([("EMUGEMM_HOOK_BATCHED", "maybe")]);
		assert!(!maybe.batched && maybe.ignored[0].starts_with("EMUGEMM_HOOK_BATCHED=\"maybe\""));
	}

	#[test]
	fn precisions_out_of_range_are_said_and_forwarded() {
		let config = Config::from_vars([
			("EMUGEMM_HOOK_D", "scheme2=99"),
			("EMUGEMM_HOOK_Z", "bits=60"),
			("EMUGEMM_HOOK_S", "off"),
		]);
		assert_eq!(config.precision, [None, None, None, Some(Precision::F32)]);
		assert_eq!(config.ignored.len(), 2, "{:?}", config.ignored);
		assert!(config.ignored[1].contains("EMUGEMM_HOOK_Z=\"bits=60\""));
		let good = Config::from_vars([("EMUGEMM_HOOK_D", "scheme2=14")]);
		assert_eq!(good.precision[0], Some(Precision::SchemeII { moduli: 14 }));
		assert!(good.ignored.is_empty());
	}

	#[test]
	fn sizes_bytes_and_unknown_variables() {
		let config = Config::from_vars([
			("EMUGEMM_HOOK_MIN", "abc"),
			("EMUGEMM_HOOK_MEMORY", "4G"),
			("EMUGEMM_HOOK_DD", "f64"),
		]);
		assert_eq!((config.min_size, config.memory), (256, Some(4 << 30)));
		assert_eq!(config.ignored.len(), 2, "{:?}", config.ignored);
		assert!(config.ignored.iter().any(|l| l.starts_with("EMUGEMM_HOOK_DD is not a variable")));
		assert_eq!(bytes("512MiB"), Some(512 << 20));
		assert_eq!(bytes("1000"), Some(1000));
		for bad in ["", "G", "-1", "0", "twelve"] {
			assert_eq!(bytes(bad), None, "{bad}");
		}
		assert_eq!(Config::from_vars([("EMUGEMM_HOOK_MIN", "0")]).min_size, 256);
	}
}
