//! The MPI tool information interface (MPI 4.0 chapter 15.3, `MPI_T_`).
//!
//! - Control variables (`cvars.rs`): every OxMPI tunable, the runtime's
//!   registry (`oxmpi::config::REGISTRY`) and the collectives' algorithm
//!   overrides, one variable each, named by its environment variable,
//!   read-only (they are read when MPI starts), grouped in categories.
//! - Performance variables (`pvars.rs`): none yet; sessions work.
//! - Events and their sources (`events.rs`): none; no enumerations either.
//!
//! The interface may be used before `MPI_Init` and after `MPI_Finalize`
//! (it needs no runtime), from any thread. Its functions return their
//! `MPI_T_ERR_*` class itself, which tools compare against; they never
//! call an error handler, and a panic becomes `MPI_T_ERR_INVALID`.

mod cvars;
mod events;
mod pvars;

use std::ffi::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

/// `MPI_SUCCESS`.
const SUCCESS: c_int = 0;
/// `MPI_T_ERR_NOT_INITIALIZED`.
const ERR_NOT_INITIALIZED: c_int = 60;
/// `MPI_T_ERR_INVALID_INDEX`.
const ERR_INVALID_INDEX: c_int = 62;
/// `MPI_T_ERR_INVALID_HANDLE`.
const ERR_INVALID_HANDLE: c_int = 64;
/// `MPI_T_ERR_INVALID_SESSION`.
const ERR_INVALID_SESSION: c_int = 67;
/// `MPI_T_ERR_CVAR_SET_NEVER`.
const ERR_CVAR_SET_NEVER: c_int = 69;
/// `MPI_T_ERR_INVALID_NAME`.
const ERR_INVALID_NAME: c_int = 73;
/// `MPI_T_ERR_INVALID`: a bad argument (a null pointer where one is needed).
const ERR_INVALID: c_int = 74;
/// `MPI_THREAD_MULTIPLE`.
const THREAD_MULTIPLE: c_int = 3;

/// What the interface keeps between calls.
#[derive(Default)]
struct Tool {
    /// `MPI_T_init_thread` calls not yet matched by `MPI_T_finalize`.
    inits: usize,
    /// Control-variable handles: the variable each one is bound to.
    cvar_handles: Slab<usize>,
    /// Performance-variable sessions (no handles can be made: no pvars).
    sessions: Slab<()>,
}

/// Objects behind pointer-sized handles: handle = slot + 1 (so that no
/// live object is the null handle); freed slots are reused.
struct Slab<T> {
    slots: Vec<Option<T>>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { slots: Vec::new() }
    }
}

impl<T> Slab<T> {
    fn insert(&mut self, value: T) -> usize {
        let slot = match self.slots.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        self.slots[slot] = Some(value);
        slot + 1
    }

    fn get(&self, handle: usize) -> Option<&T> {
        handle
            .checked_sub(1)
            .and_then(|s| self.slots.get(s)?.as_ref())
    }

    fn remove(&mut self, handle: usize) -> Option<T> {
        handle
            .checked_sub(1)
            .and_then(|s| self.slots.get_mut(s)?.take())
    }

    fn clear(&mut self) {
        self.slots.clear();
    }
}

static TOOL: Mutex<Tool> = Mutex::new(Tool {
    inits: 0,
    cvar_handles: Slab { slots: Vec::new() },
    sessions: Slab { slots: Vec::new() },
});

fn lock() -> MutexGuard<'static, Tool> {
    TOOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `body` with the interface's state, once `MPI_T_init_thread` has
/// been called; a panic becomes `MPI_T_ERR_INVALID`.
fn call(body: impl FnOnce(&mut Tool) -> c_int) -> c_int {
    catch_unwind(AssertUnwindSafe(|| {
        let mut tool = lock();
        if tool.inits == 0 {
            return ERR_NOT_INITIALIZED;
        }
        body(&mut tool)
    }))
    .unwrap_or(ERR_INVALID)
}

/// Stores `value` through `p` when `p` is not null (MPI_T lets a tool pass
/// null for what it does not want).
///
/// # Safety
/// `p` is null or writable.
unsafe fn put<T>(p: *mut T, value: T) {
    if !p.is_null() {
        // SAFETY: non-null, writable per the caller.
        unsafe { p.write(value) };
    }
}

/// Returns `text` in the MPI_T way: with `len` null or `*len` zero, or
/// `buf` null, nothing is copied and `*len` (when there) becomes the
/// length needed, terminator included; otherwise at most `*len - 1`
/// characters and a terminator are copied, and `*len` becomes the number
/// copied plus one.
///
/// # Safety
/// `len` is null or readable and writable; `buf` is null or has `*len`
/// writable bytes.
unsafe fn put_string(text: &str, buf: *mut c_char, len: *mut c_int) {
    if len.is_null() {
        return;
    }
    // SAFETY: non-null, readable per the caller.
    let room = unsafe { *len };
    let bytes = text.as_bytes();
    if buf.is_null() || room <= 0 {
        // SAFETY: non-null, writable per the caller.
        unsafe { *len = c_int::try_from(bytes.len() + 1).unwrap_or(c_int::MAX) };
        return;
    }
    let n = bytes.len().min(room as usize - 1);
    // SAFETY: `buf` has `room` > n bytes per the caller.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
        *len = n as c_int + 1;
    }
}

/// Reads the C string `name`; `None` when null or not UTF-8.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
unsafe fn name_arg<'a>(name: *const c_char) -> Option<&'a str> {
    if name.is_null() {
        return None;
    }
    // SAFETY: NUL-terminated per the caller.
    unsafe { std::ffi::CStr::from_ptr(name) }.to_str().ok()
}

/// Copies the first `len` (at most) of `items` to `out`.
///
/// # Safety
/// `out` is null or has `len` writable ints.
unsafe fn put_indices(items: impl Iterator<Item = usize>, len: c_int, out: *mut c_int) -> c_int {
    if len < 0 || (len > 0 && out.is_null()) {
        return ERR_INVALID;
    }
    for (i, item) in items.take(len as usize).enumerate() {
        // SAFETY: i < len entries, per the caller.
        unsafe { *out.add(i) = item as c_int };
    }
    SUCCESS
}

/// `MPI_T_init_thread`: starts (or counts another start of) the
/// interface; every thread level is provided (it locks its own state).
///
/// # Safety
/// `provided` is null or writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_T_init_thread(required: c_int, provided: *mut c_int) -> c_int {
    if !(0..=THREAD_MULTIPLE).contains(&required) || provided.is_null() {
        return ERR_INVALID;
    }
    lock().inits += 1;
    // SAFETY: checked non-null.
    unsafe { *provided = required };
    SUCCESS
}

/// `MPI_T_finalize`: undoes one `MPI_T_init_thread`; the last one frees
/// every handle and session.
#[no_mangle]
pub extern "C" fn oxabi_T_finalize() -> c_int {
    call(|tool| {
        tool.inits -= 1;
        if tool.inits == 0 {
            tool.cvar_handles.clear();
            tool.sessions.clear();
        }
        SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_follow_the_length_protocol() {
        let mut buf = [0x7f as c_char; 8];
        let mut len: c_int = 0;
        // SAFETY: valid pointers.
        unsafe { put_string("abcdef", buf.as_mut_ptr(), &mut len) };
        assert_eq!(
            (len, buf[0]),
            (7, 0x7f),
            "zero length: only the length needed"
        );
        len = 4;
        // SAFETY: 8 bytes, 4 announced.
        unsafe { put_string("abcdef", buf.as_mut_ptr(), &mut len) };
        assert_eq!(len, 4);
        assert_eq!(
            &buf[..4],
            &[b'a' as c_char, b'b' as c_char, b'c' as c_char, 0]
        );
        len = 8;
        // SAFETY: 8 bytes.
        unsafe { put_string("abcdef", buf.as_mut_ptr(), &mut len) };
        assert_eq!((len, buf[6]), (7, 0));
    }

    #[test]
    fn slab_handles_are_never_null_and_are_reused() {
        let mut s = Slab::default();
        let a = s.insert(1);
        let b = s.insert(2);
        assert!(a != 0 && b != 0 && a != b);
        assert_eq!(s.remove(a), Some(1));
        assert_eq!(s.get(a), None);
        assert_eq!(s.insert(3), a);
        assert_eq!(s.get(0), None);
        assert_eq!(s.remove(99), None);
    }
}
