//! Synchronization: `MPI_Win_fence`, the passive-target calls (lock,
//! unlock, lock_all, unlock_all, the four flushes, `MPI_Win_sync`) and
//! post-start-complete-wait (`MPI_Win_post`, `_start`, `_complete`,
//! `_wait`, `_test`).

use std::ffi::c_int;

use oxmpi::rma::LockType;

use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{self, MPI_Win};
use crate::raise::guard;
use crate::state;

/// `MPI_LOCK_EXCLUSIVE`.
const LOCK_EXCLUSIVE: c_int = 234;
/// `MPI_LOCK_SHARED`.
const LOCK_SHARED: c_int = 235;

/// `MPI_Win_fence`.
#[no_mangle]
pub extern "C" fn oxabi_Win_fence(assert: c_int, win: MPI_Win) -> c_int {
    guard("MPI_Win_fence", ErrObj::Win(win), || {
        super::with_win(win, |w| Ok(w.fence(assert)?))
    })
}

/// `MPI_Win_lock`.
#[no_mangle]
pub extern "C" fn oxabi_Win_lock(
    lock_type: c_int,
    rank: c_int,
    assert: c_int,
    win: MPI_Win,
) -> c_int {
    guard("MPI_Win_lock", ErrObj::Win(win), || {
        let kind = match lock_type {
            LOCK_EXCLUSIVE => LockType::Exclusive,
            LOCK_SHARED => LockType::Shared,
            other => {
                return Err(AbiError::new(
                    Class::LOCKTYPE,
                    format!(
                        "invalid `lock_type` {other}: expected MPI_LOCK_EXCLUSIVE or \
                         MPI_LOCK_SHARED"
                    ),
                ))
            }
        };
        Ok(super::win(win)?.lock(kind, rank, assert)?)
    })
}

/// `MPI_Win_unlock`.
#[no_mangle]
pub extern "C" fn oxabi_Win_unlock(rank: c_int, win: MPI_Win) -> c_int {
    guard("MPI_Win_unlock", ErrObj::Win(win), || {
        Ok(super::win(win)?.unlock(rank)?)
    })
}

/// `MPI_Win_lock_all`.
#[no_mangle]
pub extern "C" fn oxabi_Win_lock_all(assert: c_int, win: MPI_Win) -> c_int {
    guard("MPI_Win_lock_all", ErrObj::Win(win), || {
        Ok(super::win(win)?.lock_all(assert)?)
    })
}

/// `MPI_Win_unlock_all`.
#[no_mangle]
pub extern "C" fn oxabi_Win_unlock_all(win: MPI_Win) -> c_int {
    guard("MPI_Win_unlock_all", ErrObj::Win(win), || {
        Ok(super::win(win)?.unlock_all()?)
    })
}

/// `MPI_Win_flush`.
#[no_mangle]
pub extern "C" fn oxabi_Win_flush(rank: c_int, win: MPI_Win) -> c_int {
    // The fast path cannot fail or panic: outside the guard.
    if super::try_cached(win, |w| w.flush_direct(rank)) {
        return 0;
    }
    guard("MPI_Win_flush", ErrObj::Win(win), || {
        super::with_win(win, |w| Ok(w.flush(Some(rank))?))
    })
}

/// `MPI_Win_flush_local`.
#[no_mangle]
pub extern "C" fn oxabi_Win_flush_local(rank: c_int, win: MPI_Win) -> c_int {
    guard("MPI_Win_flush_local", ErrObj::Win(win), || {
        Ok(super::win(win)?.flush(Some(rank))?)
    })
}

/// `MPI_Win_flush_all`.
#[no_mangle]
pub extern "C" fn oxabi_Win_flush_all(win: MPI_Win) -> c_int {
    guard("MPI_Win_flush_all", ErrObj::Win(win), || {
        Ok(super::win(win)?.flush(None)?)
    })
}

/// `MPI_Win_flush_local_all`.
#[no_mangle]
pub extern "C" fn oxabi_Win_flush_local_all(win: MPI_Win) -> c_int {
    guard("MPI_Win_flush_local_all", ErrObj::Win(win), || {
        Ok(super::win(win)?.flush(None)?)
    })
}

/// `MPI_Win_sync`.
#[no_mangle]
pub extern "C" fn oxabi_Win_sync(win: MPI_Win) -> c_int {
    guard("MPI_Win_sync", ErrObj::Win(win), || {
        Ok(super::win(win)?.sync()?)
    })
}

fn group_arg(h: c_int) -> Result<oxmpi::Group, AbiError> {
    match handles::group(h)? {
        handles::GroupRef::Empty => Ok(oxmpi::Group::empty()),
        handles::GroupRef::Slot(s) => state::lock().groups.get(s).cloned().ok_or_else(|| {
            AbiError::new(
                Class::GROUP,
                format!("group {h:#010x} does not exist (freed?)"),
            )
        }),
    }
}

/// `MPI_Win_post`.
#[no_mangle]
pub extern "C" fn oxabi_Win_post(group: c_int, assert: c_int, win: MPI_Win) -> c_int {
    guard("MPI_Win_post", ErrObj::Win(win), || {
        let g = group_arg(group)?;
        Ok(super::win(win)?.post(&g, assert)?)
    })
}

/// `MPI_Win_start`.
#[no_mangle]
pub extern "C" fn oxabi_Win_start(group: c_int, assert: c_int, win: MPI_Win) -> c_int {
    guard("MPI_Win_start", ErrObj::Win(win), || {
        let g = group_arg(group)?;
        Ok(super::win(win)?.start(&g, assert)?)
    })
}

/// `MPI_Win_complete`.
#[no_mangle]
pub extern "C" fn oxabi_Win_complete(win: MPI_Win) -> c_int {
    guard("MPI_Win_complete", ErrObj::Win(win), || {
        Ok(super::win(win)?.complete()?)
    })
}

/// `MPI_Win_wait`.
#[no_mangle]
pub extern "C" fn oxabi_Win_wait(win: MPI_Win) -> c_int {
    guard("MPI_Win_wait", ErrObj::Win(win), || {
        Ok(super::win(win)?.wait()?)
    })
}

/// `MPI_Win_test`.
///
/// # Safety
/// `flag` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Win_test(win: MPI_Win, flag: *mut c_int) -> c_int {
    guard("MPI_Win_test", ErrObj::Win(win), || {
        let out = out_ptr(flag, "flag")?;
        let done = super::win(win)?.test()?;
        // SAFETY: checked non-null.
        unsafe { *out = c_int::from(done) };
        Ok(())
    })
}
