//! Memory and windows: `MPI_Alloc_mem`, `MPI_Free_mem`, the four window
//! constructors, `MPI_Win_free`, `MPI_Win_shared_query`, and
//! `MPI_Win_attach` / `_detach` of dynamic windows.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};

use oxmpi::rma::Win;
use oxmpi::Comm;

use crate::api::CountOut;
use crate::api::{large_count, wide};
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, Errhandler, MPI_Aint, MPI_Comm, MPI_Info, MPI_Win, WIN_NULL};
use crate::objects::info::InfoEntry;
use crate::raise::guard;
use crate::state::{self, WinAttrs, WinEntry};

/// `MPI_WIN_UNIFIED`.
const WIN_UNIFIED: c_int = 2;

fn info_arg(info: MPI_Info) -> Result<InfoEntry, AbiError> {
    if info == handles::INFO_NULL {
        return Ok(InfoEntry::default());
    }
    crate::api::env::info::read(info)
}

/// A size argument: non-negative.
fn size_arg(size: MPI_Aint) -> Result<usize, AbiError> {
    usize::try_from(size).map_err(|_| {
        AbiError::new(
            Class::SIZE,
            format!("invalid `size` {size}: sizes cannot be negative"),
        )
    })
}

fn disp_unit_arg(disp_unit: i64) -> Result<usize, AbiError> {
    usize::try_from(disp_unit)
        .ok()
        .filter(|&d| d > 0)
        .ok_or_else(|| {
            AbiError::new(
                Class::DISP,
                format!("invalid `disp_unit` {disp_unit}: must be positive"),
            )
        })
}

/// `MPI_Alloc_mem`: memory in a region peers on this host can map (so a
/// window over it is reached with loads and stores).
///
/// # Safety
/// `baseptr` is a writable `void *`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Alloc_mem(
    size: MPI_Aint,
    info: MPI_Info,
    baseptr: *mut c_void,
) -> c_int {
    guard("MPI_Alloc_mem", ErrObj::None, || {
        let out = out_ptr(baseptr.cast::<*mut c_void>(), "baseptr")?;
        let size = usize::try_from(size).map_err(|_| {
            AbiError::new(
                Class::ARG,
                format!("invalid `size` {size}: sizes cannot be negative"),
            )
        })?;
        info_arg(info)?;
        state::lock().check_active()?;
        let p = oxmpi::rma::alloc_mem(size)?;
        // SAFETY: checked non-null; the caller's contract.
        unsafe { *out = p.cast() };
        Ok(())
    })
}

/// `MPI_Free_mem`: frees memory of `MPI_Alloc_mem` (anything else is
/// `MPI_ERR_BASE`).
#[no_mangle]
pub extern "C" fn oxabi_Free_mem(base: *mut c_void) -> c_int {
    guard("MPI_Free_mem", ErrObj::None, || {
        if base.is_null() {
            return Ok(());
        }
        Ok(oxmpi::rma::free_mem(base.cast())?)
    })
}

/// Registers `w` and writes its handle to `out`.
///
/// # Safety
/// `out` is writable (checked non-null).
unsafe fn store(w: Win, info: InfoEntry, out: *mut MPI_Win) {
    let (base, size, disp_unit) = w.local();
    let attrs = Box::new(WinAttrs {
        base,
        size: size as MPI_Aint,
        disp_unit: disp_unit as c_int,
        flavor: w.flavor() as c_int,
        model: WIN_UNIFIED,
    });
    let slot = state::lock().wins.insert(WinEntry {
        win: w,
        errhandler: Errhandler::Fatal,
        name: String::new(),
        info: info.pairs,
        attrs,
        user_attrs: BTreeMap::new(),
    });
    // SAFETY: the caller's contract.
    unsafe { *out = handles::win_handle(slot) };
}

fn comm_arg(comm: MPI_Comm) -> Result<Comm, AbiError> {
    state::comm(comm)
}

large_count! {
    /// `MPI_Win_create`: a window over the program's memory.
    ///
    /// # Safety
    /// `base` holds `size` bytes until the window is freed; `win` is writable.
    Win_create(
        base: *mut c_void,
        size: MPI_Aint,
        disp_unit: Disp,
        info: MPI_Info,
        comm: MPI_Comm,
        win: *mut MPI_Win,
    ) -> c_int {
        guard(NAME, ErrObj::Comm(comm), || {
            let out = out_ptr(win, "win")?;
            let (size, disp_unit) = (size_arg(size)?, disp_unit_arg(wide(disp_unit))?);
            let info = info_arg(info)?;
            let c = comm_arg(comm)?;
            // SAFETY: the caller's contract.
            let w = unsafe { Win::create(&c, base.cast(), size, disp_unit)? };
            // SAFETY: checked non-null.
            unsafe { store(w, info, out) };
            Ok(())
        })
    }
}

/// `MPI_Win_allocate` and `_allocate_shared` (`shared`).
///
/// # Safety
/// `baseptr` is a writable `void *`, `win` writable.
unsafe fn allocate(
    size: MPI_Aint,
    disp_unit: i64,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
    shared: bool,
) -> Result<(), AbiError> {
    let out = out_ptr(win, "win")?;
    let base_out = out_ptr(baseptr.cast::<*mut c_void>(), "baseptr")?;
    let (size, disp_unit) = (size_arg(size)?, disp_unit_arg(disp_unit)?);
    let info = info_arg(info)?;
    let c = comm_arg(comm)?;
    let w = if shared {
        let noncontig = info.get("alloc_shared_noncontig") == Some("true");
        Win::allocate_shared(&c, size, disp_unit, noncontig)?
    } else {
        Win::allocate(&c, size, disp_unit)?
    };
    // SAFETY: checked non-null; the caller's contract.
    unsafe {
        *base_out = w.local().0 as *mut c_void;
        store(w, info, out);
    }
    Ok(())
}

large_count! {
    /// `MPI_Win_allocate`: a window over new memory of every rank.
    ///
    /// # Safety
    /// `baseptr` is a writable `void *`; `win` is writable.
    Win_allocate(
        size: MPI_Aint,
        disp_unit: Disp,
        info: MPI_Info,
        comm: MPI_Comm,
        baseptr: *mut c_void,
        win: *mut MPI_Win,
    ) -> c_int {
        guard(NAME, ErrObj::Comm(comm), || {
            // SAFETY: the caller's contract.
            unsafe { allocate(size, wide(disp_unit), info, comm, baseptr, win, false) }
        })
    }
}

large_count! {
    /// `MPI_Win_allocate_shared`: one segment of the host, contiguous
    /// across ranks unless `alloc_shared_noncontig` is `true`.
    ///
    /// # Safety
    /// `baseptr` is a writable `void *`; `win` is writable.
    Win_allocate_shared(
        size: MPI_Aint,
        disp_unit: Disp,
        info: MPI_Info,
        comm: MPI_Comm,
        baseptr: *mut c_void,
        win: *mut MPI_Win,
    ) -> c_int {
        guard(NAME, ErrObj::Comm(comm), || {
            // SAFETY: the caller's contract.
            unsafe { allocate(size, wide(disp_unit), info, comm, baseptr, win, true) }
        })
    }
}

/// `MPI_Win_create_dynamic`: a window without memory until regions are attached.
///
/// # Safety
/// `win` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_create_dynamic(
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> c_int {
    guard("MPI_Win_create_dynamic", ErrObj::Comm(comm), || {
        let out = out_ptr(win, "win")?;
        let info = info_arg(info)?;
        let w = Win::create_dynamic(&comm_arg(comm)?)?;
        // SAFETY: checked non-null.
        unsafe { store(w, info, out) };
        Ok(())
    })
}

/// `MPI_Win_free`: collective; sets `*win` to `MPI_WIN_NULL`.
///
/// # Safety
/// `win` is readable and writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_free(win: *mut MPI_Win) -> c_int {
    // SAFETY: the caller's contract (null is checked below).
    let h = if win.is_null() {
        WIN_NULL
    } else {
        unsafe { *win }
    };
    guard("MPI_Win_free", ErrObj::Win(h), || {
        out_ptr(win, "win")?;
        super::win(h)?.free()?;
        // Attributes go with the window (delete callbacks run).
        let deleted = super::keyvals::on_free(h);
        let slot = handles::win_slot(h)?;
        super::forget(h);
        state::lock().wins.remove(slot);
        // SAFETY: checked non-null.
        unsafe { *win = WIN_NULL };
        deleted
    })
}

large_count! {
    /// `MPI_Win_shared_query`: where `rank`'s memory of a shared window
    /// is mapped in this process.
    ///
    /// # Safety
    /// `size`, `disp_unit` and `baseptr` (a `void *`) are writable.
    Win_shared_query(
        win: MPI_Win,
        rank: c_int,
        size: *mut MPI_Aint,
        disp_unit: *mut Disp,
        baseptr: *mut c_void,
    ) -> c_int {
        guard(NAME, ErrObj::Win(win), || {
            let size_out = out_ptr(size, "size")?;
            let unit_out = out_ptr(disp_unit, "disp_unit")?;
            let base_out = out_ptr(baseptr.cast::<*mut c_void>(), "baseptr")?;
            let (base, len, unit) = super::win(win)?.shared_query(rank)?;
            // SAFETY: checked non-null.
            unsafe {
                *size_out = len as MPI_Aint;
                *unit_out = Disp::from_count(unit as i64);
                *base_out = base as *mut c_void;
            }
            Ok(())
        })
    }
}

/// `MPI_Win_attach`: exposes `size` bytes at `base` in a dynamic window.
#[no_mangle]
pub extern "C" fn oxabi_Win_attach(win: MPI_Win, base: *mut c_void, size: MPI_Aint) -> c_int {
    guard("MPI_Win_attach", ErrObj::Win(win), || {
        let size = size_arg(size)?;
        Ok(super::win(win)?.attach(base as usize, size)?)
    })
}

/// `MPI_Win_detach`: withdraws the region attached at `base`.
#[no_mangle]
pub extern "C" fn oxabi_Win_detach(win: MPI_Win, base: *const c_void) -> c_int {
    guard("MPI_Win_detach", ErrObj::Win(win), || {
        Ok(super::win(win)?.detach(base as usize)?)
    })
}
