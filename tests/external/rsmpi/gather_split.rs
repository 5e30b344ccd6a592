//! rsmpi on OxMPI: gather, scatter, all-gather, all-to-all and a split
//! communicator. Written for OxMPI's external-client test (not one of
//! rsmpi's examples).
use mpi::collective::SystemOperation;
use mpi::topology::Color;
use mpi::traits::*;

fn main() {
    let universe = mpi::initialize().expect("MPI initializes");
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let n = size as usize;
    let check = |ok: bool, what: &str| {
        if !ok {
            eprintln!("FAIL rank {rank}: {what}");
            world.abort(1);
        }
    };

    // Gather one value per rank at rank 0.
    let root = world.process_at_rank(0);
    let mine = [rank * rank, -rank];
    if rank == 0 {
        let mut all = vec![0i32; 2 * n];
        root.gather_into_root(&mine[..], &mut all[..]);
        let ok = (0..size).all(|r| all[2 * r as usize] == r * r && all[2 * r as usize + 1] == -r);
        check(ok, "gather");
    } else {
        root.gather_into(&mine[..]);
    }

    // Scatter from rank 0.
    let mut got = 0u64;
    if rank == 0 {
        let data: Vec<u64> = (0..n as u64).map(|r| 1000 + r).collect();
        root.scatter_into_root(&data[..], &mut got);
    } else {
        root.scatter_into(&mut got);
    }
    check(got == 1000 + rank as u64, "scatter");

    // All-gather and all-to-all.
    let mut everyone = vec![0.0f32; n];
    world.all_gather_into(&(rank as f32 + 0.25), &mut everyone[..]);
    check(everyone.iter().enumerate().all(|(r, &x)| x == r as f32 + 0.25), "all_gather");
    let out: Vec<i32> = (0..size).map(|to| rank * 100 + to).collect();
    let mut inb = vec![0i32; n];
    world.all_to_all_into(&out[..], &mut inb[..]);
    check((0..size).all(|from| inb[from as usize] == from * 100 + rank), "all_to_all");

    // Split into even and odd ranks and sum within each half.
    let half = world
        .split_by_color(Color::with_value(rank % 2))
        .expect("every rank has a color");
    let members: Vec<i32> = (0..size).filter(|r| r % 2 == rank % 2).collect();
    check(half.size() as usize == members.len(), "split size");
    let mut s = 0i32;
    half.all_reduce_into(&rank, &mut s, SystemOperation::sum());
    check(s == members.iter().sum::<i32>(), "all_reduce on the split communicator");

    world.barrier();
    if rank == 0 {
        println!("PASS rsmpi gather_split");
    }
}
