//! Cartesian topologies (`MPI_Cart_*`, `MPI_Dims_create`, `MPI_Topo_test`)
//! over the runtime's grids (graphs are in [`graph`]). Ranks are not
//! reordered: grid rank = rank in the old communicator.

pub mod graph;

use std::ffi::c_int;

use oxmpi::{Comm, Topology};

use crate::api::comm::put_new;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{MPI_Comm, UNDEFINED};
use crate::raise::guard;
use crate::state;

/// `MPI_GRAPH`.
const GRAPH: c_int = 1;
/// `MPI_CART`.
const CART: c_int = 2;
/// `MPI_DIST_GRAPH`.
const DIST_GRAPH: c_int = 3;

/// `n` entries of the C array argument `arg` (`n` checked by the caller).
///
/// # Safety
/// A non-null `p` holds `n` entries.
pub(super) unsafe fn array<'a>(
    p: *const c_int,
    n: usize,
    arg: &str,
) -> Result<&'a [c_int], AbiError> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(AbiError::new(
            Class::ARG,
            format!("`{arg}` is a null pointer"),
        ));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Writes `v` to the C array argument `arg` with room for `max` entries.
///
/// # Safety
/// A non-null `p` has room for `max` entries.
unsafe fn fill(p: *mut c_int, max: c_int, v: &[c_int], arg: &'static str) -> Result<(), AbiError> {
    if max < 0 || (max as usize) < v.len() {
        return Err(AbiError::new(
            Class::ARG,
            format!("`maxdims` is {max} but the grid has {} dimensions", v.len()),
        ));
    }
    if v.is_empty() {
        return Ok(());
    }
    let p = out_ptr(p, arg)?;
    // SAFETY: room for `max` >= v.len() entries: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, v.len()) };
    Ok(())
}

/// The number of dimensions argument.
fn ndims_arg(ndims: c_int) -> Result<usize, AbiError> {
    usize::try_from(ndims).map_err(|_| {
        AbiError::new(
            Class::ARG,
            format!("`ndims` is {ndims}: it cannot be negative"),
        )
    })
}

fn ndims_of(c: &Comm) -> Result<usize, AbiError> {
    Ok(c.cartdim_get()? as usize)
}

/// `MPI_Dims_create`.
///
/// # Safety
/// `dims` holds `ndims` entries.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    guard("MPI_Dims_create", ErrObj::None, || {
        let n = ndims_arg(ndims)?;
        // SAFETY: the caller's contract.
        let d = unsafe { array(dims, n, "dims") }?;
        let mut v = d.to_vec();
        oxmpi::dims_create(nnodes, &mut v)?;
        // SAFETY: as above.
        unsafe { fill(dims, ndims, &v, "dims") }
    })
}

/// `MPI_Cart_create`: ranks beyond the grid get `MPI_COMM_NULL`;
/// `reorder` is accepted and not acted on.
///
/// # Safety
/// `dims` and `periods` hold `ndims` entries; `comm_cart` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Cart_create(
    comm_old: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    reorder: c_int,
    comm_cart: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Cart_create", ErrObj::Comm(comm_old), || {
        let out = out_ptr(comm_cart, "comm_cart")?;
        let c = state::comm(comm_old)?;
        let n = ndims_arg(ndims)?;
        // SAFETY: the caller's contract.
        let (d, p) = unsafe { (array(dims, n, "dims")?, array(periods, n, "periods")?) };
        let p: Vec<bool> = p.iter().map(|&x| x != 0).collect();
        let cells = d
            .iter()
            .try_fold(1i64, |acc, &x| acc.checked_mul(i64::from(x.max(0))));
        if cells.is_none_or(|n| n > i64::from(c.size())) {
            return Err(AbiError::new(
                Class::ARG,
                format!(
                    "`dims` {d:?}: the grid needs more than the {} ranks of the communicator",
                    c.size()
                ),
            ));
        }
        let new = c.cart_create(d, &p, reorder != 0)?;
        // SAFETY: checked non-null.
        unsafe { put_new(comm_old, new, out) };
        Ok(())
    })
}

/// `MPI_Cart_map`: the rank `MPI_Cart_create` would give this process
/// (its rank, no reordering), `MPI_UNDEFINED` beyond the grid.
///
/// # Safety
/// `dims` and `periods` hold `ndims` entries; `newrank` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Cart_map(
    comm: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    _periods: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    guard("MPI_Cart_map", ErrObj::Comm(comm), || {
        let out = out_ptr(newrank, "newrank")?;
        let c = state::comm(comm)?;
        let n = ndims_arg(ndims)?;
        // SAFETY: the caller's contract.
        let d = unsafe { array(dims, n, "dims") }?;
        let mut cells: i64 = 1;
        for (i, &x) in d.iter().enumerate() {
            if x <= 0 {
                return Err(AbiError::new(
                    Class::DIMS,
                    format!("`dims[{i}]` is {x}: extents must be positive"),
                ));
            }
            cells = cells.saturating_mul(i64::from(x));
        }
        if cells > i64::from(c.size()) {
            return Err(AbiError::new(
                Class::DIMS,
                format!(
                    "a grid of {d:?} needs more than the {} ranks of the communicator",
                    c.size()
                ),
            ));
        }
        let r = if i64::from(c.rank()) < cells {
            c.rank()
        } else {
            UNDEFINED
        };
        // SAFETY: checked non-null.
        unsafe { *out = r };
        Ok(())
    })
}

/// `MPI_Topo_test`: `MPI_CART`, `MPI_GRAPH`, `MPI_DIST_GRAPH` or
/// `MPI_UNDEFINED`.
///
/// # Safety
/// `status` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Topo_test(comm: MPI_Comm, status: *mut c_int) -> c_int {
    guard("MPI_Topo_test", ErrObj::Comm(comm), || {
        let out = out_ptr(status, "status")?;
        let t = match state::comm(comm)?.topology() {
            Topology::Cart(_) => CART,
            Topology::Graph(_) => GRAPH,
            Topology::DistGraph(_) => DIST_GRAPH,
            Topology::None => UNDEFINED,
        };
        // SAFETY: checked non-null.
        unsafe { *out = t };
        Ok(())
    })
}

/// `MPI_Cartdim_get`.
///
/// # Safety
/// `ndims` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Cartdim_get(comm: MPI_Comm, ndims: *mut c_int) -> c_int {
    guard("MPI_Cartdim_get", ErrObj::Comm(comm), || {
        let out = out_ptr(ndims, "ndims")?;
        let n = state::comm(comm)?.cartdim_get()?;
        // SAFETY: checked non-null.
        unsafe { *out = n };
        Ok(())
    })
}

/// `MPI_Cart_get`.
///
/// # Safety
/// `dims`, `periods` and `coords` have room for `maxdims` entries.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Cart_get(
    comm: MPI_Comm,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> c_int {
    guard("MPI_Cart_get", ErrObj::Comm(comm), || {
        let info = state::comm(comm)?.cart_get()?;
        let p: Vec<c_int> = info.periods.iter().map(|&x| c_int::from(x)).collect();
        // SAFETY: the caller's contract.
        unsafe {
            fill(dims, maxdims, &info.dims, "dims")?;
            fill(periods, maxdims, &p, "periods")?;
            fill(coords, maxdims, &info.coords, "coords")
        }
    })
}

/// `MPI_Cart_coords`.
///
/// # Safety
/// `coords` has room for `maxdims` entries.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Cart_coords(
    comm: MPI_Comm,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> c_int {
    guard("MPI_Cart_coords", ErrObj::Comm(comm), || {
        let v = state::comm(comm)?.cart_coords(rank)?;
        // SAFETY: the caller's contract.
        unsafe { fill(coords, maxdims, &v, "coords") }
    })
}

/// `MPI_Cart_rank`: periodic dimensions wrap.
///
/// # Safety
/// `coords` holds one entry per dimension; `rank` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Cart_rank(
    comm: MPI_Comm,
    coords: *const c_int,
    rank: *mut c_int,
) -> c_int {
    guard("MPI_Cart_rank", ErrObj::Comm(comm), || {
        let out = out_ptr(rank, "rank")?;
        let c = state::comm(comm)?;
        let n = ndims_of(&c)?;
        // SAFETY: the caller's contract.
        let v = unsafe { array(coords, n, "coords") }?;
        let r = c.cart_rank(v)?;
        // SAFETY: checked non-null.
        unsafe { *out = r };
        Ok(())
    })
}

/// `MPI_Cart_shift`: `MPI_PROC_NULL` past a non-periodic edge.
///
/// # Safety
/// `rank_source` and `rank_dest` are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Cart_shift(
    comm: MPI_Comm,
    direction: c_int,
    disp: c_int,
    rank_source: *mut c_int,
    rank_dest: *mut c_int,
) -> c_int {
    guard("MPI_Cart_shift", ErrObj::Comm(comm), || {
        let src = out_ptr(rank_source, "rank_source")?;
        let dst = out_ptr(rank_dest, "rank_dest")?;
        let (s, d) = state::comm(comm)?.cart_shift(direction, disp)?;
        // SAFETY: checked non-null.
        unsafe {
            *src = s;
            *dst = d;
        }
        Ok(())
    })
}

/// `MPI_Cart_sub`.
///
/// # Safety
/// `remain_dims` holds one entry per dimension; `newcomm` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Cart_sub(
    comm: MPI_Comm,
    remain_dims: *const c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Cart_sub", ErrObj::Comm(comm), || {
        let out = out_ptr(newcomm, "newcomm")?;
        let c = state::comm(comm)?;
        let n = ndims_of(&c)?;
        // SAFETY: the caller's contract.
        let keep: Vec<bool> = unsafe { array(remain_dims, n, "remain_dims") }?
            .iter()
            .map(|&x| x != 0)
            .collect();
        let new = c.cart_sub(&keep)?;
        // SAFETY: checked non-null.
        unsafe { put_new(comm, Some(new), out) };
        Ok(())
    })
}
