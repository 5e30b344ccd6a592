//! The trivial PMI program timed by the `startup` runner: connect, put a
//! business card, fence, read the next rank's card, finalize, exit 0.
//!
//! It speaks PMI-1 unless `OXMPI_PMI=2` (or `PMI_VERSION=2`) is set, and
//! runs unchanged under `oxrun` and `mpiexec.hydra`:
//!
//! ```text
//! target/release/oxrun -n 8 target/release/pmi_trivial
//! mpiexec.hydra -n 8 target/release/pmi_trivial
//! ```

use oxmpi::bootstrap::connect;

/// The card a rank publishes (shaped like a real endpoint address).
fn card(rank: usize) -> String {
    format!("tcp://127.0.0.1:{}/rank{rank}", 40_000 + rank)
}

fn run() -> Result<(), String> {
    let mut pmi = connect().map_err(|e| e.to_string())?;
    let (rank, size) = (pmi.rank(), pmi.size());
    pmi.put(&format!("bc-{rank}"), &card(rank))
        .map_err(|e| e.to_string())?;
    pmi.fence().map_err(|e| e.to_string())?;
    let peer = (rank + 1) % size;
    match pmi.get(&format!("bc-{peer}")).map_err(|e| e.to_string())? {
        Some(v) if v == card(peer) => {}
        other => return Err(format!("rank {rank}: card of {peer} is {other:?}")),
    }
    pmi.finalize().map_err(|e| e.to_string())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("pmi_trivial: {e}");
        std::process::exit(1);
    }
}
