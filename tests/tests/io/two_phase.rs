//! Rank program: a block-cyclic view of 4-byte blocks written and read
//! collectively and independently, counting the process's file accesses.

use oxmpi::datatype::{BasicType, Datatype};
use oxmpi::io::data::Buf;
use oxmpi::io::{self, Datarep, File, FileView};
use oxmpi::Comm;

/// Ints each rank writes: one per block of the view.
const N: usize = 500;

fn view(comm: &Comm) -> FileView {
    let int = Datatype::basic(BasicType::Int);
    let tile = Datatype::resized(&int, 0, 4 * comm.size() as isize).unwrap();
    tile.commit();
    let disp = 4 * comm.rank() as u64;
    FileView::new(disp, int, tile, Datarep::Native).unwrap()
}

fn buf(v: &[i32]) -> Buf {
    let dt = Datatype::basic(BasicType::Int);
    Buf {
        addr: v.as_ptr() as usize,
        count: v.len(),
        dt,
    }
}

/// A buffer the access writes into.
fn buf_mut(v: &mut [i32]) -> Buf {
    let dt = Datatype::basic(BasicType::Int);
    Buf {
        addr: v.as_mut_ptr() as usize,
        count: v.len(),
        dt,
    }
}

/// Checks the whole file: int j belongs to rank j % size, its j / size-th.
fn check_file(world: &Comm, path: &str, salt: i32) {
    let size = world.size() as usize;
    let all = std::fs::read(path).unwrap();
    assert_eq!(all.len(), 4 * N * size);
    for (j, c) in all.chunks(4).enumerate() {
        let v = i32::from_ne_bytes(c.try_into().unwrap());
        let (owner, k) = (j % size, j / size);
        assert_eq!(v, salt + (owner * N + k) as i32, "int {j}");
    }
}

pub fn run(role: &str) {
    assert_eq!(role, "two_phase");
    let universe = oxmpi::init().unwrap();
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let dir = std::env::var("OXMPI_TEST_DIR").unwrap();
    let path = format!("{dir}/cyclic.dat");
    let hints = [
        ("cb_nodes".to_owned(), "2".to_owned()),
        ("cb_buffer_size".to_owned(), "1048576".to_owned()),
    ];
    let mode = io::MODE_CREATE | io::MODE_RDWR;
    let f = File::open(&world, &path, mode, &hints).unwrap();
    f.set_view(Some(4 * rank as u64), view(&world)).unwrap();
    let aggregators = if size == 1 {
        vec![0]
    } else {
        vec![0, size / 2]
    };
    let is_agg = aggregators.contains(&rank);

    // Collective: one pwrite per aggregator (one round: the file is small).
    let mine: Vec<i32> = (0..N).map(|k| (rank * N + k) as i32).collect();
    let (r0, w0) = io::access_counts();
    // SAFETY: `mine` holds N ints and outlives the call.
    let st = unsafe { f.write_at_all(0, &buf(&mine)).unwrap() };
    assert_eq!(st.count, 4 * N);
    let (r1, w1) = io::access_counts();
    assert_eq!(
        w1 - w0,
        u64::from(is_agg),
        "rank {rank}: pwrites of the collective write"
    );
    assert_eq!(
        r1 - r0,
        0,
        "rank {rank}: the pieces cover the span, nothing read"
    );
    world.barrier().unwrap();
    check_file(&world, &path, 0);
    world.barrier().unwrap();

    // Collective read: one pread per aggregator.
    let mut back = vec![0i32; N];
    // SAFETY: `back` has room for N ints.
    let st = unsafe { f.read_at_all(0, &buf_mut(&mut back)).unwrap() };
    assert_eq!(st.count, 4 * N);
    let (r2, w2) = io::access_counts();
    assert_eq!(
        (r2 - r1, w2 - w1),
        (u64::from(is_agg), 0),
        "rank {rank}: collective read"
    );
    assert_eq!(back, mine);

    // Independent: one pwrite per block.
    world.barrier().unwrap();
    let again: Vec<i32> = mine.iter().map(|v| v + 7).collect();
    // SAFETY: as above.
    unsafe { f.write_at(0, &buf(&again)).unwrap() };
    let (_, w3) = io::access_counts();
    let runs = if size == 1 { 1 } else { N as u64 };
    assert_eq!(w3 - w2, runs, "rank {rank}: independent pwrites");
    world.barrier().unwrap();
    check_file(&world, &path, 7);

    // Independent read: the nearby blocks are sieved into one pread.
    back.fill(0);
    let (r4, _) = io::access_counts();
    // SAFETY: `back` has room for N ints.
    let st = unsafe { f.read_at(0, &buf_mut(&mut back)).unwrap() };
    assert_eq!(st.count, 4 * N);
    assert_eq!(back, again);
    assert_eq!(
        io::access_counts().0 - r4,
        1,
        "rank {rank}: sieved independent read"
    );
    // Across the end of the file: the count stops where the data does.
    let mut tail = vec![-1i32; 10];
    // SAFETY: `tail` has room for 10 ints.
    let st = unsafe { f.read_at(N as u64 - 2, &buf_mut(&mut tail)).unwrap() };
    assert_eq!(st.count, 8, "rank {rank}: read across the end");
    assert_eq!(tail[..3], [again[N - 2], again[N - 1], -1]);
    world.barrier().unwrap();
    f.close().unwrap();
}
