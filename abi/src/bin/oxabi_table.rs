//! Prints how much of the MPICH ABI is implemented: a summary line, then
//! the implemented functions (`--missing`: the unimplemented ones).

fn main() {
    let missing = std::env::args().any(|a| a == "--missing");
    let all = mpi::table::FUNCTIONS;
    let done = all.iter().filter(|f| f.1).count();
    println!(
        "{done} of {} MPI functions implemented ({} not yet)",
        all.len(),
        all.len() - done
    );
    for (name, implemented) in all {
        if *implemented != missing {
            println!("{name}");
        }
    }
}
