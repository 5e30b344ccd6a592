//! Bootstrap smoke test: every rank publishes a card, fences, and checks
//! every other rank's card.
//!
//! ```text
//! cargo build -p oxmpi --example pmi_hello
//! mpiexec.hydra -n 4 target/debug/examples/pmi_hello                  # PMI-1
//! mpiexec.hydra -n 4 -genv OXMPI_PMI 2 target/debug/examples/pmi_hello # PMI-2
//! mpiexec.hydra -n 4 target/debug/examples/pmi_hello --abort 2        # exit code 7
//! ```

use oxmpi::bootstrap::connect;

fn card(rank: usize, size: usize) -> String {
    format!("rank{rank}-of-{size}-magic{}", rank * 7919 + 13)
}

fn run(abort_rank: Option<usize>) -> Result<String, oxmpi::Error> {
    let mut pmi = connect()?;
    let (rank, size) = (pmi.rank(), pmi.size());
    if abort_rank == Some(rank) {
        pmi.abort(7, &format!("rank {rank} aborts on request"))?;
        std::process::exit(7);
    }
    pmi.put(&format!("card-{rank}"), &card(rank, size))?;
    pmi.fence()?;
    for peer in (0..size).filter(|&p| p != rank) {
        let key = format!("card-{peer}");
        match pmi.get(&key)? {
            Some(v) if v == card(peer, size) => {}
            other => {
                let msg = format!(
                    "rank {rank}: {key} is {other:?}, expected {:?}",
                    card(peer, size)
                );
                pmi.abort(1, &msg)?;
                return Err(oxmpi::Error::Bootstrap(msg));
            }
        }
    }
    let line = format!("rank {rank} of {size}: ok (node {})", pmi.info().node());
    pmi.finalize()?;
    Ok(line)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let abort_rank = match args.get(1..) {
        Some([flag, r]) if flag == "--abort" => r.parse().ok(),
        _ => None,
    };
    match run(abort_rank) {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("pmi_hello: {e}");
            std::process::exit(1);
        }
    }
}
