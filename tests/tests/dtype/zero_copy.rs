//! Non-contiguous point-to-point without temporaries: vector, indexed and
//! struct (resized) types from below one ring cell to a few MiB, with
//! both sides non-contiguous, only the sender or only the receiver;
//! receives posted first or messages arriving unexpected; `ANY_SOURCE`;
//! truncation. Every result is checked byte by byte against serial
//! packing, and `stage::staged_bytes` proves that no temporary was used,
//! while a collective on the same types (which does stage) proves that
//! the counter counts.

use oxmpi::datatype::stage::staged_bytes;
use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
use oxmpi::{Comm, Error, ANY_SOURCE};

fn committed(t: Datatype) -> Result<Datatype, Error> {
    t.commit();
    Ok(t)
}

/// The layouts: one double every two; three int blocks of different
/// lengths out of order; a particle struct resized past a local field.
fn layouts() -> Result<Vec<(&'static str, Datatype)>, Error> {
    let f64_t = Datatype::basic(BasicType::Double);
    let int = Datatype::basic(BasicType::Int);
    let particle = Datatype::create_struct(
        &[3, 1, 1],
        &[0, 24, 32],
        &[
            f64_t.clone(),
            Datatype::basic(BasicType::Int64),
            f64_t.clone(),
        ],
    )?;
    Ok(vec![
        // Four doubles, one every two, and the next element 64 bytes on.
        (
            "vector",
            committed(Datatype::resized(
                &Datatype::vector(4, 1, 2, &f64_t)?,
                0,
                64,
            )?)?,
        ),
        (
            "indexed",
            committed(Datatype::indexed(&[3, 1, 2], &[4, 0, 9], &int)?)?,
        ),
        ("struct", committed(Datatype::resized(&particle, 0, 48)?)?),
    ])
}

/// Which sides use the non-contiguous layout (the other sends or
/// receives the packed bytes as a contiguous array).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sides {
    Both,
    SendOnly,
    RecvOnly,
}

/// Bytes of a buffer holding `count` elements of `t`.
fn span(t: &Datatype, count: usize) -> Result<usize, Error> {
    Ok(t.data_span(count)?.map_or(0, |r| r.end as usize))
}

/// Rank `rank`'s data for message `tag`: bytes that differ everywhere.
fn fill(rank: i32, tag: i32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u32)
                .wrapping_mul(2_654_435_761)
                .wrapping_add((rank * 977 + tag) as u32) as u8
                | 1
        })
        .collect()
}

fn packed(t: &Datatype, count: usize, buf: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = vec![0u8; t.pack_size(count)?];
    t.pack(buf, count, &mut out, &mut 0)?;
    Ok(out)
}

/// What a receive buffer of `len` bytes (sentinel 0) holds once `bytes`
/// packed bytes were unpacked into `count` elements.
fn expected(t: &Datatype, count: usize, bytes: &[u8], len: usize) -> Result<Vec<u8>, Error> {
    let mut out = vec![0u8; len];
    let whole = bytes.len() / t.size().max(1);
    t.unpack(bytes, &mut 0, &mut out, whole.min(count))?;
    let rest = &bytes[whole * t.size()..];
    if !rest.is_empty() {
        // A partial element: the leading bytes of the next one.
        // SAFETY: `out` holds `count` elements, and `whole` < `count` here.
        unsafe { t.unpack_raw(out.as_mut_ptr(), count, whole * t.size(), rest) }?;
    }
    Ok(out)
}

/// One message of `count` elements around the ring, received into
/// `recv_count` elements (fewer: truncation).
fn one(
    world: &Comm,
    t: &Datatype,
    count: usize,
    recv_count: usize,
    sides: Sides,
    unexpected: bool,
    tag: i32,
) -> Result<(), Error> {
    let (me, p) = (world.rank(), world.size());
    let (left, right) = ((me + p - 1) % p, (me + 1) % p);
    let mine = fill(me, tag, span(t, count)?);
    let mine_packed = packed(t, count, &mine)?;
    let theirs_packed = packed(t, count, &fill(left, tag, span(t, count)?))?;
    let typed_send = sides != Sides::RecvOnly;
    let typed_recv = sides != Sides::SendOnly;
    let rlen = if typed_recv {
        span(t, recv_count)?
    } else {
        t.pack_size(recv_count)?
    };
    let mut into = vec![0u8; rlen];
    let bytes_t = Datatype::basic(BasicType::Byte);
    let send_view = if typed_send {
        View::new(&mine, t, count)?
    } else {
        View::new(&mine_packed, &bytes_t, mine_packed.len())?
    };
    let source = if unexpected { ANY_SOURCE } else { left };
    let outcome = {
        let recv_view = if typed_recv {
            ViewMut::new(&mut into, t, recv_count)?
        } else {
            ViewMut::new(&mut into, &bytes_t, rlen)?
        };
        if unexpected {
            // Sent before the receive is posted (eager: all of it; else the Rts).
            let s = world.isend_view(&send_view, right, tag)?;
            world.barrier()?;
            let mut recv_view = recv_view;
            let r = world.recv_view(&mut recv_view, source, tag);
            s.wait()?;
            r
        } else {
            let r = world.irecv_view(recv_view, source, tag)?;
            world.barrier()?;
            if tag % 2 == 0 {
                world.send_view(&send_view, right, tag)?;
            } else {
                world.ssend_view(&send_view, right, tag)?;
            }
            r.wait()
        }
    };
    let cap = t.pack_size(recv_count)?;
    let st = match outcome {
        Ok(st) if recv_count >= count => st,
        Err(Error::Truncated {
            status,
            message_len,
            ..
        }) if recv_count < count => {
            assert_eq!(message_len, theirs_packed.len());
            status
        }
        other => panic!("{count} -> {recv_count} elements ({sides:?}): {other:?}"),
    };
    let got = theirs_packed.len().min(cap);
    assert_eq!((st.source, st.tag, st.count), (left, tag, got));
    if typed_recv {
        if recv_count == count {
            assert_eq!(st.count_in(t), Some(count));
        }
        let want = expected(t, recv_count, &theirs_packed[..got], rlen)?;
        assert!(
            into == want,
            "{count} elements ({sides:?}, unexpected {unexpected}): data differs"
        );
    } else {
        assert!(
            into[..got] == theirs_packed[..got],
            "{count} elements ({sides:?}): bytes differ"
        );
    }
    Ok(())
}

/// Every layout, size, side and arrival order; then the counter checks.
pub fn transfers(world: &Comm) -> Result<(), Error> {
    let before = staged_bytes();
    let mut tag = 0;
    for (name, t) in layouts()? {
        // Packed sizes: inside one 8 KiB cell, several cells, past the
        // 64 KiB eager limit (rendezvous), a few MiB.
        for bytes in [1000usize, 30_000, 200_000, 3 << 20] {
            let count = bytes.div_ceil(t.size());
            for sides in [Sides::Both, Sides::SendOnly, Sides::RecvOnly] {
                for unexpected in [false, true] {
                    tag += 1;
                    one(world, &t, count, count, sides, unexpected, tag)
                        .map_err(|e| Error::State(format!("{name}, {bytes} bytes: {e}")))?;
                }
            }
            // Truncation: a receive with room for about two thirds.
            for sides in [Sides::Both, Sides::RecvOnly] {
                for unexpected in [false, true] {
                    tag += 1;
                    one(world, &t, count, count * 2 / 3, sides, unexpected, tag)?;
                }
            }
        }
    }
    assert_eq!(
        staged_bytes(),
        before,
        "rank {}: non-contiguous point-to-point used a temporary",
        world.rank()
    );
    // The counter counts: a broadcast of a vector view stages its buffer.
    let (_, t) = &layouts()?[0];
    let mut buf = fill(world.rank(), 0, span(t, 100)?);
    world.bcast_view(&mut ViewMut::new(&mut buf, t, 100)?, 0)?;
    assert!(
        staged_bytes() >= before + t.pack_size(100)? as u64,
        "a staged collective went uncounted"
    );
    world.barrier()
}
