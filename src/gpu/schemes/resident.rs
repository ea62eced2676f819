//! what a device matrix keeps between products: its statistics and the planes of its last split

use crate::gpu::kernels::stats::{OperandStats, StatsRegion, download_stats, launch_stats};
use crate::gpu::product::job::DeviceOperand;
use crate::gpu::runtime::context::Gpu;
use crate::gpu::runtime::errors::driver;
use crate::gpu::runtime::launch::{alloc, ptr};
use crate::gpu::runtime::ptr::DevPtr;
use crate::gpu::runtime::slot::Slot;
use crate::{Error, Scalar, Scheme};
use cudarc::driver::CudaSlice;

/// the layout of split planes: one plane after the other, or interleaved along K for the fused
/// scheme I kernel (see cuda/split.cu)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
	Planar,
	Interleaved,
}

/// what identifies a kept split: the scheme and the layout of its planes
pub(crate) type SplitKey = (Scheme, Layout);

/// what a device matrix keeps between products, for one side (rows of `A` or columns of `B`):
/// its statistics (on the host, and on the device in a buffer of its own) and the planes of its
/// last split (see `DeviceMatrix::reuse_splits`)
#[derive(Default)]
pub(crate) struct Resident {
	pub(crate) stats: Option<(OperandStats, CudaSlice<u8>)>,
	pub(crate) split: Option<(SplitKey, Vec<CudaSlice<u8>>)>,
}

/// the split planes of one operand for `scheme` in `layout`, `parts` buffers of `bytes` each:
/// reused from `keep` when it holds those of `scheme` and `layout`; otherwise written by
/// `split(part, dst)` into owned buffers kept in `keep`, or into the scratch buffers `slots` (one per part) when
/// nothing is kept
pub(crate) fn planes(
	gpu: &Gpu,
	keep: Option<&mut Resident>,
	scheme: SplitKey,
	(bytes, slots): (usize, &[Slot]),
	split: impl Fn(usize, DevPtr<i8>) -> Result<DevPtr<i8>, Error>,
) -> Result<Vec<DevPtr<i8>>, Error> {
	let Some(keep) = keep else {
		return slots
			.iter()
			.enumerate()
			.map(|(part, &slot)| split(part, gpu.scratch(slot, bytes)?.cast()))
			.collect();
	};
	if !matches!(&keep.split, Some((kept, _)) if *kept == scheme) {
		keep.split = None;
		let buffers = slots.iter().map(|_| alloc::<u8>(gpu, bytes)).collect::<Result<Vec<_>, _>>()?;
		for (part, b) in buffers.iter().enumerate() {
			split(part, ptr(gpu, b).cast())?;
		}
		keep.split = Some((scheme, buffers));
	}
	Ok(keep
		.split
		.as_ref()
		.expect("kept above")
		.1
		.iter()
		.map(|b| ptr(gpu, b).cast())
		.collect())
}

/// the statistics of both operands: reused from `keep` where it holds them, the others computed
/// in one launch and downloaded in one copy (and kept, in a device buffer of their own, where
/// `keep` asks)
pub(crate) fn operand_stats<T: Scalar>(
	gpu: &Gpu,
	ops: (&DeviceOperand<T>, &DeviceOperand<T>),
	keep: (Option<&mut Resident>, Option<&mut Resident>),
) -> Result<(OperandStats, OperandStats), Error> {
	let mut sides = [(ops.0, keep.0), (ops.1, keep.1)];
	let has_kept = |keep: &Option<&mut Resident>| keep.as_ref().is_some_and(|k| k.stats.is_some());
	let fresh: Vec<&DeviceOperand<T>> = sides.iter().filter(|(_, k)| !has_kept(k)).map(|(op, _)| *op).collect();
	let launched = launch_stats::<T>(gpu, &fresh)?;
	let mut computed = download_stats(gpu, &launched)?.into_iter();
	let mut side = |(_, keep): &mut (&DeviceOperand<T>, Option<&mut Resident>)| -> Result<OperandStats, Error> {
		if let Some(Resident { stats: Some((s, _)), .. }) = keep {
			return Ok(s.clone());
		}
		let mut s = computed.next().expect("one computed per operand without kept statistics");
		if let Some(keep) = keep {
			let bytes = StatsRegion::bytes(s.device.rows);
			let own = alloc::<u8>(gpu, bytes)?;
			// SAFETY: both buffers hold `bytes`; the stream orders the copy after the kernel
			unsafe {
				cudarc::driver::result::memcpy_dtod_async(ptr(gpu, &own).addr(), s.device.base.addr(), bytes, gpu.stream.cu_stream())
			}
			.map_err(driver)?;
			s.device.base = ptr(gpu, &own);
			keep.stats = Some((s.clone(), own));
		}
		Ok(s)
	};
	let [a, b] = &mut sides;
	Ok((side(a)?, side(b)?))
}

/// the statistics of a Gram product's operands `A` and `Aᴴ`: `A`'s, computed in one launch and
/// downloaded, serve both (the rows of `Aᴴ` as a right operand are those of `A`, conjugated for
/// complex ones, with the same magnitudes, exponents and non-finite entries), one region on the
/// device for both
pub(crate) fn gram_stats<T: Scalar>(gpu: &Gpu, a: &DeviceOperand<T>) -> Result<(OperandStats, OperandStats), Error> {
	let stats = download_stats(gpu, &launch_stats::<T>(gpu, &[a])?)?;
	let [s] = <[OperandStats; 1]>::try_from(stats).map_err(|_| Error::gpu("one operand's statistics"))?;
	Ok((s.clone(), s))
}
