//! Graph topologies (`MPI_Graph_*`, `MPI_Graphdims_get`) and distributed
//! graph topologies (`MPI_Dist_graph_*`) over the runtime's. Ranks are not
//! reordered; info hints are checked and ignored.
//!
//! Output arrays and their capacities (the `max*` arguments), as MPICH
//! treats them: `MPI_Graph_get` and `MPI_Dist_graph_neighbors` fail with
//! `MPI_ERR_ARG` when an array is too small; `MPI_Graph_neighbors` writes
//! as many neighbors as fit.

use std::ffi::c_int;

use crate::api::comm::put_new;
use crate::api::env::info::check_hints;
use crate::api::topo::array;
use crate::errors::{out_ptr, AbiError, Class, ErrObj};
use crate::handles::{MPI_Comm, MPI_Info};
use crate::raise::guard;
use crate::state;

extern "C" {
    /// `MPI_UNWEIGHTED` (objects.c): a weights argument meaning "no weights".
    static MPI_UNWEIGHTED: *const c_int;
    /// `MPI_WEIGHTS_EMPTY` (objects.c): weights of a rank without edges.
    static MPI_WEIGHTS_EMPTY: *const c_int;
}

/// Whether a weights argument is `MPI_UNWEIGHTED`.
fn unweighted(p: *const c_int) -> bool {
    // SAFETY: reading a constant pointer defined in objects.c.
    std::ptr::eq(p, unsafe { MPI_UNWEIGHTED })
}

/// A count argument `arg` (a number of nodes, neighbors or edges).
fn count_arg(n: c_int, arg: &str) -> Result<usize, AbiError> {
    usize::try_from(n)
        .map_err(|_| AbiError::new(Class::ARG, format!("`{arg}` is {n}: it cannot be negative")))
}

/// The weights argument `arg` for `n` edges: `None` for `MPI_UNWEIGHTED`;
/// `MPI_WEIGHTS_EMPTY` only without edges.
///
/// # Safety
/// A `p` other than the two constants holds `n` entries.
unsafe fn weights<'a>(
    p: *const c_int,
    n: usize,
    arg: &str,
) -> Result<Option<&'a [c_int]>, AbiError> {
    if unweighted(p) {
        return Ok(None);
    }
    // SAFETY: reading a constant pointer defined in objects.c.
    if std::ptr::eq(p, unsafe { MPI_WEIGHTS_EMPTY }) {
        if n > 0 {
            return Err(AbiError::new(
                Class::ARG,
                format!("`{arg}` is MPI_WEIGHTS_EMPTY for {n} edges (it means no edges)"),
            ));
        }
        return Ok(Some(&[]));
    }
    // SAFETY: the caller's contract.
    unsafe { array(p, n, arg) }.map(Some)
}

/// Writes `v` to the C array `p` with room for `max` entries (as many as fit).
///
/// # Safety
/// A non-null `p` has room for `max` entries.
unsafe fn fill_upto(
    p: *mut c_int,
    max: c_int,
    v: &[c_int],
    arg: &'static str,
) -> Result<(), AbiError> {
    let n = count_arg(max, arg)?.min(v.len());
    if n == 0 {
        return Ok(());
    }
    let p = out_ptr(p, arg)?;
    // SAFETY: room for `max` >= n entries: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, n) };
    Ok(())
}

/// Writes all of `v` to the C array `p` of capacity `max` (argument
/// `max_arg`); `MPI_ERR_ARG` if it does not fit.
///
/// # Safety
/// A non-null `p` has room for `max` entries.
unsafe fn fill_all(
    p: *mut c_int,
    max: c_int,
    max_arg: &str,
    v: &[c_int],
    arg: &'static str,
) -> Result<(), AbiError> {
    if count_arg(max, max_arg)? < v.len() {
        return Err(AbiError::new(
            Class::ARG,
            format!("`{max_arg}` is {max} but `{arg}` needs {} entries", v.len()),
        ));
    }
    // SAFETY: the caller's contract.
    unsafe { fill_upto(p, max, v, arg) }
}

/// The `index` and `edges` arguments of `MPI_Graph_create` / `MPI_Graph_map`.
///
/// # Safety
/// `indx` holds `nnodes` entries and `edges` as many as its last one says.
unsafe fn graph_args<'a>(
    nnodes: c_int,
    indx: *const c_int,
    edges: *const c_int,
) -> Result<(&'a [c_int], &'a [c_int]), AbiError> {
    let n = count_arg(nnodes, "nnodes")?;
    // SAFETY: the caller's contract.
    let index = unsafe { array(indx, n, "index") }?;
    let nedges = count_arg(index.last().copied().unwrap_or(0), "index[nnodes-1]")?;
    // SAFETY: as above.
    let edges = unsafe { array(edges, nedges, "edges") }?;
    Ok((index, edges))
}

/// `MPI_Graph_create`: ranks beyond the graph get `MPI_COMM_NULL`;
/// `reorder` is accepted and not acted on.
///
/// # Safety
/// `indx` holds `nnodes` entries, `edges` `indx[nnodes-1]`; `comm_graph`
/// is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Graph_create(
    comm_old: MPI_Comm,
    nnodes: c_int,
    indx: *const c_int,
    edges: *const c_int,
    reorder: c_int,
    comm_graph: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Graph_create", ErrObj::Comm(comm_old), || {
        let out = out_ptr(comm_graph, "comm_graph")?;
        let c = state::comm(comm_old)?;
        // SAFETY: the caller's contract.
        let (index, edges) = unsafe { graph_args(nnodes, indx, edges) }?;
        let new = c.graph_create(index, edges, reorder != 0)?;
        // SAFETY: checked non-null.
        unsafe { put_new(comm_old, new, out) };
        Ok(())
    })
}

/// `MPI_Graph_map`: the rank `MPI_Graph_create` would give this process
/// (its rank, no reordering), `MPI_UNDEFINED` beyond the graph.
///
/// # Safety
/// As [`oxabi_Graph_create`]; `newrank` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Graph_map(
    comm: MPI_Comm,
    nnodes: c_int,
    indx: *const c_int,
    edges: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    guard("MPI_Graph_map", ErrObj::Comm(comm), || {
        let out = out_ptr(newrank, "newrank")?;
        let c = state::comm(comm)?;
        // SAFETY: the caller's contract.
        let (index, edges) = unsafe { graph_args(nnodes, indx, edges) }?;
        let r = c.graph_map(index, edges)?;
        // SAFETY: checked non-null.
        unsafe { *out = r };
        Ok(())
    })
}

/// `MPI_Graphdims_get`.
///
/// # Safety
/// `nnodes` and `nedges` are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Graphdims_get(
    comm: MPI_Comm,
    nnodes: *mut c_int,
    nedges: *mut c_int,
) -> c_int {
    guard("MPI_Graphdims_get", ErrObj::Comm(comm), || {
        let (pn, pe) = (out_ptr(nnodes, "nnodes")?, out_ptr(nedges, "nedges")?);
        let (n, e) = state::comm(comm)?.graphdims_get()?;
        // SAFETY: checked non-null.
        unsafe {
            *pn = n;
            *pe = e;
        }
        Ok(())
    })
}

/// `MPI_Graph_get`.
///
/// # Safety
/// `indx` has room for `maxindex` entries and `edges` for `maxedges`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Graph_get(
    comm: MPI_Comm,
    maxindex: c_int,
    maxedges: c_int,
    indx: *mut c_int,
    edges: *mut c_int,
) -> c_int {
    guard("MPI_Graph_get", ErrObj::Comm(comm), || {
        let c = state::comm(comm)?;
        let g = c.graph_get()?;
        // SAFETY: the caller's contract.
        unsafe {
            fill_all(indx, maxindex, "maxindex", g.index(), "index")?;
            fill_all(edges, maxedges, "maxedges", g.edges(), "edges")
        }
    })
}

/// `MPI_Graph_neighbors_count`.
///
/// # Safety
/// `nneighbors` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Graph_neighbors_count(
    comm: MPI_Comm,
    rank: c_int,
    nneighbors: *mut c_int,
) -> c_int {
    guard("MPI_Graph_neighbors_count", ErrObj::Comm(comm), || {
        let out = out_ptr(nneighbors, "nneighbors")?;
        let n = state::comm(comm)?.graph_neighbors_count(rank)?;
        // SAFETY: checked non-null.
        unsafe { *out = n };
        Ok(())
    })
}

/// `MPI_Graph_neighbors`.
///
/// # Safety
/// `neighbors` has room for `maxneighbors` entries.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Graph_neighbors(
    comm: MPI_Comm,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> c_int {
    guard("MPI_Graph_neighbors", ErrObj::Comm(comm), || {
        let c = state::comm(comm)?;
        let v = c.graph_neighbors(rank)?;
        // SAFETY: the caller's contract.
        unsafe { fill_upto(neighbors, maxneighbors, v, "neighbors") }
    })
}

/// `MPI_Dist_graph_create_adjacent`: `reorder` is accepted and not acted on.
///
/// # Safety
/// `sources` (and `sourceweights` unless `MPI_UNWEIGHTED` /
/// `MPI_WEIGHTS_EMPTY`) hold `indegree` entries, `destinations` (and
/// `destweights`) `outdegree`; `comm_dist_graph` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Dist_graph_create_adjacent(
    comm_old: MPI_Comm,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    info: MPI_Info,
    reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> c_int {
    guard(
        "MPI_Dist_graph_create_adjacent",
        ErrObj::Comm(comm_old),
        || {
            let out = out_ptr(comm_dist_graph, "comm_dist_graph")?;
            let c = state::comm(comm_old)?;
            let (ni, no) = (
                count_arg(indegree, "indegree")?,
                count_arg(outdegree, "outdegree")?,
            );
            // SAFETY: the caller's contract.
            let (srcs, sw, dsts, dw) = unsafe {
                (
                    array(sources, ni, "sources")?,
                    weights(sourceweights, ni, "sourceweights")?,
                    array(destinations, no, "destinations")?,
                    weights(destweights, no, "destweights")?,
                )
            };
            check_hints(info)?;
            let w =
                match (sw, dw) {
                    (Some(s), Some(d)) => Some((s, d)),
                    (None, None) => None,
                    _ => return Err(AbiError::new(
                        Class::ARG,
                        "`sourceweights` and `destweights`: MPI_UNWEIGHTED must be given for both \
                     or neither",
                    )),
                };
            let new = c.dist_graph_create_adjacent(srcs, dsts, w, reorder != 0)?;
            // SAFETY: checked non-null.
            unsafe { put_new(comm_old, Some(new), out) };
            Ok(())
        },
    )
}

/// `MPI_Dist_graph_create`: edges given by any rank reach both their ends;
/// `reorder` is accepted and not acted on.
///
/// # Safety
/// `sources` and `degrees` hold `n` entries, `destinations` (and
/// `weights` unless `MPI_UNWEIGHTED` / `MPI_WEIGHTS_EMPTY`) the sum of the
/// degrees; `comm_dist_graph` is writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Dist_graph_create(
    comm_old: MPI_Comm,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    weights_: *const c_int,
    info: MPI_Info,
    reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> c_int {
    guard("MPI_Dist_graph_create", ErrObj::Comm(comm_old), || {
        let out = out_ptr(comm_dist_graph, "comm_dist_graph")?;
        let c = state::comm(comm_old)?;
        let nsrc = count_arg(n, "n")?;
        // SAFETY: the caller's contract.
        let (srcs, degs) = unsafe {
            (
                array(sources, nsrc, "sources")?,
                array(degrees, nsrc, "degrees")?,
            )
        };
        let mut nedges = 0usize;
        for (i, &d) in degs.iter().enumerate() {
            nedges += count_arg(d, &format!("degrees[{i}]"))?;
        }
        // SAFETY: as above.
        let (dsts, w) = unsafe {
            (
                array(destinations, nedges, "destinations")?,
                weights(weights_, nedges, "weights")?,
            )
        };
        check_hints(info)?;
        let new = c.dist_graph_create(srcs, degs, dsts, w, reorder != 0)?;
        // SAFETY: checked non-null.
        unsafe { put_new(comm_old, Some(new), out) };
        Ok(())
    })
}

/// `MPI_Dist_graph_neighbors_count`.
///
/// # Safety
/// The three outputs are writable.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Dist_graph_neighbors_count(
    comm: MPI_Comm,
    indegree: *mut c_int,
    outdegree: *mut c_int,
    weighted: *mut c_int,
) -> c_int {
    guard("MPI_Dist_graph_neighbors_count", ErrObj::Comm(comm), || {
        let pi = out_ptr(indegree, "indegree")?;
        let po = out_ptr(outdegree, "outdegree")?;
        let pw = out_ptr(weighted, "weighted")?;
        let (i, o, w) = state::comm(comm)?.dist_graph_neighbors_count()?;
        // SAFETY: checked non-null.
        unsafe {
            *pi = i;
            *po = o;
            *pw = c_int::from(w);
        }
        Ok(())
    })
}

/// `MPI_Dist_graph_neighbors`: weights are written for a weighted graph
/// unless the argument is `MPI_UNWEIGHTED`.
///
/// # Safety
/// `sources` and `sourceweights` have room for `maxindegree` entries,
/// `destinations` and `destweights` for `maxoutdegree`.
#[no_mangle]
pub unsafe extern "C" fn oxabi_Dist_graph_neighbors(
    comm: MPI_Comm,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> c_int {
    guard("MPI_Dist_graph_neighbors", ErrObj::Comm(comm), || {
        let c = state::comm(comm)?;
        let g = c.dist_graph_neighbors()?;
        // SAFETY: the caller's contract.
        unsafe {
            fill_all(sources, maxindegree, "maxindegree", g.sources(), "sources")?;
            fill_all(
                destinations,
                maxoutdegree,
                "maxoutdegree",
                g.destinations(),
                "destinations",
            )?;
            if g.weighted() {
                if !unweighted(sourceweights) {
                    let w = g.source_weights();
                    fill_all(
                        sourceweights,
                        maxindegree,
                        "maxindegree",
                        w,
                        "sourceweights",
                    )?;
                }
                if !unweighted(destweights) {
                    let w = g.dest_weights();
                    fill_all(destweights, maxoutdegree, "maxoutdegree", w, "destweights")?;
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_arguments() {
        // SAFETY: the constants; a live array of two entries.
        unsafe {
            assert_eq!(weights(MPI_UNWEIGHTED, 3, "w").unwrap(), None);
            assert_eq!(weights(MPI_WEIGHTS_EMPTY, 0, "w").unwrap(), Some(&[][..]));
            let e = weights(MPI_WEIGHTS_EMPTY, 2, "weights").unwrap_err();
            assert!(e
                .message
                .contains("`weights` is MPI_WEIGHTS_EMPTY for 2 edges"));
            let w = [4, 5];
            assert_eq!(weights(w.as_ptr(), 2, "w").unwrap(), Some(&w[..]));
        }
        let e = count_arg(-2, "indegree").unwrap_err();
        assert_eq!(e.class, Class::ARG);
        assert!(e.message.contains("`indegree` is -2"));
        let mut out = [0; 2];
        // SAFETY: room for two entries.
        unsafe { fill_upto(out.as_mut_ptr(), 2, &[7, 8, 9], "x") }.unwrap();
        assert_eq!(out, [7, 8]);
        // SAFETY: as above.
        let e = unsafe { fill_all(out.as_mut_ptr(), 2, "maxedges", &[7, 8, 9], "edges") };
        assert!(e
            .unwrap_err()
            .message
            .contains("`maxedges` is 2 but `edges` needs 3"));
    }
}
