//! Core binding: which processing units each local rank may run on.

use crate::proto::{BIND_AUTO, BIND_CORE};

/// PU lists for `nranks` local ranks under `policy`, or `None` for no binding.
/// Automatic binding applies when there is more than one rank (a lone rank
/// gains nothing from it, and pinning every single-rank job to core 0 would
/// pile them up) and every core gets the same number of ranks: one each,
/// or, oversubscribed, ranks dealt round-robin so that each core runs
/// `nranks / cores` of them. Pinned oversubscribed ranks stop migrating
/// between cores (a 4-rank small allreduce on 2 cores measured about 2x
/// faster bound); an uneven split stays unbound, so the kernel can share
/// the cores fairly among ranks that compute.
pub fn core_sets(policy: u8, nranks: usize) -> Option<Vec<Vec<usize>>> {
    if policy != BIND_CORE && policy != BIND_AUTO {
        return None;
    }
    // Cheap checks first: probing the machine costs milliseconds per job.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let even = |cores: usize| nranks >= 2 && (nranks <= cores || nranks.is_multiple_of(cores));
    if policy == BIND_AUTO && !even(cpus) {
        return None;
    }
    let machine = match oxmpi::machine::Machine::probe() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("oxrun: cannot bind ranks to cores: {e}");
            return None;
        }
    };
    let cores = machine.cores().len();
    if policy == BIND_AUTO && !even(cores) {
        return None;
    }
    Some(machine.core_sets_round_robin(nranks))
}
