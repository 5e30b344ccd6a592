//! temp
fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::init()?;
    let w = universe.world();
    let me = w.rank();
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let mut b = [0u8; 0];
    let t0 = oxmpi::wtime();
    for _ in 0..n {
        if me == 0 {
            w.send(&b, 1, 0)?;
            w.recv(&mut b, 1, 0)?;
        } else {
            w.recv(&mut b, 0, 0)?;
            w.send(&b, 0, 0)?;
        }
    }
    if me == 0 {
        println!(
            "half rtt {:.4} us",
            (oxmpi::wtime() - t0) / n as f64 / 2.0 * 1e6
        );
    }
    universe.finalize()
}
