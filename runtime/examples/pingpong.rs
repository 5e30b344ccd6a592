//! Ping-pong between ranks 0 and 1: prints one-way latency and bandwidth
//! for a range of sizes. `oxrun -n 2 target/release/examples/pingpong`.

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::init()?;
    let world = universe.world();
    let rank = world.rank();
    // Optional first argument: the largest size to measure (default 16 MiB).
    let max: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(16 << 20);
    let mut size = 0usize;
    while size <= max {
        let iters = if size <= 65536 { 2000 } else { 100 };
        let mut buf = vec![0u8; size];
        let mut best = f64::MAX;
        for _round in 0..3 {
            world.barrier()?;
            let t0 = oxmpi::wtime();
            for _ in 0..iters {
                if rank == 0 {
                    world.send(&buf, 1, 0)?;
                    world.recv(&mut buf, 1, 0)?;
                } else if rank == 1 {
                    world.recv(&mut buf, 0, 0)?;
                    world.send(&buf, 0, 0)?;
                }
            }
            best = best.min((oxmpi::wtime() - t0) / (2.0 * iters as f64));
        }
        if rank == 0 {
            println!(
                "{size:>10} B  {:>9.2} us  {:>9.1} MB/s",
                best * 1e6,
                size as f64 / best / 1e6
            );
        }
        size = if size == 0 { 1 } else { size * 4 };
    }
    universe.finalize()
}
