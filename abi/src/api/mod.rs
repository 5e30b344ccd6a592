//! The implemented MPI functions, as `oxabi_<Name>` symbols that the
//! generated `PMPI_<Name>` shims call: one folder per chapter of the MPI
//! 4.0 standard. Every function runs its body through
//! [`crate::raise::guard`].

pub mod coll;
pub mod comm;
pub mod datatype;
pub mod env;
pub mod gpu;
pub mod io;
pub mod mpix;
pub mod p2p;
pub mod rma;
pub mod tool;
pub mod topo;

/// Defines an exported MPI function in both its forms from one definition:
/// `oxabi_X` (classic counts) and `oxabi_X_c` (large counts). In the
/// parameter list and the body, `Count` is the form's count type (`c_int`,
/// `MPI_Count`), `Disp` its displacement type (`c_int`, `MPI_Aint`),
/// `Bytes` that of byte displacements and sizes in datatype calls
/// (`MPI_Aint`, `MPI_Count`) and `NAME` its MPI name (`"MPI_X"`,
/// `"MPI_X_c"`); [`wide`] turns a `Count` into an `MPI_Count`.
/// `int_only X(...)` defines the classic form alone (an MPI-1 name whose
/// large-count form has the new name); `with_x X(...)` adds the MPI-3 `_x`
/// form (`MPI_Count` counts, as `_c`).
macro_rules! large_count {
    ($(#[$attr:meta])* $name:ident ($($p:ident: $t:ty),* $(,)?) -> $ret:ty $body:block) => {
        $crate::api::large_count!(@form "", ::std::ffi::c_int, ::std::ffi::c_int,
            $crate::handles::MPI_Aint, $(#[$attr])* $name ($($p: $t),*) -> $ret $body);
        $crate::api::large_count!(@form "_c", $crate::handles::MPI_Count,
            $crate::handles::MPI_Aint, $crate::handles::MPI_Count,
            $(#[$attr])* $name ($($p: $t),*) -> $ret $body);
    };
    (with_x $(#[$attr:meta])* $name:ident ($($p:ident: $t:ty),* $(,)?) -> $ret:ty
     $body:block) => {
        $crate::api::large_count!($(#[$attr])* $name ($($p: $t),*) -> $ret $body);
        $crate::api::large_count!(@form "_x", $crate::handles::MPI_Count,
            $crate::handles::MPI_Aint, $crate::handles::MPI_Count,
            $(#[$attr])* $name ($($p: $t),*) -> $ret $body);
    };
    (int_only $(#[$attr:meta])* $name:ident ($($p:ident: $t:ty),* $(,)?) -> $ret:ty
     $body:block) => {
        $crate::api::large_count!(@form "", ::std::ffi::c_int, ::std::ffi::c_int,
            $crate::handles::MPI_Aint, $(#[$attr])* $name ($($p: $t),*) -> $ret $body);
    };
    (@form $sfx:literal, $count:ty, $disp:ty, $bytes:ty, $(#[$attr:meta])* $name:ident
     ($($p:ident: $t:ty),*) -> $ret:ty $body:block) => {
        const _: () = {
            #[allow(unused)]
            type Count = $count;
            #[allow(unused)]
            type Disp = $disp;
            #[allow(unused)]
            type Bytes = $bytes;
            #[allow(unused)]
            const NAME: &str = concat!("MPI_", stringify!($name), $sfx);
            #[doc = concat!("`MPI_", stringify!($name), $sfx, "`.")]
            ///
            $(#[$attr])*
            #[export_name = concat!("oxabi_", stringify!($name), $sfx)]
            pub unsafe extern "C" fn exported($($p: $t),*) -> $ret $body
        };
    };
}
pub(crate) use large_count;

/// A count of either form as an `MPI_Count` (see [`large_count`]).
#[inline(always)]
pub(crate) fn wide(n: impl Into<crate::handles::MPI_Count>) -> crate::handles::MPI_Count {
    n.into()
}

/// A count written back to the program in either form (see
/// [`large_count`]): an `int` reads `MPI_UNDEFINED` for a value it cannot
/// hold (as in MPICH), an `MPI_Count` holds any.
pub(crate) trait CountOut: Copy {
    /// `n` in this form, if it fits.
    fn try_from_count(n: crate::handles::MPI_Count) -> Option<Self>;

    /// `n` in this form (`MPI_UNDEFINED` if it does not fit).
    fn from_count(n: crate::handles::MPI_Count) -> Self;
}

impl CountOut for std::ffi::c_int {
    fn try_from_count(n: crate::handles::MPI_Count) -> Option<Self> {
        Self::try_from(n).ok()
    }

    fn from_count(n: crate::handles::MPI_Count) -> Self {
        Self::try_from(n).unwrap_or(crate::handles::UNDEFINED)
    }
}

impl CountOut for crate::handles::MPI_Count {
    fn try_from_count(n: crate::handles::MPI_Count) -> Option<Self> {
        Some(n)
    }

    fn from_count(n: crate::handles::MPI_Count) -> Self {
        n
    }
}
