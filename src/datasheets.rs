//! what the policy knows of each GPU: its data-sheet rates (native FP64, FP32 and TF32, INT8,
//! memory bandwidth), the cost model derived from them, and the model a context prices its plans
//! with
//!
//! Hopper GPUs (H100, H200) run the fused sm_90a kernels and keep the model refitted on an H100's
//! grid of shapes ([`crate::cost::HOPPER`]). Every other GPU runs the portable path (the unfused
//! pipeline: cuBLASLt INT8 products, separate reductions), whose model is the one measured on an
//! H200 ([`crate::cost::H200`]) rescaled to the
//! GPU's rates: its INT8 products at the share of the data-sheet rate that cuBLASLt reached on the
//! H200 (1,537 of 1,979 TOPS), plus the INT32 planes they write and the reductions read (8.5
//! bytes per output entry and INT8 product, at the GPU's bandwidth); its split and CRT at the
//! bandwidth ratio; its native products at the shares of the data-sheet rates that cuBLAS reached
//! on the H200. A GPU not in the table is measured at first use ([`DataSheet::measured`]).
//! These models are predictions: only the Hopper rows were measured

use crate::arch::Arch;
use crate::cost::{CostModel, H200, HOPPER, NativeRates};
use std::sync::{OnceLock, RwLock};

/// a GPU's dense (no sparsity) peak rates, in operations per second and bytes per second
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DataSheet {
	/// how the driver names it (matched as a part of the device's name)
	pub name: &'static str,
	/// FP64 (on the tensor cores where it has FP64 tensor cores)
	pub fp64: f64,
	/// FP32 (non-tensor)
	pub fp32: f64,
	/// TF32 on the tensor cores
	pub tf32: f64,
	/// INT8 on the tensor cores
	pub int8: f64,
	/// memory bandwidth
	pub bandwidth: f64,
	/// the architecture of the code it runs
	pub arch: Arch,
	/// where the numbers come from
	pub source: &'static str,
}

const T: f64 = 1e12;

/// the GPUs the policy knows, by data sheet; the first match of a device's name wins (so longer
/// names stand before the names they contain)
pub(crate) const GPUS: [DataSheet; 10] = [
	DataSheet {
		name: "GB200",
		fp64: 45.0 * T,
		fp32: 90.0 * T,
		tf32: 1250.0 * T,
		int8: 5000.0 * T,
		bandwidth: 8.0 * T,
		arch: Arch::Portable,
		source: "NVIDIA GB200 NVL72 data sheet, per GPU",
	},
	DataSheet {
		name: "B200",
		fp64: 40.0 * T,
		fp32: 80.0 * T,
		tf32: 1100.0 * T,
		int8: 4500.0 * T,
		bandwidth: 8.0 * T,
		arch: Arch::Portable,
		source: "NVIDIA DGX B200 / HGX B200 data sheet, per GPU",
	},
	DataSheet {
		name: "H200",
		fp64: 67.0 * T,
		fp32: 67.0 * T,
		tf32: 494.7 * T,
		int8: 1979.0 * T,
		bandwidth: 4.8 * T,
		arch: Arch::Sm90a,
		source: "NVIDIA H200 Tensor Core GPU data sheet (SXM)",
	},
	DataSheet {
		name: "H100",
		fp64: 67.0 * T,
		fp32: 67.0 * T,
		tf32: 494.7 * T,
		int8: 1979.0 * T,
		bandwidth: 3.35 * T,
		arch: Arch::Sm90a,
		source: "NVIDIA H100 Tensor Core GPU data sheet (SXM)",
	},
	DataSheet {
		name: "A100",
		fp64: 19.5 * T,
		fp32: 19.5 * T,
		tf32: 156.0 * T,
		int8: 624.0 * T,
		bandwidth: 2.039 * T,
		arch: Arch::Portable,
		source: "NVIDIA A100 Tensor Core GPU data sheet (SXM 80 GB)",
	},
	DataSheet {
		name: "L40S",
		fp64: 1.43 * T,
		fp32: 91.6 * T,
		tf32: 183.0 * T,
		int8: 733.0 * T,
		bandwidth: 0.864 * T,
		arch: Arch::Portable,
		source: "NVIDIA L40S data sheet (FP64 at 1/64 of FP32)",
	},
	DataSheet {
		name: "L4",
		fp64: 0.47 * T,
		fp32: 30.3 * T,
		tf32: 60.0 * T,
		int8: 242.5 * T,
		bandwidth: 0.3 * T,
		arch: Arch::Portable,
		source: "NVIDIA L4 data sheet (FP64 at 1/64 of FP32)",
	},
	DataSheet {
		name: "A10",
		fp64: 0.98 * T,
		fp32: 31.2 * T,
		tf32: 62.5 * T,
		int8: 250.0 * T,
		bandwidth: 0.6 * T,
		arch: Arch::Portable,
		source: "NVIDIA A10 data sheet (FP64 at 1/32 of FP32)",
	},
	DataSheet {
		name: "RTX 5090",
		fp64: 1.64 * T,
		fp32: 104.8 * T,
		tf32: 104.8 * T,
		int8: 838.0 * T,
		bandwidth: 1.792 * T,
		arch: Arch::Portable,
		source: "NVIDIA RTX Blackwell GPU architecture whitepaper (GeForce RTX 5090)",
	},
	DataSheet {
		name: "RTX 4090",
		fp64: 1.29 * T,
		fp32: 82.6 * T,
		tf32: 82.6 * T,
		int8: 660.6 * T,
		bandwidth: 1.008 * T,
		arch: Arch::Portable,
		source: "NVIDIA Ada GPU architecture whitepaper (GeForce RTX 4090)",
	},
];

/// the H200 the measured model comes from
const MEASURED_ON: DataSheet = GPUS[2];

/// the share of the data-sheet rates the H200 reached: cuBLASLt INT8 (1,537 TOPS), DGEMM, ZGEMM,
/// SGEMM and CGEMM (the measured model's native rates) and TF32 (411 TF/s)
const INT8_SHARE: f64 = 1537.0 / 1979.0;

/// bytes per output entry and INT8 product that the unfused pipeline moves besides the operands:
/// the INT32 plane written and read back by the reduction, and the int8 residue written
const UNFUSED_BYTES: f64 = 8.5;

impl DataSheet {
	/// a GPU's rates as measured on it: `fp64`, `fp32`, `tf32` and `int8` in operations per second
	/// of its library GEMMs, `bandwidth` of a device-to-device copy; the shares the H200 reached
	/// are divided out, so that the derived model gives back what was measured
	#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
	pub fn measured(name: &'static str, [fp64, fp32, tf32, int8, bandwidth]: [f64; 5], arch: Arch) -> DataSheet {
		let (native, ours) = (&H200.native, &MEASURED_ON);
		DataSheet {
			name,
			fp64: fp64 * ours.fp64 / native.fp64.0,
			fp32: fp32 * ours.fp32 / native.fp32.0,
			tf32: tf32 * ours.tf32 / native.tf32,
			int8: int8 / INT8_SHARE,
			bandwidth,
			arch,
			source: "measured at first use",
		}
	}

	/// the cost model of this GPU: per architecture, the measured one of the fused kernels
	/// (Hopper), or the portable path's, rescaled from it
	pub fn model(&self) -> CostModel {
		if let Arch::Sm90a = self.arch {
			return HOPPER;
		}
		let ours = &MEASURED_ON;
		let memory = ours.bandwidth / self.bandwidth;
		let int8 = self.int8 * INT8_SHARE;
		let native = |rate: f64, sheet: f64, of: f64| rate * sheet / of;
		let n = &H200.native;
		CostModel {
			split_scheme1: (H200.split_scheme1.0 * memory, H200.split_scheme1.1 * memory),
			split_scheme2: (H200.split_scheme2.0 * memory, H200.split_scheme2.1 * memory),
			rate_scheme1: [int8; 8],
			epilogue_scheme1: H200.epilogue_scheme1 * memory,
			rate_scheme2: int8,
			rate_3m: 1.0,
			product_traffic: UNFUSED_BYTES / self.bandwidth,
			crt: (H200.crt.0 * memory, H200.crt.1 * memory),
			bound: (H200.bound.0, H200.bound.1 * self.int8 / ours.int8),
			native: NativeRates {
				fp64: (native(n.fp64.0, self.fp64, ours.fp64), native(n.fp64.1, self.fp64, ours.fp64)),
				fp32: (native(n.fp32.0, self.fp32, ours.fp32), native(n.fp32.1, self.fp32, ours.fp32)),
				tf32: native(n.tf32, self.tf32, ours.tf32),
				wide: n.wide / memory,
				..H200.native
			},
			// the scheme I terms above are the unfused pipeline's: it has no other route
			unfused_scheme1: None,
			..H200
		}
	}
}

/// which cost model a context prices plans with: an index into the models known so far (the
/// table's, then those measured at first use)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct GpuModel(usize);

impl GpuModel {
	/// the model measured on the H200 (the Hopper GPUs', and the CPU backends' default: the CPU
	/// oracle prices plans as a Hopper GPU does)
	pub const MEASURED: GpuModel = GpuModel(2);

	/// the model of the GPU named `name` in the table, if any
	#[cfg_attr(not(any(feature = "cuda", test)), allow(dead_code))]
	pub fn named(name: &str) -> Option<GpuModel> {
		GPUS.iter().position(|gpu| name.contains(gpu.name)).map(GpuModel)
	}

	/// a model for a GPU measured at first use (kept for the process)
	#[cfg_attr(not(any(feature = "cuda", test)), allow(dead_code))]
	pub fn register(sheet: DataSheet) -> GpuModel {
		let mut measured = MEASURED_MODELS.write().unwrap_or_else(|e| e.into_inner());
		measured.push(&*Box::leak(Box::new((sheet, sheet.model()))));
		GpuModel(GPUS.len() + measured.len() - 1)
	}

	/// the data sheet behind this model
	pub fn sheet(self) -> DataSheet {
		self.entry().0
	}

	/// the cost model
	pub fn model(self) -> &'static CostModel {
		&self.entry().1
	}

	fn entry(self) -> &'static (DataSheet, CostModel) {
		static TABLE: OnceLock<Vec<(DataSheet, CostModel)>> = OnceLock::new();
		let table = TABLE.get_or_init(|| GPUS.iter().map(|gpu| (*gpu, gpu.model())).collect());
		match table.get(self.0) {
			Some(entry) => entry,
			None => MEASURED_MODELS.read().unwrap_or_else(|e| e.into_inner())[self.0 - GPUS.len()],
		}
	}
}

/// the models of GPUs measured at first use
static MEASURED_MODELS: RwLock<Vec<&'static (DataSheet, CostModel)>> = RwLock::new(Vec::new());

#[cfg(test)]
mod tests {
	use super::*;
	use crate::shape::Shape;
	use crate::{Scaling, Scheme};

	/// names match the longest entry first, and Hopper GPUs keep the measured model
	#[test]
	fn names_pick_their_entries() {
		assert_eq!(GpuModel::named("NVIDIA GB200").unwrap().sheet().name, "GB200");
		assert_eq!(GpuModel::named("NVIDIA B200").unwrap().sheet().name, "B200");
		assert_eq!(GpuModel::named("NVIDIA L40S").unwrap().sheet().name, "L40S");
		assert_eq!(GpuModel::named("NVIDIA L4").unwrap().sheet().name, "L4");
		assert_eq!(GpuModel::named("NVIDIA H100 80GB HBM3"), Some(GpuModel(3)));
		assert_eq!(GpuModel::named("NVIDIA H200"), Some(GpuModel::MEASURED));
		assert!(GpuModel::named("NVIDIA H100 80GB HBM3").unwrap().model() == &HOPPER);
		assert!(GpuModel::named("Tesla V100").is_none());
	}

	/// a GPU measured at first use gets a model that gives back what was measured
	#[test]
	fn a_measured_gpu_prices_what_was_measured() {
		let sheet = DataSheet::measured("test GPU", [10.0 * T, 20.0 * T, 80.0 * T, 400.0 * T, 1.0 * T], Arch::Portable);
		let model = GpuModel::register(sheet);
		let shape = Shape::new(4096, 4096, 4096);
		let dgemm = model.model().native(shape, false, 53, crate::cost::NativeArithmetic::Own);
		let expected = 2.0 * 4096f64.powi(3) / (10.0 * T);
		assert!((dgemm - model.model().native.launch - expected).abs() < 1e-9 * expected);
		let scheme = Scheme::SchemeII {
			moduli: 15,
			scaling: Scaling::Fast,
		};
		assert!(model.model().seconds(scheme, shape, false) > GpuModel::MEASURED.model().seconds(scheme, shape, false));
	}

	/// the predicted speed-ups of scheme II over the native FP64 product on every GPU of the
	/// table, `f64`, square n: predictions from data-sheet rates, not measurements (`cargo test
	/// --lib predicted_speedups -- --nocapture` prints the table of docs/PERFORMANCE.md)
	#[test]
	fn predicted_speedups() {
		println!("| GPU | path | n | DGEMM ms | `SchemeII {{ moduli: 15 }}` | `SchemeII {{ moduli: 18 }}` |");
		println!("|---|---|---|---|---|---|");
		for (index, gpu) in GPUS.iter().enumerate() {
			let model = GpuModel(index).model();
			for n in [1024, 4096, 16384] {
				let shape = Shape::new(n, n, n);
				let native = model.native(shape, false, 53, crate::cost::NativeArithmetic::Own);
				let speedup = |moduli| {
					native
						/ model.seconds(
							Scheme::SchemeII {
								moduli,
								scaling: Scaling::Fast,
							},
							shape,
							false,
						)
				};
				let path = if gpu.arch.fused() { "fused" } else { "portable" };
				println!(
					"| {} | {path} | {n} | {:.2} | {:.2}x | {:.2}x |",
					gpu.name,
					native * 1e3,
					speedup(15),
					speedup(18)
				);
				assert!(speedup(18) < speedup(15) && native > 0.0);
			}
		}
	}
}
