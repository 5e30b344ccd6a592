//! The rank programs of the point-to-point suite. Each panics on any
//! deviation from MPI semantics, which makes its rank exit non-zero and the
//! job fail through oxrun.

use std::time::{Duration, Instant};

use oxmpi::{wait_all, wait_any, wait_some, Comm, Error, ANY_SOURCE, ANY_TAG, PROC_NULL};

fn pattern(i: usize) -> u8 {
    (i.wrapping_mul(7).wrapping_add(3) % 251) as u8
}

fn basic(world: &Comm) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    // Ring with status checks.
    let mut got = [0i32; 3];
    let r = world.irecv(&mut got, prev, 5)?;
    world.send(&[rank, rank * 2, -rank], next, 5)?;
    let s = r.wait()?;
    assert_eq!((s.source, s.tag, s.count), (prev, 5, 12));
    assert_eq!(got, [prev, prev * 2, -prev]);
    // Wildcards: every rank sends to rank 0 with tag = its rank.
    if rank == 0 {
        let mut seen = vec![false; size as usize];
        for _ in 1..size {
            let mut v = [0i32];
            let s = world.recv(&mut v, ANY_SOURCE, ANY_TAG)?;
            assert_eq!(s.tag, s.source);
            assert_eq!(v[0], s.source * 100);
            assert!(!seen[s.source as usize], "duplicate from {}", s.source);
            seen[s.source as usize] = true;
        }
    } else {
        world.send(&[rank * 100], 0, rank)?;
    }
    // Keep the next messages out of rank 0's wildcard receives above.
    world.barrier()?;
    // Zero-byte messages.
    let mut none: [u8; 0] = [];
    let r = world.irecv(&mut none, prev, 6)?;
    world.send::<u8>(&[], next, 6)?;
    let s = r.wait()?;
    assert_eq!((s.source, s.tag, s.count), (prev, 6, 0));
    // PROC_NULL.
    world.send(&[1u8], PROC_NULL, 0)?;
    let mut b = [9u8];
    let s = world.recv(&mut b, PROC_NULL, 3)?;
    assert_eq!((s.source, s.tag, s.count, b[0]), (PROC_NULL, ANY_TAG, 0, 9));
    // To self.
    let me = world.rank();
    let r = world.isend(&[42u16, 43], me, 9)?;
    let mut back = [0u16; 2];
    world.recv(&mut back, me, 9)?;
    r.wait()?;
    assert_eq!(back, [42, 43]);
    Ok(())
}

fn order(world: &Comm) -> Result<(), Error> {
    if world.size() < 2 || world.rank() > 1 {
        return Ok(());
    }
    const N: u32 = 300;
    if world.rank() == 0 {
        for i in 0..N {
            world.send(&[i], 1, (i % 3) as i32)?;
        }
    } else {
        // Receive tag 2 first: must get the earliest message with tag 2.
        let mut v = [0u32];
        world.recv(&mut v, 0, 2)?;
        assert_eq!(v[0], 2);
        // Then everything else in order with ANY_TAG (skipping the one taken).
        let mut expect = (0..N).filter(|&i| i != 2);
        for _ in 1..N {
            let s = world.recv(&mut v, 0, ANY_TAG)?;
            let e = expect.next().unwrap();
            assert_eq!(v[0], e, "non-overtaking violated");
            assert_eq!(s.tag, (e % 3) as i32);
        }
    }
    Ok(())
}

fn flood(world: &Comm) -> Result<(), Error> {
    const N: u64 = 20_000;
    let size = world.size();
    if world.rank() == 0 {
        let mut next = vec![0u64; size as usize];
        let mut v = [0u64; 2];
        for _ in 0..N * (size as u64 - 1) {
            let s = world.recv(&mut v, ANY_SOURCE, 1)?;
            let src = s.source as usize;
            assert_eq!(v[0], src as u64);
            assert_eq!(v[1], next[src], "messages from rank {src} out of order");
            next[src] += 1;
        }
        assert!(next[1..].iter().all(|&n| n == N));
    } else {
        for i in 0..N {
            world.send(&[world.rank() as u64, i], 0, 1)?;
        }
    }
    Ok(())
}

fn preposted(world: &Comm) -> Result<(), Error> {
    if world.size() < 2 || world.rank() > 1 {
        return Ok(());
    }
    const N: usize = 512;
    if world.rank() == 1 {
        let mut bufs = vec![[0u32; 4]; N];
        let reqs = bufs
            .iter_mut()
            .enumerate()
            .map(|(tag, b)| world.irecv(b, 0, tag as i32))
            .collect::<Result<Vec<_>, _>>()?;
        world.send(&[1u8], 0, 1000)?; // all posted
        let statuses = wait_all(reqs)?;
        for (tag, (b, s)) in bufs.iter().zip(&statuses).enumerate() {
            assert_eq!(s.tag, tag as i32);
            assert_eq!(*b, [tag as u32; 4]);
        }
    } else {
        let mut go = [0u8];
        world.recv(&mut go, 1, 1000)?;
        for tag in (0..N).rev() {
            world.send(&[tag as u32; 4], 1, tag as i32)?;
        }
    }
    Ok(())
}

fn large(world: &Comm) -> Result<(), Error> {
    if world.size() < 2 || world.rank() > 1 {
        return Ok(());
    }
    let peer = 1 - world.rank();
    for &len in &[65_535usize, 65_536, 65_537, 1 << 20, 64 << 20] {
        let data: Vec<u8> = (0..len).map(pattern).collect();
        let mut back = vec![0u8; len];
        if world.rank() == 0 {
            world.send(&data, peer, 1)?;
            let s = world.recv(&mut back, peer, 2)?;
            assert_eq!(s.count, len);
        } else {
            // Late receive: the sender's offer waits as an unexpected message.
            std::thread::sleep(Duration::from_millis(20));
            let s = world.recv(&mut back, peer, 1)?;
            assert_eq!(s.count, len);
            world.send(&back, peer, 2)?;
        }
        if let Some(i) = back.iter().zip(&data).position(|(a, b)| a != b) {
            panic!("{len}-byte message differs at byte {i}");
        }
    }
    Ok(())
}

fn ssend(world: &Comm) -> Result<(), Error> {
    if world.size() < 2 || world.rank() > 1 {
        return Ok(());
    }
    for len in [8usize, 1 << 20] {
        let data = vec![7u8; len];
        if world.rank() == 0 {
            let mut r = world.issend(&data, 1, 1)?;
            std::thread::sleep(Duration::from_millis(100));
            assert!(
                r.test()?.is_none(),
                "synchronous send of {len} B completed before it was matched"
            );
            world.send(&[1u8], 1, 2)?;
            r.wait()?;
        } else {
            let mut go = [0u8];
            world.recv(&mut go, 0, 2)?;
            let mut b = vec![0u8; len];
            world.recv(&mut b, 0, 1)?;
            assert_eq!(b, data);
        }
    }
    Ok(())
}

fn probe(world: &Comm) -> Result<(), Error> {
    if world.size() < 2 || world.rank() > 1 {
        return Ok(());
    }
    if world.rank() == 0 {
        world.send(&[1u32; 10], 1, 4)?;
        world.send(&[2u32; 20], 1, 4)?;
        world.send(&[3u8; 100_000], 1, 5)?;
    } else {
        let s = world.probe(0, 5)?;
        assert_eq!((s.source, s.tag, s.count), (0, 5, 100_000));
        let mut big = vec![0u8; s.count];
        world.recv(&mut big, 0, 5)?;
        assert!(big.iter().all(|&b| b == 3));
        let s = loop {
            if let Some(s) = world.iprobe(ANY_SOURCE, ANY_TAG)? {
                break s;
            }
        };
        assert_eq!((s.tag, s.count), (4, 40));
        // Matched probe takes the first message; a normal receive then gets the second.
        let (msg, s) = world.mprobe(0, 4)?;
        assert_eq!(s.count, 40);
        let mut second = [0u32; 20];
        world.recv(&mut second, 0, 4)?;
        assert_eq!(second, [2; 20]);
        let mut first = [0u32; 10];
        msg.recv(&mut first)?;
        assert_eq!(first, [1; 10]);
        assert!(world.improbe(0, 4)?.is_none());
    }
    Ok(())
}

fn truncate(world: &Comm) -> Result<(), Error> {
    if world.size() < 2 || world.rank() > 1 {
        return Ok(());
    }
    for len in [100usize, 1 << 20] {
        if world.rank() == 0 {
            world.send(&vec![5u8; len], 1, 1)?;
        } else {
            let mut small = vec![0u8; len / 10];
            match world.recv(&mut small, 0, 1) {
                Err(Error::Truncated {
                    message_len,
                    buffer_len,
                    status,
                }) => {
                    assert_eq!((message_len, buffer_len), (len, len / 10));
                    assert_eq!((status.source, status.tag, status.count), (0, 1, len / 10));
                    assert!(small.iter().all(|&b| b == 5));
                }
                other => panic!("expected truncation, got {other:?}"),
            }
        }
    }
    Ok(())
}

fn cancel(world: &Comm) -> Result<(), Error> {
    let mut b = [0u8; 4];
    let r = world.irecv(&mut b, ANY_SOURCE, 77)?;
    r.cancel();
    let s = r.wait()?;
    assert!(s.cancelled);
    // A later message with that tag is not swallowed by the cancelled receive.
    let me = world.rank();
    world.send(&[1u8, 2, 3, 4], me, 77)?;
    let mut c = [0u8; 4];
    world.recv(&mut c, me, 77)?;
    assert_eq!(c, [1, 2, 3, 4]);
    Ok(())
}

fn waits(world: &Comm) -> Result<(), Error> {
    let me = world.rank();
    let mut bufs = [[0u32; 1]; 4];
    let mut reqs: Vec<_> = bufs
        .iter_mut()
        .enumerate()
        .map(|(i, b)| world.irecv(b, me, i as i32).unwrap())
        .collect();
    assert!(oxmpi::test_any(&mut reqs)?.is_none());
    assert!(oxmpi::test_all(&mut reqs)?.is_none());
    world.send(&[30u32], me, 3)?;
    let (i, s) = wait_any(&mut reqs)?.expect("one completes");
    assert_eq!((i, s.tag), (3, 3));
    world.send(&[10u32], me, 1)?;
    world.send(&[0u32], me, 0)?;
    let mut done = Vec::new();
    while done.len() < 2 {
        done.extend(wait_some(&mut reqs)?.into_iter().map(|(i, _)| i));
    }
    done.sort();
    assert_eq!(done, [0, 1]);
    world.send(&[20u32], me, 2)?;
    let all = match oxmpi::test_all(&mut reqs)? {
        Some(v) => v,
        None => wait_all(std::mem::take(&mut reqs))?,
    };
    drop(reqs);
    assert_eq!(all.len(), 4);
    assert!(wait_any(&mut [])?.is_none());
    assert_eq!(bufs, [[0], [10], [20], [30]]);
    Ok(())
}

fn persistent(world: &Comm) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    let mut out = [0i64; 8];
    let mut inb = [0i64; 8];
    for round in 0..10i64 {
        out.iter_mut().for_each(|v| *v = round * 1000 + rank as i64);
        let mut s = world.send_init(&out, next, 3)?;
        let mut r = world.recv_init(&mut inb, prev, 3)?;
        r.start()?;
        s.start()?;
        assert!(s.start().is_err(), "starting an active request must fail");
        s.wait()?;
        r.wait()?;
        drop(r);
        assert!(inb.iter().all(|&v| v == round * 1000 + prev as i64));
    }
    Ok(())
}

fn errors(world: &Comm) -> Result<(), Error> {
    let size = world.size();
    let e = world.send(&[1u8], size, 0).unwrap_err();
    assert!(
        matches!(e, Error::InvalidRank { arg: "dest", value, .. } if value == size),
        "{e}"
    );
    assert!(e.to_string().contains(&format!("invalid rank {size}")));
    let e = world.send(&[1u8], 0, -5).unwrap_err();
    assert!(matches!(e, Error::InvalidTag { value: -5, .. }), "{e}");
    let e = world.send(&[1u8], 0, ANY_TAG).unwrap_err();
    assert!(matches!(e, Error::InvalidTag { .. }), "{e}");
    let mut b = [0u8];
    let e = world.recv(&mut b, 99, 0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidRank {
                arg: "source",
                value: 99,
                ..
            }
        ),
        "{e}"
    );
    let e = world.recv(&mut b, 0, -7).unwrap_err();
    assert!(matches!(e, Error::InvalidTag { value: -7, .. }), "{e}");
    // SAFETY: a null buffer with a count is refused before it is used.
    let e = unsafe { world.isend_raw(std::ptr::null(), 4, 0, 0, false) }
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { arg: "buf", .. }),
        "{e}"
    );
    // SAFETY: as above.
    let e = unsafe { world.irecv_raw(std::ptr::null_mut(), 4, 0, 0) }
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { arg: "buf", .. }),
        "{e}"
    );
    Ok(())
}

fn threads(world: &Comm) -> Result<(), Error> {
    let (rank, size) = (world.rank(), world.size());
    let next = (rank + 1) % size;
    let prev = (rank + size - 1) % size;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let world = world.clone();
                s.spawn(move || -> Result<(), Error> {
                    for i in 0..1000u32 {
                        let mut v = [0u32; 2];
                        let r = world.irecv(&mut v, prev, t)?;
                        world.send(&[t as u32, i], next, t)?;
                        r.wait()?;
                        assert_eq!(v, [t as u32, i], "thread {t} message {i}");
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("thread panicked"))
    })
}

fn kill9(world: &Comm) -> Result<(), Error> {
    world.barrier()?;
    if world.rank() == 1 {
        std::thread::sleep(Duration::from_millis(200));
        // SAFETY: raising SIGKILL on ourselves.
        unsafe { nix::libc::kill(nix::libc::getpid(), nix::libc::SIGKILL) };
    }
    let start = Instant::now();
    let mut b = [0u8];
    let _ = world.recv(&mut b, 1, 0);
    panic!(
        "receive from a killed rank returned after {:?}",
        start.elapsed()
    );
}

/// Runs the role named `role`.
pub fn run(role: &str) {
    let (universe, _) = oxmpi::init_thread(oxmpi::Threading::Multiple).expect("init");
    let world = universe.world();
    let result = match role {
        "basic" => basic(&world),
        "order" => order(&world),
        "flood" => flood(&world),
        "preposted" => preposted(&world),
        "large" => large(&world),
        "ssend" => ssend(&world),
        "probe" => probe(&world),
        "truncate" => truncate(&world),
        "cancel" => cancel(&world),
        "waits" => waits(&world),
        "persistent" => persistent(&world),
        "errors" => errors(&world),
        "threads" => threads(&world),
        "kill9" => kill9(&world),
        other => panic!("unknown role {other}"),
    };
    if let Err(e) = result {
        panic!("rank {} role {role}: {e}", world.rank());
    }
    universe.finalize().expect("finalize");
}
