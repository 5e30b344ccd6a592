//! temp
fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::init()?;
    let w = universe.world();
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(500_000);
    let a = [1.0f32, 2.0];
    let mut b = [0.0f32; 2];
    w.barrier()?;
    let t0 = oxmpi::wtime();
    for _ in 0..n {
        w.allreduce(&a, &mut b, &oxmpi::ops::Op::SUM)?;
    }
    if w.rank() == 0 {
        println!("allreduce {:.4} us", (oxmpi::wtime() - t0) / n as f64 * 1e6);
    }
    universe.finalize()
}
