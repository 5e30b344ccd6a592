//! rsmpi on OxMPI: broadcast, all-reduce, reduce to a root and scan.
//! Written for OxMPI's external-client test (not one of rsmpi's examples).
use mpi::collective::SystemOperation;
use mpi::traits::*;

fn main() {
    let universe = mpi::initialize().expect("MPI initializes");
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let check = |ok: bool, what: &str| {
        if !ok {
            eprintln!("FAIL rank {rank}: {what}");
            world.abort(1);
        }
    };

    // Broadcast a vector from the last rank.
    let root = world.process_at_rank(size - 1);
    let mut v = vec![0.0f64; 100];
    if rank == size - 1 {
        v.iter_mut().enumerate().for_each(|(i, x)| *x = i as f64 * 0.5);
    }
    root.broadcast_into(&mut v[..]);
    check(v.iter().enumerate().all(|(i, &x)| x == i as f64 * 0.5), "broadcast");

    // All-reduce a slice (sum) and a scalar (max).
    let mine: Vec<i32> = (0..10).map(|i| rank * 10 + i).collect();
    let mut sum = vec![0i32; 10];
    world.all_reduce_into(&mine[..], &mut sum[..], SystemOperation::sum());
    let base: i32 = (0..size).map(|r| r * 10).sum();
    check(sum.iter().enumerate().all(|(i, &s)| s == base + size * i as i32), "all_reduce sum");
    let mut max = 0i64;
    world.all_reduce_into(&(rank as i64 * 3), &mut max, SystemOperation::max());
    check(max == (size as i64 - 1) * 3, "all_reduce max");

    // Reduce (product) to rank 0.
    let root0 = world.process_at_rank(0);
    let x = (rank + 1) as f64;
    if rank == 0 {
        let mut prod = 0.0f64;
        root0.reduce_into_root(&x, &mut prod, SystemOperation::product());
        let want: f64 = (1..=size).map(f64::from).product();
        check(prod == want, "reduce product");
    } else {
        root0.reduce_into(&x, SystemOperation::product());
    }

    // Inclusive prefix sum.
    let mut prefix = 0i32;
    world.scan_into(&(rank + 1), &mut prefix, SystemOperation::sum());
    check(prefix == (rank + 1) * (rank + 2) / 2, "scan");

    world.barrier();
    if rank == 0 {
        println!("PASS rsmpi reduce_bcast");
    }
}
