//! The kernels the double carries: OxMPI's `kernels/cuda/reduce.cu`
//! compiled for the host by build.rs (one thread runs the whole grid-stride
//! loop), listed in `KERNELS` with their element sizes.

/// `(T* inout, const T* in, u64 n)`.
pub(crate) type InPlaceFn = unsafe extern "C" fn(*mut u8, *const u8, u64);
/// `(T* out, const T* a, const T* b, u64 n)`.
pub(crate) type OutFn = unsafe extern "C" fn(*mut u8, *const u8, *const u8, u64);

/// A kernel's host entry point.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Entry {
    /// `oxmpi_<op>_<ty>`.
    InPlace(InPlaceFn),
    /// `oxmpi_<op>3_<ty>`.
    Out(OutFn),
}

impl Entry {
    /// Number of pointer parameters before `n`.
    pub(crate) fn pointers(self) -> usize {
        match self {
            Entry::InPlace(_) => 2,
            Entry::Out(_) => 3,
        }
    }
}

/// A carried kernel.
#[derive(Debug)]
pub(crate) struct Kernel {
    /// The `.entry` name.
    pub name: &'static str,
    /// Bytes per element of its type.
    pub elem_size: usize,
    /// Host code.
    pub entry: Entry,
}

include!(concat!(env!("OUT_DIR"), "/kernel_table.rs"));

/// The carried kernel called `name`.
pub(crate) fn find(name: &str) -> Option<&'static Kernel> {
    KERNELS.iter().find(|k| k.name == name)
}

/// Runs `kernel` over `n` elements; `ptrs` are host-accessible (shadow)
/// addresses, checked by the caller to hold `n` elements each.
///
/// # Safety
/// `ptrs` has `kernel.entry.pointers()` entries, each valid for `n`
/// elements of the kernel's type.
pub(crate) unsafe fn run(kernel: &Kernel, ptrs: &[*mut u8], n: u64) {
    match kernel.entry {
        Entry::InPlace(f) => f(ptrs[0], ptrs[1], n),
        Entry::Out(f) => f(ptrs[0], ptrs[1], ptrs[2], n),
    }
}
