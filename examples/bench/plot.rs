//! The benchmark's picture (`EMUGEMM_BENCH_SVG`): accuracy in bits against effective TF/s for
//! every plan and cuBLAS baseline at one size, a panel for the phi = 1 inputs beside one for the
//! phi = 4 inputs, as SVG.
//!
//! The points share the x axis of both panels (every row is timed on the phi = 1 inputs); colour
//! tells the type, the marker where the product came from. Labels are placed greedily beside their
//! markers, away from the other labels and markers, with a leader line where they had to move.

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::error::Error;

/// the size the picture is drawn at when the run has it
pub const N: usize = 8192;

/// where a point's product came from (the marker)
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Source {
	/// an emugemm plan on its default route: the fused products, scheme I on the route the cost
	/// model predicts faster (filled circle)
	Emugemm,
	/// an emugemm plan through the unfused pipeline (hollow circle)
	Unfused,
	/// cuBLAS: native, TF32 or its own FP64 emulation (triangle)
	Cublas,
}

impl Source {
	fn name(self) -> &'static str {
		match self {
			Source::Emugemm => "emugemm",
			Source::Unfused => "emugemm unfused",
			Source::Cublas => "cuBLAS",
		}
	}
}

/// one plan or baseline row of the benchmark
#[derive(Clone, Debug)]
pub struct Point {
	/// what the label beside the marker says, e.g. `II p=15` or `F64 → II p=14`
	pub label: String,
	/// the scalar type, `f64`, `c64`, `f32`, `c32` (the colour)
	pub kind: String,
	pub source: Source,
	/// effective TF/s: 2n^3/t, complex 8n^3/t
	pub tflops: f64,
	/// scaled bits on the phi = 1 and the phi = 4 inputs; NaN (or any non-finite value) where not
	/// measured, which leaves the point out of that panel
	pub bits: [f64; 2],
}

const PHIS: [u32; 2] = [1, 4];
const SIZE: (u32, u32) = (1800, 980);
const FONT: &str = "sans-serif";
const LABEL_PX: i32 = 15;

/// the colour of a type: one per type the benchmark runs, grey for any other
fn colour(kind: &str) -> RGBColor {
	match kind {
		"f64" => RGBColor(31, 100, 180),
		"c64" => RGBColor(200, 80, 20),
		"f32" => RGBColor(30, 140, 50),
		"c32" => RGBColor(150, 60, 170),
		_ => RGBColor(100, 100, 100),
	}
}

/// the SVG of `points` (the rows at size `n` on `gpu`); the title says so where `n` is not [`N`]
pub fn svg(points: &[Point], gpu: &str, n: usize) -> Result<String, Box<dyn Error>> {
	let points: Vec<&Point> = points.iter().filter(|p| p.tflops.is_finite() && p.tflops > 0.0).collect();
	let bits = || points.iter().flat_map(|p| p.bits).filter(|b| b.is_finite());
	// one scale for both panels, so that they read side by side; the reference lines always show
	let x_max = points.iter().map(|p| p.tflops).fold(1.0, f64::max) * 1.08;
	let y_min = bits().fold(0.0, f64::min).floor() - 1.0;
	let y_max = bits().fold(56.0, f64::max).ceil() + 4.0;
	let mut out = String::new();
	{
		let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
		root.fill(&WHITE)?;
		let (head, body) = root.split_vertically(114);
		let size = if n == N {
			format!("n = {n}")
		} else {
			format!("n = {n}, the largest size run ({N} was not)")
		};
		head.draw(&Text::new(
			format!("emugemm on {gpu}: accuracy against speed, {size}"),
			(24, 12),
			(FONT, 24).into_font().style(FontStyle::Bold),
		))?;
		let notes = [
			"square products n x n x n; effective TF/s = 2n³/t (complex 8n³/t), each row timed on the phi = 1 inputs, \
			 so a precision's plan (F64 → ...) is the one chosen there;",
			"bits: scaled accuracy against a sampled exact reference; a row without measured bits is left out of that panel",
		];
		for (line, y) in notes.into_iter().zip([44, 62]) {
			head.draw(&Text::new(line, (24, y), (FONT, 14).into_font().color(&RGBColor(80, 80, 80))))?;
		}
		let measured: Vec<&Point> = points.iter().copied().filter(|p| p.bits.iter().any(|b| b.is_finite())).collect();
		legend(&head, &measured, (24, 96))?;
		for (panel, (i, phi)) in body.split_evenly((1, 2)).iter().zip(PHIS.into_iter().enumerate()) {
			let shown: Vec<&Point> = points.iter().copied().filter(|p| p.bits[i].is_finite()).collect();
			let mut chart = ChartBuilder::on(panel)
				.caption(format!("phi = {phi} inputs"), (FONT, 20))
				.margin(16)
				.x_label_area_size(54)
				.y_label_area_size(64)
				.build_cartesian_2d(0.0..x_max, y_min..y_max)?;
			chart
				.configure_mesh()
				.x_desc(format!("effective TF/s on {gpu}, n = {n}"))
				.y_desc(format!("accuracy (bits), phi = {phi}, n = {n}"))
				.axis_desc_style((FONT, 16))
				.label_style((FONT, 13))
				.light_line_style(RGBColor(238, 238, 238))
				.bold_line_style(RGBColor(215, 215, 215))
				.x_label_formatter(&|v| format!("{v:.0}"))
				.y_label_formatter(&|v| format!("{v:.0}"))
				.draw()?;
			let area = chart.plotting_area().get_pixel_range();
			let mut placer = Placer {
				taken: Vec::new(),
				bounds: (area.0.start, area.1.start, area.0.end, area.1.end),
			};
			for (reference, what) in [(53.0, "FP64: 53 bits"), (24.0, "FP32: 24 bits")] {
				let grey = RGBColor(130, 130, 130);
				let (left, y) = chart.backend_coord(&(0.0, reference));
				let right = area.0.end - 1;
				root.draw(&DashedPathElement::new([(left, y), (right, y)], 6, 4, grey.stroke_width(1)))?;
				let w = text_width(what, 12);
				root.draw(&Text::new(
					what,
					(right - 4, y - 2),
					(FONT, 12).into_font().color(&grey).pos(Pos::new(HPos::Right, VPos::Bottom)),
				))?;
				placer.taken.push((right - 4 - w, y - 16, right - 4, y - 2));
			}
			let at: Vec<(i32, i32)> = shown.iter().map(|p| chart.backend_coord(&(p.tflops, p.bits[i]))).collect();
			for (p, &(x, y)) in shown.iter().zip(&at) {
				placer.taken.push((x - 6, y - 6, x + 6, y + 6));
				marker(&root, p.source, colour(&p.kind), (x, y))?;
			}
			// the most crowded markers choose first, so that they keep the spots next to them
			let crowd = |&(x, y): &(i32, i32)| at.iter().filter(|&&(u, v)| (u - x).abs() < 90 && (v - y).abs() < 40).count();
			let mut order: Vec<usize> = (0..shown.len()).collect();
			order.sort_by_key(|&k| std::cmp::Reverse(crowd(&at[k])));
			for (p, &(x, y)) in order.into_iter().map(|k| (shown[k], &at[k])) {
				let c = colour(&p.kind);
				let (w, h) = (text_width(&p.label, LABEL_PX), LABEL_PX + 2);
				let ((lx, ly), moved) = placer.place((x, y), w, h);
				if moved {
					let (tx, ty) = (if lx > x { lx - 1 } else { lx + w + 1 }, ly + h / 2);
					root.draw(&PathElement::new(vec![(x, y), (tx, ty)], c.mix(0.5).stroke_width(1)))?;
				}
				root.draw(&Text::new(
					p.label.as_str(),
					(lx, ly),
					(FONT, LABEL_PX).into_font().color(&c).pos(Pos::new(HPos::Left, VPos::Top)),
				))?;
			}
		}
		root.present()?;
	}
	Ok(out)
}

/// [`svg`] written to `path`
pub fn write(path: &std::path::Path, points: &[Point], gpu: &str, n: usize) -> Result<(), Box<dyn Error>> {
	std::fs::write(path, svg(points, gpu, n)?)?;
	Ok(())
}

/// the marker of `source` in `colour` at the pixel `at`
fn marker(area: &DrawingArea<SVGBackend<'_>, Shift>, source: Source, colour: RGBColor, at: (i32, i32)) -> Result<(), Box<dyn Error>> {
	match source {
		Source::Emugemm => area.draw(&Circle::new(at, 5, colour.filled()))?,
		Source::Unfused => area.draw(&Circle::new(at, 5, colour.stroke_width(2)))?,
		Source::Cublas => area.draw(&TriangleMarker::new(at, 7, colour.filled()))?,
	}
	Ok(())
}

/// one entry per (type, source) among `points`, left to right from `at`
fn legend(area: &DrawingArea<SVGBackend<'_>, Shift>, points: &[&Point], at: (i32, i32)) -> Result<(), Box<dyn Error>> {
	let mut entries: Vec<(&str, Source)> = Vec::new();
	for p in points {
		if !entries.contains(&(p.kind.as_str(), p.source)) {
			entries.push((p.kind.as_str(), p.source));
		}
	}
	let (mut x, y) = at;
	for (kind, source) in entries {
		let text = format!("{kind} {}", source.name());
		marker(area, source, colour(kind), (x + 6, y))?;
		area.draw(&Text::new(
			text.as_str(),
			(x + 16, y),
			(FONT, 14).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center)),
		))?;
		x += 16 + text_width(&text, 14) + 28;
	}
	Ok(())
}

/// a generous estimate of the width in pixels of `text` in a sans-serif font of plotters' size
/// `size` (SVG leaves the real width to the viewer; plotters writes font-size = size / 1.24)
fn text_width(text: &str, size: i32) -> i32 {
	(text.chars().count() as f64 * size as f64 / 1.24 * 0.64).ceil() as i32
}

/// pixel rectangles `(x0, y0, x1, y1)`
type Rect = (i32, i32, i32, i32);

fn overlap(a: Rect, b: Rect) -> i64 {
	let w = (a.2.min(b.2) - a.0.max(b.0)).max(0) as i64;
	let h = (a.3.min(b.3) - a.1.max(b.1)).max(0) as i64;
	w * h
}

/// greedy label placement: the first free spot among those nearest the marker, else the least
/// covered one
struct Placer {
	/// labels placed, markers and reference texts
	taken: Vec<Rect>,
	/// the plotting area
	bounds: Rect,
}

impl Placer {
	/// the top-left corner of a `w x h` label for the marker at `at`, and whether it moved away from
	/// the marker (then it wants a leader line)
	fn place(&mut self, (x, y): (i32, i32), w: i32, h: i32) -> ((i32, i32), bool) {
		let mut spots: Vec<((i32, i32), bool)> = vec![
			((x + 8, y - h / 2), false),
			((x - 8 - w, y - h / 2), false),
			((x - w / 2, y - 8 - h), false),
			((x - w / 2, y + 8), false),
		];
		for step in 1..=6 {
			let dy = step * (h + 2);
			for (dx, sign) in [(x + 14, -1), (x + 14, 1), (x - 14 - w, -1), (x - 14 - w, 1)] {
				spots.push(((dx, y - h / 2 + sign * dy), true));
			}
		}
		let bounds = self.bounds;
		let cost = |r: Rect, taken: &[Rect]| {
			let outside = (r.2 - r.0) as i64 * (r.3 - r.1) as i64 - overlap(r, bounds);
			taken.iter().map(|&t| overlap(r, t)).sum::<i64>() + 8 * outside
		};
		let rect = |((lx, ly), _): ((i32, i32), bool)| (lx, ly, lx + w, ly + h);
		let best = spots
			.iter()
			.copied()
			.find(|&s| cost(rect(s), &self.taken) == 0)
			.unwrap_or_else(|| *spots.iter().min_by_key(|&&s| cost(rect(s), &self.taken)).expect("spots"));
		self.taken.push(rect(best));
		best
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	/// a synthetic n = 8192 run shaped like an H100's, rendered to `EMUGEMM_BENCH_SVG` where set
	/// (to look at it), else to a temporary file
	#[test]
	fn renders_the_synthetic_set() {
		let point = |label: &str, kind: &str, source, tflops, bits: [f64; 2]| Point {
			label: label.into(),
			kind: kind.into(),
			source,
			tflops,
			bits,
		};
		let e = Source::Emugemm;
		let u = Source::Unfused;
		let c = Source::Cublas;
		let points = vec![
			point("DGEMM", "f64", c, 52.0, [52.6, 50.1]),
			point("cuBLAS emu 4 slices", "f64", c, 150.0, [28.3, 20.5]),
			point("cuBLAS emu 6 slices", "f64", c, 110.0, [44.0, 36.2]),
			point("cuBLAS emu 7 slices", "f64", c, 95.0, [51.8, 44.0]),
			point("cuBLAS emu 8 slices", "f64", c, 82.0, [53.0, 51.5]),
			point("cuBLAS emu dynamic", "f64", c, 78.0, [53.0, f64::NAN]),
			point("II p=8", "f64", e, 230.0, [24.5, 16.0]),
			point("II p=12", "f64", e, 165.0, [38.0, 30.1]),
			point("II p=14", "f64", e, 145.0, [45.2, 37.0]),
			point("II p=15", "f64", e, 137.0, [48.7, 40.5]),
			point("II p=16", "f64", e, 129.0, [52.3, 44.1]),
			point("II p=18", "f64", e, 116.0, [53.1, 50.9]),
			point("II p=20", "f64", e, 104.0, [53.2, 52.8]),
			point("I p=2", "f64", e, 260.0, [13.5, 6.0]),
			point("I p=4", "f64", e, 120.0, [29.0, 21.0]),
			point("I p=8", "f64", e, 40.0, [53.0, 47.0]),
			point("F64 → II p=16", "f64", e, 125.0, [52.1, 51.0]),
			point("F32 → II p=8", "f64", e, 228.0, [24.4, 16.1]),
			point("II p=8 unfused", "f64", u, 150.0, [24.5, 16.0]),
			point("II p=15 unfused", "f64", u, 88.0, [48.7, 40.5]),
			point("II p=20 unfused", "f64", u, 70.0, [53.2, 52.8]),
			point("I p=2 unfused", "f64", u, 140.0, [13.5, 6.0]),
			point("I p=4 unfused", "f64", u, 60.0, [29.0, 21.0]),
			point("ZGEMM", "c64", c, 54.0, [52.9, 50.3]),
			point("II p=15", "c64", e, 142.0, [48.5, 40.0]),
			point("F64 → II p=16", "c64", e, 130.0, [52.0, 50.7]),
			point("II p=15 unfused", "c64", u, 95.0, [48.5, 40.0]),
			point("SGEMM", "f32", c, 51.0, [23.1, 20.0]),
			point("cuBLAS TF32", "f32", c, 380.0, [10.4, 7.9]),
			point("I p=2", "f32", e, 330.0, [14.1, 6.2]),
			point("I p=4", "f32", e, 170.0, [23.8, 21.5]),
			point("Tf32 → I p=2", "f32", e, 325.0, [14.0, 6.1]),
			point("F32 → I p=4", "f32", e, 168.0, [23.9, 21.4]),
			point("I p=2 unfused", "f32", u, 190.0, [14.1, 6.2]),
			point("I p=4 unfused", "f32", u, 85.0, [23.8, 21.5]),
			point("CGEMM", "c32", c, 53.0, [22.9, 20.1]),
			point("I p=3", "c32", e, 160.0, [17.9, 10.2]),
			point("I p=4", "c32", e, 128.0, [24.0, 18.0]),
			point("II p=12", "c32", e, 90.0, [27.4, 19.5]),
			point("F32 → II p=12", "c32", e, 86.0, [27.4, 20.1]),
			point("I p=4 unfused", "c32", u, 100.0, [24.0, 18.0]),
			point("not measured", "f32", e, 200.0, [f64::NAN, f64::NAN]),
		];
		let path = std::env::var_os("EMUGEMM_BENCH_SVG")
			.map(std::path::PathBuf::from)
			.unwrap_or_else(|| std::env::temp_dir().join(format!("emugemm-bench-plot-{}.svg", std::process::id())));
		write(&path, &points, "NVIDIA H100 80GB HBM3", 8192).unwrap();
		let svg = std::fs::read_to_string(&path).unwrap();
		if std::env::var_os("EMUGEMM_BENCH_SVG").is_none() {
			std::fs::remove_file(&path).unwrap();
		}
		assert!(svg.contains("<svg"));
		assert!(svg.contains("NVIDIA H100 80GB HBM3") && svg.contains("n = 8192"));
		assert!(!svg.contains("was not"), "8192 is the size the picture asks for");
		// plotters writes each text on a line of its own
		let count = |text: &str| svg.lines().filter(|l| *l == text).count();
		for p in &points {
			// a label once in each panel where its point has bits (some labels name points of two types)
			let measured = points
				.iter()
				.filter(|q| q.label == p.label)
				.flat_map(|q| q.bits)
				.filter(|b| b.is_finite())
				.count();
			assert_eq!(count(&p.label), measured, "{}", p.label);
		}
		assert_eq!(count("cuBLAS emu dynamic"), 1, "left out of the phi = 4 panel");
		assert_eq!(count("not measured"), 0, "left out of both panels");
		assert!(svg.contains("FP64: 53 bits"));
		// another size than 8192 says so
		let other = super::svg(&points[..3], "GPU", 4096).unwrap();
		assert!(other.contains("n = 4096, the largest size run (8192 was not)"));
	}
}
