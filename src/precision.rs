//! what the user asks for ([`Precision`]) and what runs ([`Plan`]); the policy between them is
//! in `src/policy.rs`, the error bound it relies on in `src/bound.rs`, and both are explained in
//! [`crate::accuracy`]

use crate::scheme1;
use crate::scheme2::MAX_MODULI;
use core::fmt;

/// the largest share of the rows a plan may leave to the native product: one in this many
/// ([`Plan::native_rows`]); beyond it the whole product is native
pub(crate) const MAX_NATIVE_SHARE: usize = 8;

/// the accuracy a product is asked for
///
/// # the promise
///
/// accuracy is measured in *scaled bits*, `-log2 max_ij |C - AB|_ij / (|A|·|B|)_ij`, per part for
/// complex products (the real part against `|Re A|·|Re B| + |Im A|·|Im B|`, the imaginary part
/// against `|Re A|·|Im B| + |Im A|·|Re B|`): see [`crate::testing`] and [`crate::accuracy`].
///
/// | precision | target (scaled bits) | against |
/// |---|---|---|
/// | [`Precision::Tf32`] | `min(13 + log2(K)/2, 53)` before the output's rounding | a TF32 tensor-core GEMM |
/// | [`Precision::F32`] | `min(26 + log2(K)/2, 53)` before the output's rounding | a native FP32 GEMM |
/// | [`Precision::F64`] | 53 before the output's rounding | a native FP64 GEMM |
/// | [`Precision::Bits`]`(n)` | `n`, the output's rounding included; `n` at most 52 for `f64`/`c64` outputs, 23 for `f32`/`c32` | |
/// | [`Precision::SchemeI`] / [`Precision::SchemeII`] | none: the plan is given | |
///
/// the final rounding of each entry to the output type is relative to the entry, not to
/// `(|A|·|B|)_ij`, and a native product shares it: the targets relative to a native product bound
/// the error before it (an `f32` output of a cancelling product can carry 50 scaled bits, and
/// `F64` keeps them). a native GEMM's rounding errors cancel like a random walk on most inputs, so
/// its scaled bits grow by about `log2(K)/2` above its unit roundoff (a TF32 GEMM reaches
/// 13-14 bits at K = 640, not 11); the `Tf32` and `F32` targets follow that, with 2 bits for the
/// lucky entries of small products. they are a model of the native product's accuracy, checked by
/// the tests on every input family, not a bound of it: no bound exists (a TF32 product of small
/// integers is exact). the operands are first balanced along the inner dimension by exact powers
/// of two (`A D`, `D^-1 B`, the product unchanged), which undoes inner-dimension scalings; then a
/// plan is run only where the certified bound
/// ([`Plan::predicted_bits`], a lower bound of the measured bits, with no statistics
/// involved) meets the target; rows of the product that no plan can certify are computed natively
/// (and counted in the report), and where too many are, the whole product is. the native product
/// keeps the targets relative to it (`Tf32`, `F32`, `F64`) by definition, so it also runs where
/// it is predicted faster (see [`crate::Emulator::with_native_candidate`]); a `Bits(n)` target is
/// certified on the rows a plan emulates, and rows computed natively carry the native product's
/// accuracy, which can fall below `n` where `n` is close to the type's significand (f64 at
/// `Bits(49)` on wide-range inputs measured 48.97 bits natively): [`crate::Report::native_rows`]
/// and [`crate::Report::native_reason`] say where that happened. complex products whose smaller part one scale per
/// row cannot certify may run with separately scaled parts ([`Plan::separate_parts`]), so that
/// each part keeps its own promise.
///
/// # example
/// ```
/// use emugemm::Precision;
/// let p = Precision::Bits(40);
/// assert_eq!(p.target_bits(53, 100), Some(40.0));
/// assert_eq!(Precision::Bits(20).target_bits(24, 100), Some(20.0));
/// assert_eq!(Precision::SchemeII { moduli: 15 }.target_bits(53, 100), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Precision {
	/// at least the scaled bits of a TF32 tensor-core GEMM on the same inputs, minus one, for each
	/// part of a complex product (see [`Precision`] and [`crate::accuracy`])
	Tf32,
	/// at least the scaled bits of a native FP32 GEMM on the same inputs, minus one, for each part
	F32,
	/// at least the scaled bits of a native FP64 GEMM on the same inputs, minus one, for each part:
	/// certified to 53 bits before the output's rounding
	F64,
	/// at least this many scaled bits (see [`crate::testing::Accuracy`]), for each part, the
	/// output's rounding included; at most the output type's significand bits minus one, 52 for
	/// `f64` and `c64`, 23 for `f32` and `c32`: more than its type holds is an
	/// [`crate::Error::InvalidPrecision`] (`Bits(24)` of an `f32` output), since no output of
	/// that type can carry it
	Bits(u32),
	/// Ozaki scheme I with this many slices (1..=8), for experts and benchmarks. An explicit plan
	/// keeps **no accuracy promise**: no bound is computed, and on wide-range inputs (entries far
	/// below their row's largest, or a huge entry meeting zeros) it can lose every bit, with no
	/// error and no warning
	SchemeI {
		/// the slice count `p`: `p(p+1)/2` INT8 products, `8p - 1` bits per operand
		slices: u32,
	},
	/// Ozaki scheme II with this many moduli (2..=20), for experts and benchmarks. Like
	/// [`Precision::SchemeI`] it keeps **no accuracy promise** and can lose every bit on wide-range
	/// inputs without a word
	SchemeII {
		/// the moduli count `p`: `p` INT8 products
		moduli: u32,
	},
}

impl Precision {
	/// the scaled bits the policy aims at for an output of `mantissa` significand bits and an inner
	/// dimension `k`, or `None` for explicit plans. For [`Precision::Bits`] the target covers the
	/// whole error; for the precisions relative to a native product, the error before the final
	/// rounding to the output type, which the native product shares (so an `f32` output at
	/// [`Precision::F64`] is computed to FP64 accuracy, then rounded)
	///
	/// # example
	/// ```
	/// use emugemm::Precision;
	/// assert_eq!(Precision::F64.target_bits(53, 8192), Some(53.0));
	/// assert_eq!(Precision::F64.target_bits(24, 8192), Some(53.0));
	/// assert_eq!(Precision::Tf32.target_bits(53, 1024), Some(18.0));
	/// assert_eq!(Precision::Bits(40).target_bits(53, 10), Some(40.0));
	/// assert_eq!(Precision::SchemeII { moduli: 15 }.target_bits(53, 10), None);
	/// ```
	pub fn target_bits(self, mantissa: u32, k: usize) -> Option<f64> {
		// a native product's rounding errors cancel like a random walk: its bits grow by about
		// log2(K) / 2 above its unit roundoff, and 2 more bits cover its lucky entries
		let native = |unit_roundoff: f64| (unit_roundoff + 2.0 + 0.5 * (k.max(1) as f64).log2()).min(53.0);
		Some(match self {
			Precision::Tf32 => native(11.0),
			Precision::F32 => native(24.0),
			Precision::F64 => 53.0,
			// products refuse an `n` the type cannot hold (an `Error::InvalidPrecision`)
			Precision::Bits(n) => (n as f64).min(mantissa as f64 - 1.0),
			Precision::SchemeI { .. } | Precision::SchemeII { .. } => return None,
		})
	}
}

/// how scheme II chooses the power-of-two scaling of rows and columns
///
/// both guarantee that the integer product fits the CRT range on every input
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Scaling {
	/// Cauchy–Schwarz bound from the row and column norms; no extra product
	#[default]
	Fast,
	/// an entrywise bound of `|A|·|B|` from one extra INT8 product; about `log2(K)/2` more
	/// bits on dense data
	Accurate,
}

/// the algorithm a plan runs
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
	/// the native product (faer on the CPU)
	Native,
	/// Ozaki scheme I with `slices` balanced int8 digits
	SchemeI {
		/// the slice count
		slices: u32,
	},
	/// Ozaki scheme II with `moduli` moduli
	SchemeII {
		/// the moduli count
		moduli: u32,
		/// the scaling rule
		scaling: Scaling,
	},
}

impl Scheme {
	/// the number of INT8 products (complex: 4M for scheme I, 3M for scheme II, plus the bound
	/// product of accurate scaling)
	pub fn int8_products(self, complex: bool) -> u32 {
		match self {
			Scheme::Native => 0,
			Scheme::SchemeI { slices: p } => p * (p + 1) / 2 * if complex { 4 } else { 1 },
			Scheme::SchemeII { moduli, scaling } => {
				moduli * if complex { 3 } else { 1 } + (scaling == Scaling::Accurate) as u32 * if complex { 2 } else { 1 }
			},
		}
	}
}

impl fmt::Display for Scheme {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		match self {
			Scheme::Native => write!(f, "native"),
			Scheme::SchemeI { slices } => write!(f, "scheme I, {slices} slices"),
			Scheme::SchemeII {
				moduli,
				scaling: Scaling::Fast,
			} => write!(f, "scheme II, {moduli} moduli"),
			Scheme::SchemeII {
				moduli,
				scaling: Scaling::Accurate,
			} => write!(f, "scheme II, {moduli} moduli, accurate scaling"),
		}
	}
}

/// what runs for one product: the scheme, the bits its bound certifies, and the rows left to the
/// native product
///
/// # example
/// ```
/// use emugemm::{Backend, Emulator, Precision, Scheme};
/// let a = emugemm::testing::random_matrix::<f64>(16, 8, 1.0, 1);
/// let b = emugemm::testing::random_matrix::<f64>(8, 4, 1.0, 2);
/// // the oracle emulates even where the native product is faster, as here
/// let emu = Emulator::with_backend(Backend::CpuEmulation).unwrap();
/// let plan = emu.plan(a.as_ref(), b.as_ref(), Precision::F64).unwrap();
/// assert!(matches!(plan.scheme, Scheme::SchemeII { .. }));
/// assert!(plan.predicted_bits >= 52.0);
/// assert_eq!(plan.native_rows, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
	/// the algorithm
	pub scheme: Scheme,
	/// a lower bound of the scaled bits of every emulated entry (per part for complex products),
	/// certified by the error bound; `+inf` where every emulated entry is exact (zero rows or
	/// columns), NaN where nothing is certified: native plans, and explicit plans
	/// ([`Precision::SchemeI`], [`Precision::SchemeII`]), which skip the bound
	pub predicted_bits: f64,
	/// the number of passes over K that scheme I needs to stay within its exact INT32 bound
	pub k_passes: usize,
	/// rows of the product computed natively because the bound could not certify them in this
	/// plan (all of them for a native plan)
	pub native_rows: usize,
	/// complex products only: each part of the operands scaled on its own, and the product
	/// computed as four real products (`Re A Re B`, `Im A Im B`, `Re A Im B`, `Im A Re B`, each by
	/// `scheme`) combined in `f64`. Chosen where one scale per row for both parts cannot certify
	/// the smaller part, such as `Re + i 2^-40 Im`. `false`: both parts share one scale per row
	/// (3M for scheme II, 4M for scheme I)
	pub separate_parts: bool,
}

/// the names [`Precision`]'s `FromStr` reads: `f64`, `f32`, `tf32`, `bits=N`, `scheme1=P`
/// (slices), `scheme2=M` (moduli)
///
/// # example
/// ```
/// use emugemm::Precision;
/// assert_eq!(Precision::SchemeII { moduli: 14 }.to_string(), "scheme2=14");
/// assert_eq!("bits=40".parse::<Precision>(), Ok(Precision::Bits(40)));
/// ```
impl fmt::Display for Precision {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		match self {
			Precision::Tf32 => write!(f, "tf32"),
			Precision::F32 => write!(f, "f32"),
			Precision::F64 => write!(f, "f64"),
			Precision::Bits(n) => write!(f, "bits={n}"),
			Precision::SchemeI { slices } => write!(f, "scheme1={slices}"),
			Precision::SchemeII { moduli } => write!(f, "scheme2={moduli}"),
		}
	}
}

/// a [`Precision`] from the names its `Display` writes (case-insensitive; `:` may stand for `=`)
///
/// # example
/// ```
/// use emugemm::Precision;
/// assert_eq!("F64".parse::<Precision>(), Ok(Precision::F64));
/// assert_eq!("scheme1:4".parse::<Precision>(), Ok(Precision::SchemeI { slices: 4 }));
/// assert!("f16".parse::<Precision>().is_err());
/// ```
impl core::str::FromStr for Precision {
	type Err = String;

	fn from_str(s: &str) -> Result<Self, String> {
		let s = s.trim().to_ascii_lowercase();
		let (name, value) = match s.split_once(['=', ':']) {
			Some((name, value)) => (name.trim(), Some(value.trim())),
			None => (s.as_str(), None),
		};
		let number = || -> Result<u32, String> {
			value
				.ok_or_else(|| format!("{name} takes a number, as in {name}=4"))?
				.parse()
				.map_err(|e| format!("{name}: {e}"))
		};
		match (name, value) {
			("f64", None) => Ok(Precision::F64),
			("f32", None) => Ok(Precision::F32),
			("tf32", None) => Ok(Precision::Tf32),
			("bits", _) => Ok(Precision::Bits(number()?)),
			("scheme1", _) => Ok(Precision::SchemeI { slices: number()? }),
			("scheme2", _) => Ok(Precision::SchemeII { moduli: number()? }),
			_ => Err(format!(
				"unknown precision {s:?}: expected f64, f32, tf32, bits=N, scheme1=P or scheme2=M"
			)),
		}
	}
}

impl fmt::Display for Plan {
	fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
		if self.scheme == Scheme::Native {
			return write!(f, "{}", self.scheme);
		}
		write!(f, "{}", self.scheme)?;
		if self.separate_parts {
			write!(f, ", parts scaled separately")?;
		}
		if !self.predicted_bits.is_nan() {
			write!(f, ", certified {:.1} bits", self.predicted_bits)?;
		}
		if self.k_passes > 1 {
			write!(f, ", {} K passes", self.k_passes)?;
		}
		if self.native_rows > 0 {
			write!(f, ", {} rows native", self.native_rows)?;
		}
		Ok(())
	}
}

impl Plan {
	/// the native product of `rows` rows
	pub(crate) fn native(rows: usize) -> Plan {
		Plan {
			scheme: Scheme::Native,
			predicted_bits: f64::NAN,
			k_passes: 1,
			native_rows: rows,
			separate_parts: false,
		}
	}
}

/// the K length of one scheme I pass: the largest multiple of 128 within the exact INT32 bound
/// (halved for complex products, whose 4M stacks real and imaginary parts along K); 128 = the K
/// blocks of the fused GPU kernel (4 chunks of 32), which then never straddle two passes
pub(crate) fn pass_len(slices: u32, complex: bool) -> usize {
	scheme1::k_max(slices) / if complex { 2 } else { 1 } / 128 * 128
}

/// scheme I passes over K
pub(crate) fn k_passes(scheme: Scheme, k: usize, complex: bool) -> usize {
	match scheme {
		Scheme::SchemeI { slices } => k.div_ceil(pass_len(slices, complex)).max(1),
		_ => 1,
	}
}

impl Plan {
	/// the K ranges of the plan's passes (one range for scheme II)
	pub(crate) fn pass_ranges(&self, k: usize, complex: bool) -> Vec<core::ops::Range<usize>> {
		let len = match self.scheme {
			Scheme::SchemeI { slices } => pass_len(slices, complex),
			_ => k.max(1),
		};
		(0..self.k_passes).map(|q| (q * len).min(k)..((q + 1) * len).min(k)).collect()
	}
}

/// checks an explicit plan's parameters, and that an output of `mantissa` significand bits can
/// hold the bits asked for (at most `mantissa - 1`: 52 for `f64` and `c64`, 23 for `f32` and
/// `c32`); the reason where they are not
pub(crate) fn validate(precision: Precision, mantissa: u32) -> Result<(), &'static str> {
	let bad = Err;
	match precision {
		Precision::Bits(n) if n >= mantissa => bad(match mantissa {
			24 => "at most 23 bits for f32 and c32 outputs (their significand bits minus one)",
			_ => "at most 52 bits for f64 and c64 outputs (their significand bits minus one)",
		}),
		Precision::SchemeI { slices } if !(1..=scheme1::MAX_SLICES).contains(&slices) => bad("scheme I takes 1..=8 slices"),
		Precision::SchemeII { moduli } if !(2..=MAX_MODULI).contains(&moduli) => bad("scheme II takes 2..=20 moduli"),
		_ => Ok(()),
	}
}

impl Precision {
	/// `Ok` where a product of `T` can be asked for this precision: an explicit plan's parameters
	/// in range, bits that `T`'s output can hold; [`crate::Error::InvalidPrecision`] saying why
	/// otherwise. Every product checks its precision so; this asks without one
	///
	/// # example
	/// ```
	/// use emugemm::Precision;
	/// assert!(Precision::SchemeII { moduli: 15 }.check::<f64>().is_ok());
	/// assert!(Precision::SchemeII { moduli: 99 }.check::<f64>().is_err());
	/// // an f32 output holds 23 bits at most
	/// assert!(Precision::Bits(24).check::<f32>().is_err() && Precision::Bits(24).check::<f64>().is_ok());
	/// ```
	pub fn check<T: crate::Scalar>(self) -> Result<(), crate::Error> {
		validate(self, T::MANTISSA_BITS).map_err(|reason| crate::Error::InvalidPrecision { precision: self, reason })
	}
}
