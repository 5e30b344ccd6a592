//! The boundary: every exported entry point runs its body under
//! `catch_unwind` (a panic becomes `CUDA_ERROR_UNKNOWN`, never an unwind
//! into C), and small helpers for C out-parameters.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::abi::{code, CUresult};

/// Runs an entry point's body; `Ok` is `CUDA_SUCCESS`.
pub(crate) fn run(body: impl FnOnce() -> Result<(), CUresult>) -> CUresult {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => code::SUCCESS,
        Ok(Err(err)) => err,
        Err(_) => code::UNKNOWN,
    }
}

/// Writes `value` through a C out-parameter; a null one is `INVALID_VALUE`.
///
/// # Safety
/// `out` must be null or valid for an unaligned write of `T`.
pub(crate) unsafe fn put<T>(out: *mut T, value: T) -> Result<(), CUresult> {
    if out.is_null() {
        return Err(code::INVALID_VALUE);
    }
    out.write_unaligned(value);
    Ok(())
}

/// Defines exported driver entry points. Each `fn` body returns
/// `Result<(), CUresult>`; `[aliases]` after the name export the same
/// function under more names (the driver's unversioned names). Also defines
/// `exports()`, the module's `(name, address)` list for `cuGetProcAddress`.
macro_rules! driver_api {
    ($(
        $(#[doc = $doc:expr])+
        fn $name:ident $([$($alias:ident),+])? ($($arg:ident: $ty:ty),* $(,)?) $body:block
    )*) => {
        $(
            $(#[doc = $doc])+
            #[doc = ""]
            #[doc = "# Safety"]
            #[doc = "Pointer arguments must be valid as the CUDA driver API requires."]
            #[no_mangle]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> $crate::abi::CUresult {
                $crate::guard::run(|| $body)
            }
            $crate::guard::aliases! { $name ($($arg: $ty),*) [$($($alias)+)?] }
        )*

        /// This module's entry points and aliases, for `cuGetProcAddress`.
        pub(crate) fn exports() -> Vec<(&'static str, usize)> {
            vec![$(
                (stringify!($name), $name as *const () as usize),
                $($((stringify!($alias), $alias as *const () as usize),)+)?
            )*]
        }
    };
}

/// Defines each alias of `target` as a forwarding entry point.
macro_rules! aliases {
    ($target:ident $params:tt [$($alias:ident)*]) => {
        $( $crate::guard::aliases!(@one $target $alias $params); )*
    };
    (@one $target:ident $alias:ident ($($arg:ident: $ty:ty),*)) => {
        #[doc = concat!("Same as [`", stringify!($target), "`] (the unversioned name).")]
        #[doc = ""]
        #[doc = "# Safety"]
        #[doc = concat!("As for [`", stringify!($target), "`].")]
        #[no_mangle]
        pub unsafe extern "C" fn $alias($($arg: $ty),*) -> $crate::abi::CUresult {
            $target($($arg),*)
        }
    };
}

pub(crate) use aliases;
pub(crate) use driver_api;
