//! Rank program for ports through the Rust API (`oxmpi::dynamic`): world
//! rank 0 alone accepts on one port once per other rank while those
//! connect at the same time, each on its own (`COMM_SELF`); every
//! connection must reach a different connector, with its own context (a
//! message on one never shows on another). Then the even and odd world
//! ranks connect as groups, with the port found through the launcher's
//! name service, and merge; then `join` over a loopback TCP socket between
//! world ranks 0 and 1. Panics on any deviation.

use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;

use oxmpi::dynamic::{accept, close_port, connect, join, open_port};
use oxmpi::ops::Op;
use oxmpi::{Comm, Error, ErrorClass, Universe};

fn send_text(world: &Comm, text: &str, to: i32, tag: i32) -> Result<(), Error> {
    world.send(&[text.len() as u64], to, tag)?;
    world.send(text.as_bytes(), to, tag)
}

fn recv_text(world: &Comm, from: i32, tag: i32) -> Result<String, Error> {
    let mut n = [0u64];
    world.recv(&mut n, from, tag)?;
    let mut bytes = vec![0u8; n[0] as usize];
    world.recv(&mut bytes, from, tag)?;
    Ok(String::from_utf8(bytes).expect("a port name is text"))
}

pub fn ports(world: &Comm, universe: &Universe) -> Result<(), Error> {
    let (me, size) = (world.rank(), world.size());
    let job = universe.job_id();
    let own = universe.self_comm();
    let bad = connect(&job, &own, "oxmpi-port:elsewhere:0:1", 0).unwrap_err();
    assert_eq!(bad.class(), ErrorClass::Port, "{bad}");
    if size < 2 {
        let port = open_port(&job, &own)?;
        close_port(&job, &own, &port)?;
        let again = close_port(&job, &own, &port).unwrap_err();
        assert_eq!(again.class(), ErrorClass::Port, "{again}");
        return Ok(());
    }

    // Rank 0 serves every other rank on one port, in whatever order they come.
    if me == 0 {
        let port = open_port(&job, &own)?;
        for r in 1..size {
            send_text(world, &port, r, 1)?;
        }
        let mut seen = Vec::new();
        for _ in 1..size {
            let inter = accept(&job, &own, &port, 0)?;
            assert_eq!((inter.size(), inter.remote_size()?), (1, 1));
            let who = inter.remote_group()?.world_ranks()[0] as i32;
            let mut got = [-1i32];
            inter.recv(&mut got, 0, 5)?;
            assert_eq!(got[0], who * 10, "the connector says who it is");
            inter.send(&[who * 100], 0, 6)?;
            seen.push(who);
            inter.free()?;
        }
        seen.sort_unstable();
        assert_eq!(seen, (1..size).collect::<Vec<_>>());
        close_port(&job, &own, &port)?;
    } else {
        let port = recv_text(world, 0, 1)?;
        let inter = connect(&job, &own, &port, 0)?;
        assert_eq!(inter.remote_group()?.world_ranks(), &[0]);
        inter.send(&[me * 10], 0, 5)?;
        let mut got = [-1i32];
        inter.recv(&mut got, 0, 6)?;
        assert_eq!(got[0], me * 100);
        inter.free()?;
    }
    world.barrier()?;

    // Groups: the odd ranks accept at their last rank, the even ranks
    // connect from theirs; the port goes through the name service.
    let color = me % 2;
    let half = world.split(color, me)?.expect("every rank has a color");
    let service = "oxmpi-tests-ports";
    let last = half.size() - 1;
    let inter = if color == 1 {
        let mut port = String::new();
        if half.rank() == last {
            port = open_port(&job, &own)?;
            universe.publish_name(service, &port)?;
            world.send(&[0u8], 0, 2)?;
        }
        let inter = accept(&job, &half, &port, last)?;
        if half.rank() == last {
            universe.unpublish_name(service)?;
            close_port(&job, &own, &port)?;
        }
        inter
    } else {
        let mut port = String::new();
        if me == 0 {
            let mut ready = [0u8];
            world.recv(&mut ready, oxmpi::ANY_SOURCE, 2)?;
            port = universe.lookup_name(service)?;
        }
        connect(&job, &half, &port, 0)?
    };
    let theirs: Vec<usize> = (0..size as usize)
        .filter(|w| w % 2 != color as usize)
        .collect();
    assert_eq!(inter.remote_group()?.world_ranks(), &theirs[..]);
    let mut sum = [0i64];
    inter.allreduce(&[i64::from(me)], &mut sum, &Op::SUM)?;
    assert_eq!(sum[0], theirs.iter().map(|&w| w as i64).sum::<i64>());
    let all = inter.merge(color == 1)?;
    assert_eq!(all.size(), size);
    let mut total = [0i64];
    all.allreduce(&[i64::from(me)], &mut total, &Op::SUM)?;
    assert_eq!(total[0], i64::from(size * (size - 1) / 2));
    all.free()?;
    inter.free()?;
    let gone = universe.lookup_name(service).unwrap_err();
    assert_eq!(gone.class(), ErrorClass::Name, "{gone}");

    // Join over a loopback socket.
    if me < 2 {
        let stream = if me == 0 {
            let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
            let port = listener.local_addr().expect("address").port();
            world.send(&[port], 1, 3)?;
            listener.accept().expect("accept").0
        } else {
            let mut port = [0u16];
            world.recv(&mut port, 0, 3)?;
            TcpStream::connect(("127.0.0.1", port[0])).expect("connect")
        };
        let inter = join(&job, &own, stream.as_raw_fd())?;
        assert_eq!(inter.remote_group()?.world_ranks(), &[1 - me as usize]);
        let mut got = [-1i32];
        inter.sendrecv(&[me], 0, 7, &mut got, 0, 7)?;
        assert_eq!(got[0], 1 - me);
        inter.free()?;
    }
    world.barrier()
}
