//! Passes a token around all ranks and checks it: the smallest real SPMD
//! program. Run with `oxrun -n 4 target/debug/examples/ring`.

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::init()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let mut token = [0u64; 1];
    if rank == 0 {
        world.send(&[1u64], next, 0)?;
        world.recv(&mut token, prev, 0)?;
        assert_eq!(token[0], size as u64, "token went around once");
        println!("ring of {size}: token came back as {}", token[0]);
    } else {
        world.recv(&mut token, prev, 0)?;
        world.send(&[token[0] + 1], next, 0)?;
    }
    universe.finalize()
}
