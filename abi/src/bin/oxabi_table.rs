//! Prints how much of the MPICH ABI is implemented: a summary line, then
//! the implemented functions (`--missing`: the unimplemented ones).

use std::io::Write;

fn main() {
    let missing = std::env::args().any(|a| a == "--missing");
    let all = mpi::table::FUNCTIONS;
    let done = all.iter().filter(|f| f.1).count();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{done} of {} MPI functions implemented ({} not yet)",
        all.len(),
        all.len() - done
    );
    for (name, implemented) in all {
        // A closed pipe (`| head`) just ends the listing.
        if *implemented != missing && writeln!(out, "{name}").is_err() {
            return;
        }
    }
}
