//! the scratch buffers of a pipeline, by what they hold ([`crate::gpu::runtime::context::Gpu::scratch`]): each
//! role has its buffer, grown to the largest request and kept between products; roles that never
//! hold data at the same time share one

/// the role of a scratch buffer
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
	/// the split planes of A: scheme II's residues, scheme I's digits of the real part, the
	/// accurate scaling's coarse magnitudes
	SplitA,
	/// the split planes of B: scheme II's residues (the whole of B, or a column tile), the
	/// accurate scaling's coarse magnitudes
	SplitB,
	/// scheme I's digits of A's imaginary part (complex products, which split B into
	/// [`Slot::DigitsB`] and [`Slot::DigitsBIm`] instead of [`Slot::SplitB`])
	DigitsAIm,
	/// scheme I's digits of A's negated imaginary part
	DigitsANegIm,
	/// scheme I's digits of B's real part
	DigitsB,
	/// scheme I's digits of B's imaginary part
	DigitsBIm,
	/// scheme I's INT32 diagonals of the real part, and the fused kernel's carry between K passes
	DiagonalsRe,
	/// scheme I's INT32 diagonals of the imaginary part
	DiagonalsIm,
	/// scheme II's int8 residue planes of the product, real part
	ResiduesRe,
	/// scheme II's int8 residue planes of the product, imaginary part
	ResiduesIm,
	/// an INT32 product: the accurate scaling's coarse product, the unfused route's products
	Int32,
	/// the third product of complex scheme II in three launches
	Residues3m,
	/// the operands' row statistics
	Stats,
	/// the row statistics of separately scaled parts, weighed while the operands' own are still
	/// read (their fast shifts, their non-finite rows)
	PartStats,
	/// scheme II's fast shifts of the rows of A and of B
	FastShifts,
	/// the error bound's 7-bit windows of A and of B
	WindowA,
	WindowB,
	/// the error bound's INT32 magnitude products, real and imaginary parts
	MagnitudeRe,
	MagnitudeIm,
	/// the copies of A and B balanced along K
	BalancedA,
	BalancedB,
	/// a host product's operands and result on the device (an in-core product's, or an
	/// out-of-core product's first panel buffers and output tile); a product's on device views:
	/// its operands' compact copies, and a rank-k update's whole output
	StagedA,
	StagedB,
	StagedC,
	/// the page-locked transfer probe's device buffer
	#[cfg(feature = "bench")]
	Probe,
	/// the second buffers that an out-of-core product's panels and output tiles take turns with
	SecondC,
	SecondB,
	SecondA,
	/// the whole of a B split over several GPUs, gathered on one
	GatheredB,
	/// the benchmark's and the tests' own buffers (`n < 32`)
	#[cfg(any(feature = "bench", test))]
	Bench(usize),
}

/// the number of scratch buffers a pipeline has
pub(crate) const SLOTS: usize = 64;

impl Slot {
	/// the buffer of the role
	pub const fn index(self) -> usize {
		match self {
			Slot::SplitA => 0,
			Slot::SplitB | Slot::DigitsAIm => 1,
			Slot::DigitsANegIm => 2,
			Slot::DigitsB => 3,
			Slot::DigitsBIm => 4,
			Slot::DiagonalsRe => 5,
			Slot::DiagonalsIm => 6,
			Slot::ResiduesRe => 7,
			Slot::ResiduesIm => 8,
			Slot::Int32 => 9,
			Slot::Residues3m => 10,
			Slot::Stats => 11,
			Slot::FastShifts => 12,
			Slot::WindowA => 13,
			Slot::WindowB => 14,
			Slot::MagnitudeRe => 15,
			Slot::MagnitudeIm => 16,
			Slot::BalancedA => 17,
			Slot::BalancedB => 18,
			Slot::StagedA => 19,
			Slot::StagedB => 20,
			Slot::StagedC => 21,
			#[cfg(feature = "bench")]
			Slot::Probe => 22,
			Slot::SecondC => 23,
			Slot::SecondB => 24,
			Slot::SecondA => 25,
			Slot::GatheredB => 26,
			Slot::PartStats => 27,
			#[cfg(any(feature = "bench", test))]
			Slot::Bench(n) => 32 + n,
		}
	}
}

#[cfg(test)]
mod tests {
	use super::*;

	/// every role has a buffer below [`SLOTS`]; only scheme I's digits of A's imaginary part share
	/// theirs (with scheme II's planes of B, never split in the same product)
	#[test]
	fn roles_have_their_own_buffers() {
		let roles = [
			Slot::SplitA,
			Slot::SplitB,
			Slot::DigitsANegIm,
			Slot::DigitsB,
			Slot::DigitsBIm,
			Slot::DiagonalsRe,
			Slot::DiagonalsIm,
			Slot::ResiduesRe,
			Slot::ResiduesIm,
			Slot::Int32,
			Slot::Residues3m,
			Slot::Stats,
			Slot::PartStats,
			Slot::FastShifts,
			Slot::WindowA,
			Slot::WindowB,
			Slot::MagnitudeRe,
			Slot::MagnitudeIm,
			Slot::BalancedA,
			Slot::BalancedB,
			Slot::StagedA,
			Slot::StagedB,
			Slot::StagedC,
			Slot::SecondC,
			Slot::SecondB,
			Slot::SecondA,
			Slot::GatheredB,
			Slot::Bench(0),
			Slot::Bench(31),
		];
		let mut seen: Vec<usize> = roles.iter().map(|r| r.index()).collect();
		assert!(seen.iter().all(|&i| i < SLOTS));
		seen.sort();
		seen.dedup();
		assert_eq!(seen.len(), roles.len());
		assert_eq!(Slot::DigitsAIm.index(), Slot::SplitB.index());
	}
}
