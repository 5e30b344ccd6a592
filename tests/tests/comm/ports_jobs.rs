//! Rank programs for ports between two separately started jobs (the test
//! `ports_between_separate_jobs`): `ports_server` and `ports_client`
//! (directory in OXMPI_TEST_PORTS_DIR, the other job's size in
//! OXMPI_TEST_PORTS_OTHER), then `ports_late` and `ports_silent`. The
//! server's world rank 0 opens a port and writes its name to a file; the
//! two worlds connect twice in a row on it (point-to-point between every
//! pair, an allreduce on the intercommunicator, merge and a reduce), then
//! once more on a port found through the shared name directory. Panics on
//! any deviation.

use std::time::Duration;

use oxmpi::dynamic::{accept, close_port, connect, open_port};
use oxmpi::ops::Op;
use oxmpi::{Comm, Error, ErrorClass, Universe};

const SERVICE: &str = "oxmpi-tests-ports-jobs";

fn setting(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

fn port_file() -> std::path::PathBuf {
    std::path::Path::new(&setting("OXMPI_TEST_PORTS_DIR")).join("port")
}

/// The port name the server wrote, once it is there.
fn read_port() -> String {
    for _ in 0..1000 {
        if let Ok(text) = std::fs::read_to_string(port_file()) {
            return text;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the server never wrote {}", port_file().display())
}

/// What a rank of the server (`true`) or client world sends.
fn value(server: bool, rank: i32) -> i64 {
    i64::from(rank) + if server { 100 } else { 200 }
}

/// Checks an intercommunicator between the two worlds.
fn exercise(world: &Comm, inter: Comm, server: bool, other: i32) -> Result<(), Error> {
    let me = world.rank();
    assert_eq!((inter.size(), inter.rank()), (world.size(), me));
    assert_eq!(inter.remote_size()?, other);
    for r in 0..other {
        let mut got = [0i64];
        inter.sendrecv(&[value(server, me)], r, 9, &mut got, r, 9)?;
        assert_eq!(got[0], value(!server, r), "from remote rank {r}");
    }
    let mut sum = [0i64];
    inter.allreduce(&[value(server, me)], &mut sum, &Op::SUM)?;
    assert_eq!(sum[0], (0..other).map(|r| value(!server, r)).sum::<i64>());
    let all = inter.merge(!server)?;
    let servers = if server { world.size() } else { other };
    assert_eq!(all.size(), world.size() + other);
    assert_eq!(all.rank(), if server { me } else { servers + me });
    let mut total = [0i64];
    let at_root = all.rank() == 0;
    all.reduce(
        &[value(server, me)],
        at_root.then_some(&mut total[..]),
        &Op::SUM,
        0,
    )?;
    if all.rank() == 0 {
        let want: i64 = (0..servers).map(|r| value(true, r)).sum::<i64>()
            + (0..all.size() - servers)
                .map(|r| value(false, r))
                .sum::<i64>();
        assert_eq!(total[0], want);
    }
    all.free()?;
    inter.free()
}

pub fn server(world: &Comm, universe: &Universe) -> Result<(), Error> {
    let (job, own) = (universe.job_id(), universe.self_comm());
    let other: i32 = setting("OXMPI_TEST_PORTS_OTHER").parse().expect("a size");
    let mut port = String::new();
    if world.rank() == 0 {
        port = open_port(&job, &own)?;
        let tmp = port_file().with_extension("tmp");
        std::fs::write(&tmp, &port).expect("write the port");
        std::fs::rename(&tmp, port_file()).expect("rename the port");
    }
    for _ in 0..2 {
        let inter = accept(&job, world, &port, 0)?;
        exercise(world, inter, true, other)?;
    }
    let mut second = String::new();
    if world.rank() == 0 {
        close_port(&job, &own, &port)?;
        second = open_port(&job, &own)?;
        universe.publish_name(SERVICE, &second)?;
    }
    let inter = accept(&job, world, &second, 0)?;
    exercise(world, inter, true, other)?;
    if world.rank() == 0 {
        universe.unpublish_name(SERVICE)?;
        close_port(&job, &own, &second)?;
    }
    world.barrier()
}

pub fn client(world: &Comm, universe: &Universe) -> Result<(), Error> {
    let job = universe.job_id();
    let other: i32 = setting("OXMPI_TEST_PORTS_OTHER").parse().expect("a size");
    let port = if world.rank() == 0 {
        read_port()
    } else {
        String::new()
    };
    for _ in 0..2 {
        let inter = connect(&job, world, &port, 0)?;
        exercise(world, inter, false, other)?;
    }
    let mut second = String::new();
    if world.rank() == 0 {
        for _ in 0..1000 {
            match universe.lookup_name(SERVICE) {
                Ok(p) => {
                    second = p;
                    break;
                }
                Err(e) => assert_eq!(e.class(), ErrorClass::Name, "{e}"),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(!second.is_empty(), "{SERVICE} was never published");
        let closed = connect(&job, &universe.self_comm(), &port, 0).unwrap_err();
        assert_eq!(closed.class(), ErrorClass::Port, "{closed}");
        assert!(closed.to_string().contains(&port), "{closed}");
    }
    let inter = connect(&job, world, &second, 0)?;
    exercise(world, inter, false, other)?;
    world.barrier()
}

/// Connects to the server's port after its job ended: `MPI_ERR_PORT`, on
/// the root and (through the hand-off) on every other rank.
pub fn late(world: &Comm, universe: &Universe) -> Result<(), Error> {
    let port = if world.rank() == 0 {
        read_port()
    } else {
        String::new()
    };
    let e = connect(&universe.job_id(), world, &port, 0).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Port, "{e}");
    world.barrier()
}

/// Connects to a socket that accepts but never answers (the name in the
/// port file): `MPI_ERR_PORT` once `OXMPI_PORT_TIMEOUT` has passed.
pub fn silent(world: &Comm, universe: &Universe) -> Result<(), Error> {
    if world.rank() == 0 {
        let e = connect(&universe.job_id(), &universe.self_comm(), &read_port(), 0).unwrap_err();
        assert_eq!(e.class(), ErrorClass::Port, "{e}");
        assert!(e.to_string().contains("no answer"), "{e}");
    }
    world.barrier()
}

/// Opens a port, writes it, and accepts: the client's job cannot open its
/// fabric endpoints, so the accept fails (`MPI_ERR_PORT`) on every rank.
pub fn failing_server(world: &Comm, universe: &Universe) -> Result<(), Error> {
    let (job, own) = (universe.job_id(), universe.self_comm());
    let mut port = String::new();
    if world.rank() == 0 {
        port = open_port(&job, &own)?;
        std::fs::write(port_file(), &port).expect("write the port");
    }
    let e = accept(&job, world, &port, 0).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Port, "{e}");
    world.barrier()
}

/// Connects without a usable fabric provider: every rank gets its own
/// error (`MPI_ERR_UNSUPPORTED_OPERATION`), none waits forever.
pub fn no_fabric_client(world: &Comm, universe: &Universe) -> Result<(), Error> {
    let port = if world.rank() == 0 {
        read_port()
    } else {
        String::new()
    };
    let e = connect(&universe.job_id(), world, &port, 0).unwrap_err();
    assert_eq!(e.class(), ErrorClass::UnsupportedOperation, "{e}");
    world.barrier()
}
