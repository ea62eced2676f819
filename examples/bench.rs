//! GPU benchmark: every plan against cuBLAS in the same process (feature `bench`, Hopper GPU), cuBLAS's
//! own FP64 emulation (fixed 4, 6, 7, 8 slices and dynamic mantissa) measured like the f64 plans
//!
//! `cargo run --release --features bench --example bench` (or the bundle's `bench`); environment:
//! `EMUGEMM_BENCH_SIZES` (default `4096,8192,16384`), `EMUGEMM_BENCH_RUNS` (default 30),
//! `EMUGEMM_BENCH_CSV` (a file to write the rows to), `EMUGEMM_BENCH_SVG` (a file to draw the picture
//! described below to), `EMUGEMM_BENCH_ONLY` (`;`-separated patterns:
//! only the plans, emulation and chassis rows whose label, e.g. `f64 SchemeII { moduli: 15 }`,
//! `f64 cuBLAS FP64 emulation`, `i8 chassis bn256_s4_c2` or `f64 chassis bn128_s6_c1 SchemeII
//! p=15`, contains one; `fused scheme I kernel` selects the kernel-alone rows of the fused scheme
//! I kernel, `fused scheme I kernel p=3` one of them; `policy` selects the policy table, `policy
//! f64 F32` one of its entries; when every pattern contains `chassis`, `policy`, `bound` or `host`, only those rows
//! run, without the baselines and memory kernels). Times are medians of device-event timings after
//! one warm-up; effective TF/s = 2n^3/t (complex 8n^3/t); the kernel-alone rows give INT8 TOPS =
//! p(p+1)/2 2n^3/t in that column.
//!
//! The plan rows, per size: f64, c64, f32 and c32 plans against the type's cuBLAS GEMM (DGEMM,
//! ZGEMM, SGEMM, CGEMM), the route that ran in brackets after the plan. `emugemm` rows run on the
//! default context, scheme I on the route the cost model predicts faster; `emugemm fused` rows
//! force scheme I onto the fused kernel (`Emulator::with_priced_routes(false)`), `emugemm unfused`
//! rows onto the unfused pipeline, `emugemm portable` rows onto the portable path. Scheme I with 1
//! to 4 slices runs on all three for f64 and f32 (`f32 SchemeI { slices: 2 }` selects its three
//! rows), so that the chosen route can be checked to be the faster; c32 runs `F32`,
//! `SchemeI { slices: 3 }`, `SchemeI { slices: 4 }` (also unfused) and `SchemeII { moduli: 12 }`
//! (`c32 SchemeI { slices: 4 }`, `c32 F32`).
//!
//! The picture (`EMUGEMM_BENCH_SVG=bits.svg`, drawn by `examples/bench/plot.rs`): accuracy in bits
//! against effective TF/s of every plan row (`emugemm`, `emugemm unfused`) and every cuBLAS row
//! measured on the plans' inputs (native, TF32, its FP64 emulation) at n = 8192, the phi = 1 inputs
//! in one panel and the phi = 4 inputs in the other, coloured by type, with the GPU's name and n on
//! the axes; rows without measured bits stay out of a panel. Where 8192 is not among the sizes, the largest
//! size run is drawn and the title says so. It is rewritten after each size, so that a run cut
//! short keeps what it measured. For example
//! `EMUGEMM_BENCH_SVG=bits.svg EMUGEMM_BENCH_SIZES=8192 ./bench`; `EMUGEMM_BENCH_SVG=synthetic.svg
//! cargo test --features bench --example bench` draws a synthetic set there (no GPU needed).
//!
//! The policy table (`Bench::policy`): for `Tf32`, `F32`, `F64`, `Bits(16)`, `Bits(32)`,
//! `Bits(40)` on f32 and f64 (those the type can hold), `F64` on c64 and `F32` on c32, at phi = 1
//! and phi = 4: the plan the policy chooses (`policy phi=.. chosen`, run through the precision itself), the
//! cheapest scheme I and the cheapest scheme II plan whose predicted bits meet the target (by
//! the cost model, `Scheme::cost`), each timed on the inputs of that phi, with the model's time
//! and predicted bits in the first column and `chosen time / this time` in the `x native`
//! column; then a `fastest` row: the fastest of them, and whether it is the chosen plan. For
//! example `EMUGEMM_BENCH_ONLY=policy EMUGEMM_BENCH_SIZES=4096,8192 ./bench`.
//!
//! The bound table (`Bench::bound`, selected by `bound`, or `bound f64`, `bound c64`, `bound c32`):
//! `F64` (c32: `F32`) against the native product and the explicit scheme II plans around its choice
//! on phi = 0.5, 1, 4, 8 and on an inner-scaled input, with the error bound's time, for example
//! `EMUGEMM_BENCH_ONLY=bound EMUGEMM_BENCH_SIZES=8192 ./bench`; `bound kernels f64` (`c64`) times
//! the bound's stages alone.
//!
//! The host rows (`Bench::host`, selected by `host`, or `host f64`, `host c64`, `host f32`, `host
//! c32`): host matrices in and out, f64 and c64 at `F64`, f32 and c32 at `F32`, against faer on all
//! host cores, the same staging with cuBLAS as the product, and the transfer floor at the page-locked rates measured
//! first (`profile::transfer_rates`); the first rows give the process's cold start (context,
//! kernels, first 64 x 64 product). For example `EMUGEMM_BENCH_ONLY=host ./bench`. The routing
//! rows (`routing`, once, before the sizes): f64 `F64` host products from 64^3 to 8192^3 and two
//! skinny shapes under `Auto`'s host routing, against the GPU and faer alone.
//!
//! The queued rows (`queued`, once, before the sizes; `bench/queued.rs`): the host time of an
//! f64 `F64` 8192³ product on device views behind about 10 ms of unrelated work on its stream, and
//! two threads of 20 c64 2048³ products against one, each waited for (the default) and queued
//! (`Emulator::with_queued_views`). For example `EMUGEMM_BENCH_ONLY=queued EMUGEMM_BENCH_SIZES=
//! ./bench`.
//!
//! The rows over several GPUs (`gpus`): f64 `F64` at the sizes `EMUGEMM_BENCH_GPU_SIZES` (default
//! `8192,16384`) on GPU 0 alone and split over the GPUs `EMUGEMM_BENCH_SPLIT` (default `0,1`; `0,0`
//! splits over two pipelines of one GPU), host to host and between device matrices. For example
//! `EMUGEMM_BENCH_ONLY=gpus EMUGEMM_BENCH_GPU_SIZES=32768 EMUGEMM_BENCH_SIZES= ./bench`.
//!
//! The chassis rows (`profile::chassis`): every variant of the INT8 wgmma chassis as the plain
//! INT8 GEMM (`i8 chassis <variant>`) and as the fused real scheme II product of 15 moduli
//! (`f64 chassis <variant> SchemeII p=15`), INT8 TOPS and the ratio to cuBLASLt INT8 measured in
//! the same call; `(picked)` marks the variant the table picks for the product. For example
//! `EMUGEMM_BENCH_ONLY=chassis EMUGEMM_BENCH_SIZES=4096,8192,16384 ./bench`.

use emugemm::baseline::{self, EmulationMantissa, NativeMath};
use emugemm::testing::{ExactProduct, Sampling};
use emugemm::{Accum, Backend, DeviceMatrix, EmuMatMul, Emulator, Error, Precision, Report, Scalar, Scheme, profile};
use faer::{Mat, c32, c64};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

#[path = "bench/grid.rs"]
mod grid;
#[path = "bench/plot.rs"]
mod plot;
#[path = "bench/queued.rs"]
mod queued;
#[path = "common/timing.rs"]
mod timing;

fn env_list(name: &str, default: &str) -> Vec<usize> {
	std::env::var(name)
		.unwrap_or_else(|_| default.into())
		.split(',')
		.filter_map(|s| s.trim().parse().ok())
		.collect()
}

/// `(u - 0.5) exp(phi z)`, generated column by column in parallel (seeded per column)
fn generate<T: Scalar>(n: usize, phi: f64, seed: u64) -> Mat<T> {
	let cols: Vec<Vec<T>> = (0..n)
		.into_par_iter()
		.map(|j| {
			let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ j as u64);
			let mut draw = || (rng.random::<f64>() - 0.5) * (phi * rng.sample::<f64, _>(rand_distr::StandardNormal)).exp();
			(0..n)
				.map(|_| {
					let re = draw();
					let im = if T::IS_COMPLEX { draw() } else { 0.0 };
					T::from_parts(re, im)
				})
				.collect()
		})
		.collect();
	Mat::from_fn(n, n, |i, j| cols[j][i])
}

/// the inputs of the plans: `(A, B, the exact reference of A B)` on phi = 1, then phi = 4
type Inputs<T> = [(Mat<T>, Mat<T>, ExactProduct)];

fn median(mut v: Vec<Duration>) -> Duration {
	v.sort();
	v[v.len() / 2]
}

/// native cuBLAS times per type, the `x native` reference of the plans
struct Natives {
	f64: Duration,
	f32: Duration,
	c64: Duration,
	c32: Duration,
	/// cuBLASLt INT8, TOPS
	int8: f64,
}

struct Bench {
	/// the default context: scheme I on the route the cost model predicts faster
	emu: Emulator,
	/// the same GPU with scheme I on the fused kernel wherever it takes the product
	fused: Emulator,
	/// the same GPU with the fused products off
	unfused: Emulator,
	/// the portable path (the generic kernels' PTX, cuBLASLt INT8 products), forced on this GPU
	portable: Emulator,
	runs: usize,
	csv: Option<std::fs::File>,
	only: Vec<String>,
	/// the plan and cuBLAS rows with bits, by size, for the picture
	points: Vec<(usize, plot::Point)>,
}

impl Bench {
	/// whether `label` (e.g. `f64 SchemeII { moduli: 15 }`) contains one of the
	/// `EMUGEMM_BENCH_ONLY` patterns (`;`-separated; every row when unset)
	fn selected(&self, label: &str) -> bool {
		self.only.is_empty() || self.only.iter().any(|p| label.contains(p.as_str()))
	}

	fn row(&mut self, line: String) {
		println!("{line}");
		if let Some(f) = &mut self.csv {
			let _ = writeln!(
				f,
				"{}",
				line.trim_matches('|').split('|').map(str::trim).collect::<Vec<_>>().join(",")
			);
		}
	}

	/// median device time of `f` over `runs` runs after one warm-up; fewer runs (at least 5) when
	/// they would take more than 8 s; the first error ends it
	fn time(&self, mut f: impl FnMut() -> Result<Duration, Error>) -> Result<Duration, Error> {
		let first = f()?.as_secs_f64();
		let runs = self.runs.min(((8.0 / first) as usize).max(5));
		(0..runs).map(|_| f()).collect::<Result<Vec<_>, _>>().map(median)
	}

	/// the cuBLAS baselines on phi = 1 inputs: DGEMM, SGEMM, TF32, ZGEMM, CGEMM and cuBLASLt INT8
	/// rows; returns the native times (DGEMM, SGEMM, ZGEMM, CGEMM) the plans are compared with
	fn baselines(&mut self, n: usize) -> Natives {
		let d = generate::<f64>(n, 1.0, 1);
		let f = Mat::<f32>::from_fn(n, n, |i, j| d[(i, j)] as f32);
		let f64 = self.native(&d, "cuBLAS DGEMM", NativeMath::Exact);
		let f32 = self.native(&f, "cuBLAS SGEMM", NativeMath::Exact);
		self.native(&f, "cuBLAS TF32", NativeMath::Tf32);
		let c64 = self.native(&generate::<c64>(n, 1.0, 2), "cuBLAS ZGEMM", NativeMath::Exact);
		let c32 = self.native(&generate::<c32>(n, 1.0, 2), "cuBLAS CGEMM", NativeMath::Exact);
		let t = self.time(|| baseline::int8_matmul(&self.emu, n, n, n)).unwrap();
		let int8 = 2.0 * (n as f64).powi(3) / t.as_secs_f64() / 1e12;
		self.row(format!(
			"| baseline | i8 | cuBLASLt INT8 (TOPS) | {n} | {:.3} | {int8:.1} | | | | | | |",
			ms(t)
		));
		Natives { f64, f32, c64, c32, int8 }
	}

	/// one cuBLAS product `a a` timed and printed as a baseline row (`x native` 1.00 for the exact
	/// ones, against which the plans of that type are compared)
	fn native<T: Scalar>(&mut self, a: &Mat<T>, name: &str, math: NativeMath) -> Duration {
		let n = a.nrows();
		let (da, mut dc) = (self.emu.upload(a.as_ref()).unwrap(), self.emu.zeros_on_device::<T>(n, n).unwrap());
		let t = self.time(|| baseline::native_matmul(&self.emu, &mut dc, &da, &da, math)).unwrap();
		let ratio = if math == NativeMath::Exact { "1.00" } else { "" };
		self.row(format!(
			"| baseline | {} | {name} | {n} | {:.3} | {:.1} | {ratio} | | | | | |",
			T::NAME,
			ms(t),
			tflops::<T>(n, t)
		));
		t
	}

	/// `product(dst, lhs, rhs)`, which returns its time and what to keep of it, on `inputs`: the
	/// median time on `inputs[timed]` (0: phi = 1, 1: phi = 4) with what its last timed run kept,
	/// and the scaled bits on every input (sampled exact reference)
	fn measure<T: Scalar, R>(
		&self,
		n: usize,
		(inputs, timed): (&Inputs<T>, usize),
		mut product: impl FnMut(&mut DeviceMatrix<T>, &DeviceMatrix<T>, &DeviceMatrix<T>) -> Result<(Duration, R), Error>,
	) -> Result<(Duration, R, Vec<f64>), Error> {
		let mut bits = Vec::new();
		let mut timing = None;
		for (i, (a, b, exact)) in inputs.iter().enumerate() {
			let (da, db) = (self.emu.upload(a.as_ref())?, self.emu.upload(b.as_ref())?);
			let mut dc: DeviceMatrix<T> = self.emu.zeros_on_device(n, n)?;
			if i == timed {
				let mut kept = None;
				let t = self.time(|| {
					product(&mut dc, &da, &db).map(|(t, r)| {
						kept = Some(r);
						t
					})
				})?;
				timing = Some((t, kept.expect("timed at least once")));
			} else {
				product(&mut dc, &da, &db)?;
			}
			bits.push(exact.accuracy(dc.download()?.as_ref()).bits);
		}
		let (t, kept) = timing.expect("the timed input");
		Ok((t, kept, bits))
	}

	/// one plan: median time on phi = 1 inputs, bits on phi = 1 and 4 (sampled exact reference),
	/// through `route` (the default, or a route forced for comparison: the fused kernel, the
	/// unfused pipeline, the portable path; the forced fused and portable rows stay out of the
	/// picture)
	fn plan<T: Scalar>(&mut self, n: usize, precision: Precision, native: Duration, inputs: &Inputs<T>, route: Route) {
		if self.selected(&format!("{} {precision:?}", T::NAME)) {
			let what = match route {
				Route::Chosen => "emugemm",
				Route::Fused => "emugemm fused",
				Route::Unfused => "emugemm unfused",
				Route::Portable => "emugemm portable",
			};
			let (t, r, bits) = self.plan_row(n, precision, Some(native), (inputs, 0), (what, route));
			let scheme = short(r.plan.scheme);
			let label = match precision {
				Precision::SchemeI { .. } | Precision::SchemeII { .. } => scheme,
				_ => format!("{precision:?} → {scheme}"),
			};
			let (label, source) = match route {
				Route::Chosen => (label, plot::Source::Emugemm),
				Route::Unfused => (format!("{label} unfused"), plot::Source::Unfused),
				Route::Fused | Route::Portable => return,
			};
			let point = plot::Point {
				label,
				kind: T::NAME.into(),
				source,
				tflops: tflops::<T>(n, t),
				bits: [bits[0], bits[1]],
			};
			self.points.push((n, point));
		}
	}

	/// one plan's row, `what` in the first column: median time on `inputs[timed]`, its ratio to
	/// `reference` (`None`: itself), bits on every input; returns the time, the report of the last
	/// timed run and the bits
	fn plan_row<T: Scalar>(
		&mut self,
		n: usize,
		precision: Precision,
		reference: Option<Duration>,
		inputs: (&Inputs<T>, usize),
		(what, route): (&str, Route),
	) -> (Duration, Report, Vec<f64>) {
		let emu = match route {
			Route::Chosen => &self.emu,
			Route::Fused => &self.fused,
			Route::Unfused => &self.unfused,
			Route::Portable => &self.portable,
		};
		let (t, r, bits) = self
			.measure(n, inputs, |dc, da, db| {
				emu.matmul_device(dc, Accum::Replace, (da, db), T::from_parts(1.0, 0.0), precision)?;
				let r = emu.last_report().unwrap();
				Ok((compute_time(&r), r))
			})
			.unwrap();
		let total = compute_time(&r).as_secs_f64();
		let pct = |d: Duration| 100.0 * d.as_secs_f64() / total;
		self.row(format!(
			"| {what} | {} | {:?} -> {} ({:?}) | {n} | {:.3} | {:.1} | {:.2} | {:.1} | {:.1} | {:.0}% | {:.0}% | {:.0}% |",
			T::NAME,
			precision,
			r.plan.scheme,
			r.route,
			ms(t),
			tflops::<T>(n, t),
			reference.unwrap_or(t).as_secs_f64() / t.as_secs_f64(),
			bits[0],
			bits[1],
			pct(r.times.split),
			pct(r.times.products),
			pct(r.times.reconstruct)
		));
		(t, r, bits)
	}

	/// scheme I with 1 to 4 slices on the route the cost model picks (`emugemm`, the report's
	/// route in the plan column), then forced onto the fused kernel (`emugemm fused`) and onto
	/// the unfused pipeline (`emugemm unfused`): the chosen route should be the faster of the two
	fn scheme1_routes<T: Scalar>(&mut self, n: usize, native: Duration, inputs: &Inputs<T>) {
		for route in [Route::Chosen, Route::Fused, Route::Unfused] {
			for slices in 1..=4 {
				self.plan(n, Precision::SchemeI { slices }, native, inputs, route);
			}
		}
	}

	/// the policy table for `T`: for each of `precisions` (those `T` can hold) and phi = 1 and 4,
	/// the plan the policy chooses (timed through the precision itself, so the GPU's own choice
	/// runs) and the cheapest scheme I and scheme II plans whose predicted bits meet the target (by
	/// [`Emulator::candidates`] on the host), each timed on the inputs of that phi, with the cost
	/// model's prediction beside it; then a row naming the fastest of them. Selected by
	/// `policy <type> <precision>`, e.g. `policy f64 F32`
	fn policy<T: Scalar>(&mut self, n: usize, precisions: &[Precision]) {
		let wanted: Vec<Precision> = (precisions.iter().copied())
			.filter(|p| self.selected(&format!("policy {} {p:?}", T::NAME)))
			.collect();
		if wanted.is_empty() {
			return;
		}
		let inputs = Bench::inputs::<T>(n);
		for precision in wanted {
			for (timed, phi) in [1, 4].into_iter().enumerate() {
				let (a, b, _) = &inputs[timed];
				let Ok(plans) = self.emu.candidates(a.as_ref(), b.as_ref(), precision) else {
					break; // a target `T` cannot hold
				};
				let head = format!("policy phi={phi}");
				let Some(chosen) = plans.first() else {
					self.row(format!(
						"| {head} | {} | {precision:?} -> native: no plan predicts the target | {n} | | | | | | | | |",
						T::NAME
					));
					continue;
				};
				let cheapest = |one: bool| plans.iter().find(|p| matches!(p.scheme, Scheme::SchemeI { .. }) == one);
				let mut runs = vec![("chosen", precision, chosen)];
				for (role, plan) in [("cheapest scheme I", cheapest(true)), ("cheapest scheme II", cheapest(false))] {
					match plan.map(|p| (p, p.scheme)) {
						Some((p, Scheme::SchemeI { slices })) if p != chosen => runs.push((role, Precision::SchemeI { slices }, p)),
						Some((p, Scheme::SchemeII { moduli, .. })) if p != chosen => runs.push((role, Precision::SchemeII { moduli }, p)),
						_ => {},
					}
				}
				let mut times: Vec<(Duration, Scheme)> = Vec::new();
				for (role, run, plan) in runs {
					let model = 1e3 * plan.scheme.cost((n, n, n), T::IS_COMPLEX);
					let what = format!("{head} {role} (model {model:.3} ms, {:.1} bits)", plan.predicted_bits);
					let (t, r, _) = self.plan_row(n, run, times.first().map(|c| c.0), (&inputs, timed), (&what, Route::Chosen));
					times.push((t, r.plan.scheme));
				}
				let (chosen_t, fastest) = (times[0].0, times.iter().min_by_key(|c| c.0).expect("the chosen plan"));
				self.row(format!(
					"| {head} fastest | {} | {precision:?}: {} ({}) | {n} | {:.3} | {:.1} | {:.2} | | | | | |",
					T::NAME,
					fastest.1,
					if fastest.1 == times[0].1 {
						"the chosen plan"
					} else {
						"not the chosen plan"
					},
					ms(fastest.0),
					tflops::<T>(n, fastest.0),
					chosen_t.as_secs_f64() / fastest.0.as_secs_f64()
				));
			}
		}
	}

	/// the bound table for `T` at the target `precision` (`F64` for f64 and c64, `F32` for c32): on
	/// phi = 0.5, 1, 4, 8, on an inner-scaled input (`A D`, `D^-1 B`, D of random powers of two in
	/// 2^[-20, 20]) and, complex, on imaginary parts 2^-40 of the real ones
	/// (`Pair::SmallImaginary`), the native product and `precision` (its plan, the rows it leaves
	/// native, the bound's share of its time), then the explicit scheme II plans around its choice
	/// (around 20 moduli for f64 and c64, 12 for c32, where it went native);
	/// the last row names the fastest explicit plan that measures >= native - 1 bits and the ratio of
	/// `precision`'s time to it. Bits on a sampled exact reference. Selected by `bound <type>`
	fn bound<T: Scalar>(&mut self, n: usize, precision: Precision) {
		let head = format!("bound {}", T::NAME);
		if !self.selected(&head) {
			return;
		}
		let families: [(&str, f64, i32); 6] = [
			("phi=0.5", 0.5, 0),
			("phi=1", 1.0, 0),
			("phi=4", 4.0, 0),
			("phi=8", 8.0, 0),
			("inner 2^20", 1.0, 20),
			("im 2^-40", 1.0, -40),
		];
		for (family, phi, range) in families {
			if range < 0 && !T::IS_COMPLEX {
				continue;
			}
			let (mut a, mut b) = if range < 0 {
				emugemm::testing::pair::<T>(emugemm::testing::Pair::SmallImaginary { log2_ratio: -range }, n, n, n, 21)
			} else {
				(generate::<T>(n, phi, 21), generate::<T>(n, phi, 22))
			};
			if range > 0 {
				let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
				let d: Vec<i32> = (0..n).map(|_| rng.random_range(-range..=range)).collect();
				emugemm::testing::scale_cols(&mut a, |h| d[h]);
				emugemm::testing::scale_rows(&mut b, |h| -d[h]);
			}
			let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Sampled { entries: 1000, seed: 3 });
			let inputs = [(a, b, exact)];
			let native = self.measure(n, (&inputs, 0), |dc, da, db| {
				baseline::native_matmul(&self.emu, dc, da, db, NativeMath::Exact).map(|t| (t, ()))
			});
			let Ok((t_native, (), native_bits)) = native else {
				continue;
			};
			let native_bits = native_bits[0];
			self.row(format!(
				"| {head} {family} | {} | native | {n} | {:.3} | {:.1} | 1.00 | {native_bits:.1} | | | | |",
				T::NAME,
				ms(t_native),
				tflops::<T>(n, t_native)
			));
			let run = |s: &Self, precision: Precision| {
				s.measure(n, (&inputs, 0), |dc, da, db| {
					s.emu
						.matmul_device(dc, Accum::Replace, (da, db), T::from_parts(1.0, 0.0), precision)?;
					let r = s.emu.last_report().unwrap();
					// a native plan has no phases: its wall time
					let t = if r.plan.scheme == Scheme::Native {
						r.times.total
					} else {
						compute_time(&r)
					};
					Ok((t, r))
				})
				.unwrap()
			};
			let (t_target, r, bits) = run(self, precision);
			self.row(format!(
				"| {head} {family} | {} | {precision:?} -> {} | {n} | {:.3} | {:.1} | {:.2} | {:.1} | bound and policy {:.3} ms ({:.1}%) | {:.3} | {:.3} | {:.3} |",
				T::NAME,
				r.plan,
				ms(t_target),
				tflops::<T>(n, t_target),
				t_native.as_secs_f64() / t_target.as_secs_f64(),
				bits[0],
				ms(r.times.bound),
				100.0 * r.times.bound.as_secs_f64() / t_target.as_secs_f64(),
				ms(r.times.split),
				ms(r.times.products),
				ms(r.times.reconstruct)
			));
			let chosen = match r.plan.scheme {
				Scheme::SchemeII { moduli, .. } => moduli,
				_ if T::MANTISSA_BITS == 53 => 20,
				_ => 12,
			};
			let mut best: Option<(Duration, u32)> = None;
			for moduli in (chosen.saturating_sub(5).max(2)..=chosen).rev() {
				let (t, _, bits) = run(self, Precision::SchemeII { moduli });
				let keeps = bits[0] >= native_bits - 1.0;
				self.row(format!(
					"| {head} {family} | {} | SchemeII {{ moduli: {moduli} }}{} | {n} | {:.3} | {:.1} | {:.2} | {:.1} | | | | |",
					T::NAME,
					if keeps { "" } else { " (below native - 1)" },
					ms(t),
					tflops::<T>(n, t),
					t_native.as_secs_f64() / t.as_secs_f64(),
					bits[0]
				));
				if keeps && best.is_none_or(|(b, _)| t < b) {
					best = Some((t, moduli));
				}
			}
			if let Some((t, moduli)) = best {
				self.row(format!(
					"| {head} {family} fastest | {} | SchemeII {{ moduli: {moduli} }} keeps native - 1; {precision:?} takes {:.2}x its time | {n} | {:.3} | | | | | | | |",
					T::NAME,
					t_target.as_secs_f64() / t.as_secs_f64(),
					ms(t)
				));
			}
		}
	}

	/// a cuBLAS product (native, or cuBLAS's own FP64 emulation) on the plans' inputs, measured as
	/// the plans are (time on phi = 1, bits on phi = 1 and 4: the native bits are what the
	/// precision promises are measured against); a row saying why when this cuBLAS cannot
	fn cublas<T: Scalar>(&mut self, n: usize, math: NativeMath, native: Duration, inputs: &Inputs<T>) {
		let name = match math {
			NativeMath::Fp64Emulation(EmulationMantissa::Fixed(bits)) => {
				format!("cuBLAS FP64 emulation, {} slices ({bits} bits)", (bits + 1).div_ceil(8))
			},
			NativeMath::Fp64Emulation(EmulationMantissa::Dynamic) => "cuBLAS FP64 emulation, dynamic mantissa".into(),
			NativeMath::Exact => format!("cuBLAS native on the plans' inputs ({})", T::NAME),
			NativeMath::Tf32 => "cuBLAS TF32 on the plans' inputs".into(),
		};
		if !self.selected(&format!("{} {name}", T::NAME)) {
			return;
		}
		let measured = self.measure(n, (inputs, 0), |dc, da, db| {
			baseline::native_matmul(&self.emu, dc, da, db, math).map(|t| (t, ()))
		});
		if let Ok((t, (), bits)) = &measured {
			let label = match math {
				NativeMath::Fp64Emulation(EmulationMantissa::Fixed(bits)) => format!("cuBLAS emu {} slices", (bits + 1).div_ceil(8)),
				NativeMath::Fp64Emulation(EmulationMantissa::Dynamic) => "cuBLAS emu dynamic".into(),
				NativeMath::Exact => match T::NAME {
					"f64" => "DGEMM".into(),
					"f32" => "SGEMM".into(),
					"c64" => "ZGEMM".into(),
					"c32" => "CGEMM".into(),
					other => format!("cuBLAS {other}"),
				},
				NativeMath::Tf32 => "cuBLAS TF32".into(),
			};
			let point = plot::Point {
				label,
				kind: T::NAME.into(),
				source: plot::Source::Cublas,
				tflops: tflops::<T>(n, *t),
				bits: [bits[0], bits[1]],
			};
			self.points.push((n, point));
		}
		self.row(match measured {
			Ok((t, (), bits)) => format!(
				"| baseline | {} | {name} | {n} | {:.3} | {:.1} | {:.2} | {:.1} | {:.1} | | | |",
				T::NAME,
				ms(t),
				tflops::<T>(n, t),
				native.as_secs_f64() / t.as_secs_f64(),
				bits[0],
				bits[1]
			),
			Err(e) => format!(
				"| baseline | {} | {name} | {n} | unavailable: {} | | | | | | | |",
				T::NAME,
				e.to_string().replace(['|', ','], ";")
			),
		});
	}

	/// the picture of the points at [`plot::N`], else at the largest size that has points, to `path`
	fn picture(&self, path: &Path) {
		let sizes = || self.points.iter().map(|(n, _)| *n);
		let Some(n) = sizes().find(|&n| n == plot::N).or_else(|| sizes().max()) else {
			return;
		};
		let points: Vec<plot::Point> = (self.points.iter()).filter(|(m, _)| *m == n).map(|(_, p)| p.clone()).collect();
		let gpu = self.emu.gpu_name().unwrap_or_else(|_| "the GPU".into());
		if let Err(e) = plot::write(path, &points, &gpu, n) {
			eprintln!("emugemm bench: the picture {}: {e}", path.display());
		}
	}

	fn inputs<T: Scalar>(n: usize) -> Vec<(Mat<T>, Mat<T>, ExactProduct)> {
		[1.0, 4.0]
			.iter()
			.enumerate()
			.map(|(s, &phi)| {
				let (a, b) = (generate::<T>(n, phi, 10 + 2 * s as u64), generate::<T>(n, phi, 11 + 2 * s as u64));
				let exact = ExactProduct::compute(a.as_ref(), b.as_ref(), Sampling::Sampled { entries: 512, seed: 5 });
				(a, b, exact)
			})
			.collect()
	}

	/// whether only chassis and policy rows are selected (every `EMUGEMM_BENCH_ONLY` pattern
	/// contains `chassis` or `policy`)
	fn sections_only(&self) -> bool {
		!self.only.is_empty()
			&& self.only.iter().all(|p| {
				["chassis", "policy", "bound", "host", "routing", "grid"]
					.iter()
					.any(|s| p.contains(s))
			})
	}

	/// the chassis variants alone (plain INT8 GEMM, fused scheme II of 15 moduli) against cuBLASLt
	/// INT8, in one call: INT8 TOPS and the ratio to cuBLASLt
	fn chassis(&mut self, n: usize) {
		let rows = profile::chassis(&self.emu, n, 15, self.runs, &|label| self.selected(label)).unwrap();
		let Some(lt) = rows.first().map(|r| r.tops()) else { return };
		for r in &rows {
			let (ty, what) = r.label.split_once(' ').unwrap_or(("", &r.label));
			self.row(format!(
				"| chassis | {ty} | {what}{} (INT8 TOPS, x cuBLASLt INT8) | {n} | {:.3} | {:.1} | {:.2} | | | | | |",
				if r.picked { " (picked)" } else { "" },
				ms(r.time),
				r.tops(),
				r.tops() / lt
			));
		}
	}

	/// the memory-bound kernels alone (statistics, split, CRT), against the device's copy bandwidth
	fn memory_kernels<T: Scalar>(&mut self, n: usize, moduli: u32) {
		let a = self.emu.upload(generate::<T>(n, 1.0, 7).as_ref()).unwrap();
		let timings = profile::memory_kernels(&self.emu, &a, moduli, self.runs).unwrap();
		let copy = timings[0].bandwidth();
		for k in &timings {
			self.row(format!(
				"| kernel | {} | {} | {n} | {:.3} | {:.0} GB/s | {:.0}% of copy | | | | | |",
				T::NAME,
				k.kernel,
				ms(k.time),
				k.bandwidth(),
				100.0 * k.bandwidth() / copy
			));
		}
	}

	/// the error bound's stages alone (`profile::bound_kernels`), selected by `bound kernels <type>`
	fn bound_kernels<T: Scalar>(&mut self, n: usize) {
		if !self.selected(&format!("bound kernels {}", T::NAME)) {
			return;
		}
		let a = self.emu.upload(generate::<T>(n, 1.0, 7).as_ref()).unwrap();
		for k in profile::bound_kernels(&self.emu, &a, self.runs).unwrap() {
			self.row(format!(
				"| bound kernels | {} | {} | {n} | {:.3} | | | | | | | |",
				T::NAME,
				k.kernel,
				ms(k.time)
			));
		}
	}

	/// the fused scheme I kernel alone (random interleaved digits, split excluded) for p = 1..8:
	/// INT8 TOPS = p(p+1)/2 2n^3/t, against cuBLASLt's INT8 rate `int8` (TOPS)
	fn fused_scheme1_kernels(&mut self, n: usize, int8: f64) {
		for p in 1..=8u32 {
			if !self.selected(&format!("i8 fused scheme I kernel p={p}")) {
				continue;
			}
			let k = profile::fused_scheme1_kernel(&self.emu, n, p, self.runs).unwrap();
			let tops = (p * (p + 1) / 2) as f64 * 2.0 * (n as f64).powi(3) / k.time.as_secs_f64() / 1e12;
			self.row(format!(
				"| kernel | i8 | fused scheme I kernel p={p}: {} (INT8 TOPS) | {n} | {:.3} | {tops:.1} | {:.2} x INT8 | | | | | |",
				k.kernel,
				ms(k.time),
				tops / int8
			));
		}
	}

	/// host matrices in and out (`host <type>`): `matmul` on host matrices at `precision` (the
	/// median of the warm runs, with its upload and download phases) against faer's native product
	/// on all host cores (one run; not at n = 16384 for complex types), the same staging with
	/// cuBLAS as the product (`baseline::native_staged`), and the transfer floor: the bytes in and
	/// out over the page-locked rates measured in this process
	fn host<T: Scalar + faer::traits::Conjugate<Canonical = T>>(&mut self, n: usize, precision: Precision, rates: (f64, f64)) {
		if !self.selected(&format!("host {}", T::NAME)) {
			return;
		}
		let (a, b) = (generate::<T>(n, 1.0, 3), generate::<T>(n, 1.0, 4));
		let mut c = Mat::<T>::zeros(n, n);
		let runs = if n >= 8192 { 3 } else { 7 };
		let median = |f: &mut dyn FnMut() -> Duration| {
			f();
			median((0..runs).map(|_| f()).collect())
		};
		let mut reports = Vec::new();
		let t_emu = median(&mut || {
			let start = Instant::now();
			self.emu
				.matmul(
					c.as_mut(),
					Accum::Replace,
					(a.as_ref(), b.as_ref()),
					T::from_parts(1.0, 0.0),
					(faer::Par::rayon(0), precision),
				)
				.unwrap();
			let t = start.elapsed();
			reports.push(self.emu.last_report().unwrap());
			t
		});
		reports.sort_by_key(|r| r.times.total);
		let r = &reports[reports.len() / 2];
		// the call as a user writes it: the result allocated by the call (and dropped untimed,
		// where the user would go on with it)
		let t_fresh = median(&mut || {
			let start = Instant::now();
			let c = a.emu_mul_with(&self.emu, &b, precision).unwrap();
			let t = start.elapsed();
			drop(std::hint::black_box(c));
			t
		});
		let t_cublas = median(&mut || baseline::native_staged(&self.emu, c.as_mut(), a.as_ref(), b.as_ref(), NativeMath::Exact).unwrap());
		let t_faer = (!(T::IS_COMPLEX && n > 8192)).then(|| {
			let start = Instant::now();
			let _ = &a * &b;
			start.elapsed()
		});
		let bytes = (n * n * size_of::<T>()) as f64;
		let floor = Duration::from_secs_f64(2.0 * bytes / rates.0 + bytes / rates.1);
		let ratio = |t: Duration| t.as_secs_f64() / t_emu.as_secs_f64();
		self.row(format!(
			"| host {} | {} | {precision:?} -> {} | {n} | {:.3} | {:.1} | {} faer, {:.2}x staged cuBLAS ({:.3} ms) | {:.2}x the transfer floor ({:.3} ms) | page-locked {} MiB | upload {:.3} | split+products+reconstruct {:.3} | download {:.3} |",
			T::NAME,
			T::NAME,
			r.plan,
			ms(t_emu),
			tflops::<T>(n, t_emu),
			t_faer.map_or("-".to_string(), |t| format!("{:.2}x", ratio(t))),
			ratio(t_cublas),
			ms(t_cublas),
			t_emu.as_secs_f64() / floor.as_secs_f64(),
			ms(floor),
			(8 * self.emu.staging_buffers()) >> 20,
			ms(r.times.upload),
			ms(compute_time(r)),
			ms(r.times.download)
		));
		let fresh = |t: Duration| t.as_secs_f64() / t_fresh.as_secs_f64();
		self.row(format!(
			"| host {} fresh | {} | a.emu_mul(&b, {precision:?}), the result allocated by the call | {n} | {:.3} | {:.1} | {} faer | {:.2}x the in-place call | | | | | |",
			T::NAME,
			T::NAME,
			ms(t_fresh),
			tflops::<T>(n, t_fresh),
			t_faer.map_or("-".to_string(), |t| format!("{:.2}x", fresh(t))),
			t_fresh.as_secs_f64() / t_emu.as_secs_f64(),
		));
	}
}

/// out-of-core host products (`out of core`, f64 `F64`): each size in core where it fits and tiled
/// within `budget` bytes of device memory, in the same process, transfers included; their rates
/// (2 n^3 flops per second) and the tiled rate against the in-core rate of the largest size that
/// ran in core
fn out_of_core(sizes: &[usize], budget: usize, rows: &mut dyn FnMut(String)) {
	let emu = &Emulator::with_backend(Backend::Gpu).unwrap();
	let tiled = Emulator::with_backend(Backend::Gpu).unwrap().with_device_memory(budget);
	let mut in_core_rate = None;
	for &n in sizes {
		let (a, b) = (generate::<f64>(n, 1.0, 3), generate::<f64>(n, 1.0, 4));
		let mut c = Mat::<f64>::zeros(n, n);
		let runs = if n > 16384 { 1 } else { 3 };
		for (what, emu) in [("default", emu), ("tiled", &tiled)] {
			let mut times: Vec<(Duration, emugemm::Report)> = (0..=runs)
				.map(|_| {
					let start = Instant::now();
					match emu.matmul(
						c.as_mut(),
						Accum::Replace,
						(a.as_ref(), b.as_ref()),
						1.0,
						(faer::Par::rayon(0), Precision::F64),
					) {
						Ok(()) => Some((start.elapsed(), emu.last_report().unwrap())),
						Err(e) => {
							rows(format!("| out of core | f64 | {what}: {e} | {n} | | | | | | | | |"));
							None
						},
					}
				})
				.collect::<Option<Vec<_>>>()
				.unwrap_or_default();
			if times.len() < 2 {
				continue;
			}
			times.remove(0);
			times.sort_by_key(|(t, _)| *t);
			let (t, r) = &times[times.len() / 2];
			let rate = tflops::<f64>(n, *t);
			let vs = match (r.tiles, in_core_rate) {
				(None, _) => {
					in_core_rate = Some(rate);
					"in core".to_string()
				},
				(Some((ti, tj)), Some(base)) => format!("{ti} x {tj} tiles, {:.2}x the in-core rate", rate / base),
				(Some((ti, tj)), None) => format!("{ti} x {tj} tiles"),
			};
			rows(format!(
				"| out of core | f64 | F64 -> {}, {vs} | {n} | {:.1} | {rate:.2} | | | | upload {:.1}, bound passes {:.1} | {:.1} | download {:.1} |",
				r.plan,
				ms(*t),
				ms(r.times.upload),
				ms(r.times.bound),
				ms(compute_time(r)),
				ms(r.times.download)
			));
		}
	}
}

/// products over several GPUs (`gpus`, f64 `F64`): each size on GPU 0 alone and split over the
/// GPUs `split` (where the machine has them; `0,0` splits over two pipelines of one GPU), host to
/// host (transfers included) and between device matrices (uploaded once, split by rows over the
/// context's GPUs), in the same process; the speed-up over GPU 0 alone, each the median of three
/// warm runs
fn gpus(sizes: &[usize], split: &[usize], rows: &mut dyn FnMut(String)) {
	let split_name = format!("GPUs {split:?}");
	let sets: Vec<(&str, Emulator)> = [("GPU 0 alone", &[0][..]), (split_name.as_str(), split)]
		.into_iter()
		.filter_map(|(what, ordinals)| Emulator::on_gpus(ordinals).ok().map(|e| (what, e)))
		.collect();
	let warm = |mut run: Box<dyn FnMut() + '_>| {
		median(
			(0..4)
				.map(|_| {
					let start = Instant::now();
					run();
					start.elapsed()
				})
				.skip(1)
				.collect(),
		)
	};
	for &n in sizes {
		let (a, b) = (generate::<f64>(n, 1.0, 3), generate::<f64>(n, 1.0, 4));
		let mut c = Mat::<f64>::zeros(n, n);
		let mut base = [None; 2];
		for (what, emu) in &sets {
			let host = warm(Box::new(|| {
				emu.matmul(
					c.as_mut(),
					Accum::Replace,
					(a.as_ref(), b.as_ref()),
					1.0,
					(faer::Par::rayon(0), Precision::F64),
				)
				.unwrap();
			}));
			let host_report = emu.last_report().unwrap();
			let (da, db) = (emu.upload(a.as_ref()).unwrap(), emu.upload(b.as_ref()).unwrap());
			let mut dc = emu.zeros_on_device::<f64>(n, n).unwrap();
			let device = warm(Box::new(|| {
				emu.matmul_device(&mut dc, Accum::Replace, (&da, &db), 1.0, Precision::F64).unwrap();
			}));
			let device_report = emu.last_report().unwrap();
			let ways = [("host to host", host, host_report), ("device matrices", device, device_report)];
			for (base, (way, t, r)) in base.iter_mut().zip(ways) {
				let base = *base.get_or_insert(t);
				let tiles = r.tiles.map_or("in core".to_string(), |(ti, tj)| format!("{ti} x {tj} tiles"));
				rows(format!(
					"| gpus | f64 | F64 ({}), {way}, {what}, {tiles} | {n} | {:.1} | {:.2} | {:.2}x | | | upload {:.1}, bound passes {:.1} | {:.1} | download {:.1} |",
					r.plan,
					ms(t),
					tflops::<f64>(n, t),
					base.as_secs_f64() / t.as_secs_f64(),
					ms(r.times.upload),
					ms(r.times.bound),
					ms(compute_time(&r)),
					ms(r.times.download)
				));
			}
		}
	}
}

/// Auto's host routing (`routing`): for f64 `F64` host products of `shapes` (`(m, n, k)`), an
/// `Auto` context (routing on), the same context forced onto the GPU, and faer on the host's
/// cores, run in turn, each the median of its warm runs; the ratio of Auto's time to the faster
/// of the other two
fn routing(emu: &Emulator, shapes: &[(usize, usize, usize)], rows: &mut dyn FnMut(String)) {
	let auto = Emulator::new().unwrap().with_host_routing(true);
	let forced = Emulator::new().unwrap().with_host_routing(false);
	assert_eq!(forced.backend(), emu.backend());
	for &(m, n, k) in shapes {
		let (a, b) = (
			emugemm::testing::random_matrix::<f64>(m, k, 1.0, 5),
			emugemm::testing::random_matrix::<f64>(k, n, 1.0, 6),
		);
		let (a, b) = (a.as_ref(), b.as_ref());
		let mut c = Mat::<f64>::zeros(m, n);
		let big = m * n * k > 1 << 33;
		// Auto, the GPU and faer in turn, so that drifts of the machine touch all three alike, and
		// in a rotating order, so that none always runs after faer's product (which leaves the
		// host's cores and caches busy with its own work) (faer at the largest sizes: one timed
		// run after the warm-up, seconds each)
		let runs = if big { 3 } else { 15 };
		let mut times = [vec![], vec![], vec![]];
		for run in 0..=runs {
			for side in (0..3).map(|s| (s + run) % 3) {
				if side == 2 && big && run >= 2 {
					continue;
				}
				let start = Instant::now();
				match side {
					0 => auto
						.matmul(c.as_mut(), Accum::Replace, (a, b), 1.0, (faer::Par::rayon(0), Precision::F64))
						.unwrap(),
					1 => forced
						.matmul(c.as_mut(), Accum::Replace, (a, b), 1.0, (faer::Par::rayon(0), Precision::F64))
						.unwrap(),
					_ => drop(std::hint::black_box(a * b)),
				}
				let t = start.elapsed();
				if run > 0 {
					times[side].push(t);
				}
			}
		}
		let [t_auto, t_gpu, t_faer] = times.map(median);
		let where_auto = auto.last_report().unwrap().host_routing.map_or("GPU", |_| "host");
		let best = t_gpu.min(t_faer);
		// the last call's phases on both contexts, where they ran on the GPU: upload, bound,
		// products, download and the total the report measured
		let phases = |emu: &Emulator| {
			let t = emu.last_report().unwrap().times;
			format!(
				"{:.2}/{:.2}/{:.2}/{:.2} of {:.2}",
				ms(t.upload),
				ms(t.bound),
				ms(t.products),
				ms(t.download),
				ms(t.total)
			)
		};
		rows(format!(
			"| routing | f64 | F64 {m}x{n}x{k}: Auto on the {where_auto} {:.3} ms, GPU {:.3} ms, faer {:.3} ms | {m} | {:.3} | | {:.2}x the faster | | | upload/bound/products/download ms, Auto {}, GPU {} | | |",
			ms(t_auto),
			ms(t_gpu),
			ms(t_faer),
			ms(t_auto),
			t_auto.as_secs_f64() / best.as_secs_f64(),
			phases(&auto),
			phases(&forced)
		));
	}
}

fn ms(d: Duration) -> f64 {
	d.as_secs_f64() * 1e3
}

/// a scheme in a few characters, for the picture's labels: `I p=4`, `II p=15`
fn short(scheme: Scheme) -> String {
	match scheme {
		Scheme::Native => "native".into(),
		Scheme::SchemeI { slices } => format!("I p={slices}"),
		Scheme::SchemeII {
			moduli,
			scaling: emugemm::Scaling::Fast,
		} => format!("II p={moduli}"),
		Scheme::SchemeII {
			moduli,
			scaling: emugemm::Scaling::Accurate,
		} => format!("II p={moduli} accurate"),
	}
}

/// effective TF/s of an `n x n x n` product of `T` taking `t`: 2n^3/t (complex 8n^3/t)
fn tflops<T: Scalar>(n: usize, t: Duration) -> f64 {
	(if T::IS_COMPLEX { 8.0 } else { 2.0 }) * (n as f64).powi(3) / t.as_secs_f64() / 1e12
}

/// the crate's log on stderr, at debug level where `EMUGEMM_BENCH_LOG` is set: where the cold
/// start goes
struct Stderr;

impl log::Log for Stderr {
	fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
		metadata.target().starts_with("emugemm")
	}

	fn log(&self, record: &log::Record<'_>) {
		if self.enabled(record.metadata()) {
			eprintln!("[{}] {}", record.level(), record.args());
		}
	}

	fn flush(&self) {}
}

/// the pipeline a plan row runs through (the bench's own: `emugemm::Route` names what a report says)
#[derive(Clone, Copy, PartialEq, Eq)]
enum Route {
	/// the default: the fused sm_90a kernels, scheme I on the route the cost model predicts faster
	Chosen,
	/// the fused sm_90a kernels, scheme I too wherever the fused kernel takes the product
	Fused,
	/// the unfused pipeline (cuBLASLt INT8 products, separate reductions)
	Unfused,
	/// the portable path: the unfused pipeline with the generic kernels compiled from PTX
	Portable,
}

/// the device time of a product's work: its phases (device events), or for a product the policy
/// left native, which has no phases, the wall time of the call (the device synchronised in it)
fn compute_time(r: &Report) -> Duration {
	if r.plan.scheme == Scheme::Native {
		r.times.total
	} else {
		r.times.split + r.times.products + r.times.reconstruct
	}
}

/// the README's call, `a.emu_mul(&b, precision)` on the global context, in this process alone
/// (`bench --fresh-call TYPE N`, which the host rows run as a child process): the first call,
/// which creates the context, and the median of three more; prints them in milliseconds
fn fresh_call<T: Scalar + faer::traits::Conjugate<Canonical = T>>(n: usize, precision: Precision) {
	let (a, b) = (generate::<T>(n, 1.0, 3), generate::<T>(n, 1.0, 4));
	let mut times = (0..4).map(|_| {
		let start = Instant::now();
		let c = a.emu_mul(&b, precision);
		let t = start.elapsed();
		drop(std::hint::black_box(c));
		t
	});
	let first = times.next().expect("four calls");
	println!(
		"{:.3} {:.3} {}",
		ms(first),
		ms(median(times.collect())),
		emugemm::last_report().unwrap().plan
	);
}

/// the host row of the README's call in a fresh process (see [`fresh_call`])
fn fresh_process<T: Scalar>(n: usize, precision: Precision, rows: &mut dyn FnMut(String)) {
	let exe = std::env::current_exe().expect("the benchmark's path");
	let out = std::process::Command::new(exe)
		.args(["--fresh-call", T::NAME, &n.to_string()])
		.output()
		.expect("the benchmark runs as a child");
	let line = String::from_utf8_lossy(&out.stdout);
	let mut fields = line.split_whitespace();
	let (first, warm) = (fields.next().unwrap_or("-"), fields.next().unwrap_or("-"));
	let plan = fields.collect::<Vec<_>>().join(" ");
	rows(format!(
		"| host {} fresh process | {} | a.emu_mul(&b, {precision:?}) -> {plan} in a process of its own: the first call (the context created) {first} ms, then {warm} ms | {n} | {warm} | | | | | | | |",
		T::NAME,
		T::NAME,
	));
}

fn main() {
	let args: Vec<String> = std::env::args().collect();
	if let [_, flag, element, n] = &args[..]
		&& flag == "--fresh-call"
	{
		let n = n.parse().expect("a size");
		match element.as_str() {
			"f64" => fresh_call::<f64>(n, Precision::F64),
			"c64" => fresh_call::<c64>(n, Precision::F64),
			"f32" => fresh_call::<f32>(n, Precision::F32),
			"c32" => fresh_call::<faer::c32>(n, Precision::F32),
			other => panic!("no element type {other}"),
		}
		return;
	}
	if std::env::var_os("EMUGEMM_BENCH_LOG").is_some() {
		log::set_logger(&Stderr).expect("the only logger");
		log::set_max_level(log::LevelFilter::Debug);
	}
	// the process's first product: the context, the kernels' modules, the handles
	let start = Instant::now();
	let emu = Emulator::with_backend(Backend::Gpu).expect("the benchmark needs a Hopper GPU");
	let context = start.elapsed();
	let small = generate::<f64>(64, 1.0, 1);
	let _ = small.emu_mul_with(&emu, &small, Precision::F64).unwrap();
	let first = start.elapsed();
	log::debug!("emugemm bench: the first product: {}", emu.last_report().unwrap());
	let csv = std::env::var("EMUGEMM_BENCH_CSV")
		.ok()
		.map(|p| std::fs::File::create(p).expect("csv file"));
	println!("device: {}", emu.gpu_name().unwrap());
	let mut bench = Bench {
		emu,
		fused: Emulator::with_backend(Backend::Gpu).unwrap().with_priced_routes(false),
		unfused: Emulator::with_backend(Backend::Gpu).unwrap().with_fused_products(false),
		portable: Emulator::with_backend(Backend::Gpu).unwrap().with_portable_path(true),
		runs: env_list("EMUGEMM_BENCH_RUNS", "30")[0],
		csv,
		only: std::env::var("EMUGEMM_BENCH_ONLY")
			.map(|v| v.split(';').filter(|p| !p.is_empty()).map(String::from).collect())
			.unwrap_or_default(),
		points: Vec::new(),
	};
	let svg = std::env::var_os("EMUGEMM_BENCH_SVG").map(std::path::PathBuf::from);
	println!("| what | type | plan | n | median ms | TF/s | x native | bits phi=1 | bits phi=4 | split | products | reconstruct |");
	println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
	bench.row(format!(
		"| cold start | f64 | Emulator::with_backend(Gpu) {:.1} ms, then the first 64x64 product: {:.1} ms in all | 64 | {:.3} | | | | | | | |",
		ms(context),
		ms(first),
		ms(first)
	));
	if bench.selected("routing") {
		let shapes: Vec<(usize, usize, usize)> = [64, 128, 256, 512, 1024, 2048, 4096, 8192]
			.into_iter()
			.map(|n| (n, n, n))
			.chain([(64, 64, 65536), (8192, 8192, 64)])
			.collect();
		let emu = Emulator::with_backend(Backend::Gpu).unwrap();
		routing(&emu, &shapes, &mut |row| bench.row(row));
	}
	// `grid` or `grid <type>`: the patterns name its rows by type
	if bench.only.is_empty() || bench.only.iter().any(|p| p.contains("grid")) {
		let only = bench.only.clone();
		let selected = |label: &str| only.is_empty() || only.iter().any(|p| label.contains(p.as_str()) || p == "grid");
		grid::grid(&selected, &mut |row| bench.row(row));
	}
	if bench.selected("queued") {
		queued::queued(&mut |row| bench.row(row));
	}
	let rates = profile::transfer_rates(&bench.emu).unwrap();
	bench.row(format!(
		"| transfer rates | u8 | page-locked: {:.1} GB/s host to device, {:.1} GB/s device to host | | | | | | | | | |",
		rates.0 / 1e9,
		rates.1 / 1e9
	));
	if bench.selected("gpus") {
		let split = env_list("EMUGEMM_BENCH_SPLIT", "0,1");
		gpus(&env_list("EMUGEMM_BENCH_GPU_SIZES", "8192,16384"), &split, &mut |row| {
			bench.row(row)
		});
	}
	if bench.selected("out of core") {
		let sizes = env_list("EMUGEMM_BENCH_OUT_OF_CORE", "16384,32768");
		let budget = env_list("EMUGEMM_BENCH_TILE_MEMORY_GB", "24")[0] << 30;
		out_of_core(&sizes, budget, &mut |row| bench.row(row));
	}
	for n in env_list("EMUGEMM_BENCH_SIZES", "4096,8192,16384") {
		bench.host::<f64>(n, Precision::F64, rates);
		bench.host::<c64>(n, Precision::F64, rates);
		bench.host::<f32>(n, Precision::F32, rates);
		bench.host::<c32>(n, Precision::F32, rates);
		if bench.selected("host fresh process") {
			fresh_process::<f64>(n, Precision::F64, &mut |row| bench.row(row));
			fresh_process::<c64>(n, Precision::F64, &mut |row| bench.row(row));
			fresh_process::<f32>(n, Precision::F32, &mut |row| bench.row(row));
			fresh_process::<c32>(n, Precision::F32, &mut |row| bench.row(row));
		}
		bench.chassis(n);
		let policy = [
			Precision::Tf32,
			Precision::F32,
			Precision::F64,
			Precision::Bits(16),
			Precision::Bits(32),
			Precision::Bits(40),
		];
		bench.policy::<f32>(n, &policy);
		bench.policy::<f64>(n, &policy);
		bench.policy::<c64>(n, &[Precision::F64]);
		bench.policy::<c32>(n, &[Precision::F32]);
		bench.bound::<f64>(n, Precision::F64);
		bench.bound::<c64>(n, Precision::F64);
		bench.bound::<c32>(n, Precision::F32);
		bench.bound_kernels::<f64>(n);
		bench.bound_kernels::<c64>(n);
		if bench.sections_only() {
			continue;
		}
		let natives = bench.baselines(n);
		bench.fused_scheme1_kernels(n, natives.int8);
		bench.memory_kernels::<f64>(n, 15);
		bench.memory_kernels::<c64>(n, 15);
		let f = Bench::inputs::<f64>(n);
		bench.cublas(n, NativeMath::Exact, natives.f64, &f);
		for mantissa in [4, 6, 7, 8]
			.map(|slices| EmulationMantissa::Fixed(8 * slices - 1))
			.into_iter()
			.chain([EmulationMantissa::Dynamic])
		{
			bench.cublas(n, NativeMath::Fp64Emulation(mantissa), natives.f64, &f);
		}
		// the largest size keeps to the plans the targets name (time)
		let moduli: &[u32] = if n >= 16384 { &[15, 16] } else { &[8, 12, 14, 15, 16, 18, 20] };
		let mut plans: Vec<Precision> = moduli.iter().map(|&moduli| Precision::SchemeII { moduli }).collect();
		plans.extend([Precision::SchemeI { slices: 8 }, Precision::F64, Precision::F32]);
		for precision in plans {
			bench.plan(n, precision, natives.f64, &f, Route::Chosen);
		}
		let unfused: &[u32] = if n >= 16384 { &[15] } else { &[8, 15, 20] };
		for &moduli in unfused {
			bench.plan(n, Precision::SchemeII { moduli }, natives.f64, &f, Route::Unfused);
		}
		bench.scheme1_routes(n, natives.f64, &f);
		// the portable path, as non-Hopper GPUs run it, against the fused rows above
		for precision in [Precision::SchemeII { moduli: 15 }, Precision::SchemeI { slices: 4 }, Precision::F64] {
			bench.plan(n, precision, natives.f64, &f, Route::Portable);
		}
		drop(f);
		let z = Bench::inputs::<c64>(n);
		bench.cublas(n, NativeMath::Exact, natives.c64, &z);
		for precision in [Precision::SchemeII { moduli: 15 }, Precision::F64] {
			bench.plan(n, precision, natives.c64, &z, Route::Chosen);
		}
		bench.plan(n, Precision::SchemeII { moduli: 15 }, natives.c64, &z, Route::Unfused);
		bench.plan(n, Precision::SchemeII { moduli: 15 }, natives.c64, &z, Route::Portable);
		drop(z);
		let s = Bench::inputs::<f32>(n);
		bench.cublas(n, NativeMath::Exact, natives.f32, &s);
		bench.cublas(n, NativeMath::Tf32, natives.f32, &s);
		for precision in [Precision::Tf32, Precision::F32] {
			bench.plan(n, precision, natives.f32, &s, Route::Chosen);
		}
		bench.scheme1_routes(n, natives.f32, &s);
		bench.plan(n, Precision::SchemeI { slices: 4 }, natives.f32, &s, Route::Portable);
		drop(s);
		// c32: F32, scheme I with 3 and 4 slices (4M; 4 slices is the published CGEMM point, 2.4x
		// native), and the scheme II plan F32 takes at phi = 1 (12 moduli, as for f32)
		let cs = Bench::inputs::<c32>(n);
		bench.cublas(n, NativeMath::Exact, natives.c32, &cs);
		for precision in [
			Precision::F32,
			Precision::SchemeI { slices: 3 },
			Precision::SchemeI { slices: 4 },
			Precision::SchemeII { moduli: 12 },
		] {
			bench.plan(n, precision, natives.c32, &cs, Route::Chosen);
		}
		bench.plan(n, Precision::SchemeI { slices: 4 }, natives.c32, &cs, Route::Unfused);
		if let Some(path) = &svg {
			bench.picture(path);
		}
	}
}
