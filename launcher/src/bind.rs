//! Core binding: which processing units each local rank may run on.

use crate::proto::{BIND_AUTO, BIND_CORE};

/// PU lists for `nranks` local ranks under `policy`, or `None` for no binding.
/// Automatic binding applies only when every rank gets a core of its own
/// and there is more than one rank (a lone rank gains nothing from it, and
/// pinning every single-rank job to core 0 would pile them up).
pub fn core_sets(policy: u8, nranks: usize) -> Option<Vec<Vec<usize>>> {
    if policy != BIND_CORE && policy != BIND_AUTO {
        return None;
    }
    // Cheap checks first: probing the topology costs milliseconds per job.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if policy == BIND_AUTO && (nranks < 2 || nranks > cpus) {
        return None;
    }
    let topo = match oxmpi::topology::Topology::probe() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("oxrun: cannot bind ranks to cores: {e}");
            return None;
        }
    };
    let cores = topo.cores().len();
    if policy == BIND_AUTO && (nranks < 2 || nranks > cores) {
        return None;
    }
    Some(topo.core_sets_round_robin(nranks))
}
