//! the libcublas each caller belongs to. A process may hold several (PyTorch built for one CUDA
//! major version beside CuPy for another, each in a local scope where `RTLD_NEXT` does not see
//! it; the library's own, loaded by cudarc): a call is forwarded to the libcublas that its caller
//! was linked with, the one that made its handle. With one libcublas loaded, of any version, that
//! one; with several, the one among the dependencies of the object that called (found from the
//! call's return address); where that cannot be told, the first loaded, and the
//! call is not emulated

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_int, c_void};
use std::sync::Mutex;

/// a loaded libcublas: a handle that keeps it loaded, and its base address
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Library {
	handle: usize,
	base: usize,
}

/// the libcublas a call is forwarded to, and whether it is surely its caller's
#[derive(Clone, Copy, Debug)]
pub(crate) struct Choice {
	/// `None`: no libcublas is loaded
	pub library: Option<Library>,
	/// false where several are loaded and the caller's could not be told
	pub certain: bool,
}

/// what the lookups found, valid while the process loads and unloads nothing
#[derive(Default)]
struct State {
	/// the dynamic linker's counts of loads and unloads when this was found
	generation: (u64, u64),
	libraries: Vec<Library>,
	/// the loaded objects' address ranges
	objects: Objects,
	/// the library of each calling object, by the object's base address
	callers: HashMap<usize, Option<Library>>,
	/// each symbol's address in each library, by (library base, name)
	symbols: HashMap<(usize, &'static CStr), Option<usize>>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// whether `path`'s file is a libcublas: `libcublas.so` or `libcublas.so.` and a version (not
/// cuBLASLt, which cuBLAS itself loads)
pub(crate) fn is_cublas(path: &str) -> bool {
	let file = path.rsplit('/').next().unwrap_or(path);
	file == "libcublas.so"
		|| file
			.strip_prefix("libcublas.so.")
			.is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// the loaded objects, found from an address in them without the dynamic linker's `dladdr`, which
/// searches the object's whole symbol table (a library of PyTorch's holds hundreds of thousands
/// of symbols: hundreds of microseconds for a backtrace's frames)
#[derive(Default)]
struct Objects {
	/// each loadable segment as (first address, end, the object's base address), by first address
	ranges: Vec<(usize, usize, usize)>,
	/// each object's base address and path (empty for the main program), in the order loaded
	paths: Vec<(usize, CString)>,
}

impl Objects {
	/// the base address of the object holding `address`
	fn of(&self, address: usize) -> Option<usize> {
		let at = self.ranges.partition_point(|r| r.0 <= address).checked_sub(1)?;
		let (_, end, base) = self.ranges[at];
		(address < end).then_some(base)
	}

	/// the path of the object at `base`
	fn path(&self, base: usize) -> Option<&CStr> {
		self.paths.iter().find(|o| o.0 == base).map(|o| o.1.as_c_str())
	}
}

/// the objects loaded now and the counts of loads and unloads
fn objects() -> ((u64, u64), Objects) {
	unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
		// SAFETY: the dynamic linker's record of one object, and our own collector
		let (info, found) = unsafe { (&*info, &mut *data.cast::<((u64, u64), Objects)>()) };
		found.0 = (info.dlpi_adds, info.dlpi_subs);
		let base = info.dlpi_addr as usize;
		let path = match info.dlpi_name.is_null() {
			true => CString::default(),
			// SAFETY: a NUL-terminated name
			false => unsafe { CStr::from_ptr(info.dlpi_name) }.to_owned(),
		};
		found.1.paths.push((base, path));
		// SAFETY: the object's `dlpi_phnum` program headers
		let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
		for h in headers.iter().filter(|h| h.p_type == libc::PT_LOAD) {
			let start = base + h.p_vaddr as usize;
			found.1.ranges.push((start, start + h.p_memsz as usize, base));
		}
		0
	}
	let mut found = ((0, 0), Objects::default());
	// SAFETY: the callback only reads the records it is given
	unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut found).cast()) };
	found.1.ranges.sort_unstable();
	found
}

/// the counts of loads and unloads now (one record read)
fn generation() -> (u64, u64) {
	unsafe extern "C" fn first(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> c_int {
		// SAFETY: as in `objects`
		unsafe { *data.cast::<(u64, u64)>() = ((*info).dlpi_adds, (*info).dlpi_subs) };
		1
	}
	let mut counts = (0, 0);
	// SAFETY: as in `objects`
	unsafe { libc::dl_iterate_phdr(Some(first), (&raw mut counts).cast()) };
	counts
}

impl State {
	/// the state of the process now, kept where nothing was loaded or unloaded since (a library
	/// found before keeps its handle)
	fn refresh(&mut self) {
		let now = generation();
		if now == self.generation && now != (0, 0) {
			return;
		}
		let (generation, objects) = objects();
		let known = std::mem::take(&mut self.libraries);
		let libraries = objects
			.paths
			.iter()
			.filter(|(_, path)| is_cublas(&path.to_string_lossy()))
			.filter_map(|&(base, ref path)| {
				if let Some(library) = known.iter().find(|l| l.base == base) {
					return Some(*library);
				}
				// SAFETY: a NUL-terminated path of a loaded object; the handle keeps it loaded
				let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
				(!handle.is_null()).then_some(Library {
					handle: handle as usize,
					base,
				})
			})
			.collect();
		*self = State {
			generation,
			libraries,
			objects,
			..State::default()
		};
	}
}

/// the one of `libraries` among the dependencies of the object at `path`
fn library_of((libraries, objects): (&[Library], &Objects), path: &CStr) -> Option<Library> {
	// the main program's path is empty: dlopen's null name opens it
	let name = if path.is_empty() { std::ptr::null() } else { path.as_ptr() };
	// SAFETY: the path of a loaded object, from the dynamic linker, or null
	let handle = unsafe { libc::dlopen(name, libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
	if handle.is_null() {
		return None;
	}
	// a symbol every libcublas defines and this library does not, looked up as the object's own
	// references were bound: in the object and its dependencies
	// SAFETY: a live handle and a NUL-terminated name
	let create = unsafe { libc::dlsym(handle, c"cublasCreate_v2".as_ptr()) };
	// SAFETY: the handle opened above
	unsafe { libc::dlclose(handle) };
	let base = objects.of(create as usize)?;
	libraries.iter().copied().find(|l| l.base == base)
}

/// the object that called into this library, of `objects`: the first return address on the stack
/// outside it
fn caller(objects: &Objects) -> Option<usize> {
	let own = objects.of(caller as *const () as usize)?;
	// the interposer's own frames are fewer than this; each frame unwound costs about 0.1 µs
	let mut frames = [std::ptr::null_mut(); 16];
	// SAFETY: a writable array of as many entries as it is given
	let depth = unsafe { libc::backtrace(frames.as_mut_ptr(), frames.len() as c_int) };
	let unwinder = objects.of(libc::backtrace as *const () as usize);
	frames[..usize::try_from(depth).unwrap_or(0)]
		.iter()
		.filter_map(|&frame| objects.of(frame as usize))
		.find(|&base| base != own && Some(base) != unwinder)
}

/// the libcublas the calling code's call goes to (see the module's docs)
pub(crate) fn choose() -> Choice {
	let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
	let state = state.get_or_insert_with(State::default);
	state.refresh();
	match state.libraries.as_slice() {
		[] => Choice {
			library: None,
			certain: true,
		},
		[only] => Choice {
			library: Some(*only),
			certain: true,
		},
		[first, ..] => {
			let first = *first;
			let found = caller(&state.objects).and_then(|base| {
				let known = (&state.libraries[..], &state.objects);
				*state.callers.entry(base).or_insert_with(|| library_of(known, known.1.path(base)?))
			});
			Choice {
				library: found.or(Some(first)),
				certain: found.is_some(),
			}
		},
	}
}

/// the address of `name` in `library`, looked up once
pub(crate) fn symbol(library: Library, name: &'static CStr) -> Option<usize> {
	let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
	let state = state.get_or_insert_with(State::default);
	*state.symbols.entry((library.base, name)).or_insert_with(|| {
		// SAFETY: a handle that keeps the library loaded, and a NUL-terminated name
		let p = unsafe { libc::dlsym(library.handle as *mut c_void, name.as_ptr()) };
		(!p.is_null()).then_some(p as usize)
	})
}

#[cfg(test)]
mod tests {
	use super::*;

	#[test]
	fn only_libcublas_files_are_cublas() {
		for yes in [
			"libcublas.so",
			"libcublas.so.12",
			"/usr/local/cuda/lib64/libcublas.so.13.1.0.3",
			"x/libcublas.so.11",
		] {
			assert!(is_cublas(yes), "{yes}");
		}
		for no in [
			"libcublasLt.so.13",
			"libcublas.so.",
			"libcublas.so.13x",
			"libcublas_static.a",
			"libemugemm_cublas.so",
		] {
			assert!(!is_cublas(no), "{no}");
		}
	}
}
