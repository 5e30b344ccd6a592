//! Communicators: a group of ranks and the context ids that keep their
//! traffic apart. Locality is decided when the runtime starts (the
//! transport knows which world ranks it reaches).

mod barrier;
mod p2p;

use std::sync::Arc;

use crate::error::Error;
use crate::progress::Rt;
use crate::status::{ANY_SOURCE, ANY_TAG, PROC_NULL, TAG_UB};

/// A communicator.
///
/// ```no_run
/// let universe = oxmpi::init()?;
/// let world = universe.world();
/// println!("rank {} of {}", world.rank(), world.size());
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Clone)]
pub struct Comm {
    pub(crate) inner: Arc<CommInner>,
}

pub(crate) struct CommInner {
    pub(crate) rt: Rt,
    /// Context id of point-to-point traffic; collectives use `context + 1`.
    pub(crate) context: u32,
    pub(crate) rank: i32,
    /// World rank of each communicator rank.
    pub(crate) world_of: Vec<usize>,
}

/// Context ids of the predefined communicators (each takes two: p2p, collective).
pub(crate) const WORLD_CONTEXT: u32 = 0;
/// `MPI_COMM_SELF`.
pub(crate) const SELF_CONTEXT: u32 = 2;

impl Comm {
    pub(crate) fn new(rt: Rt, context: u32, rank: i32, world_of: Vec<usize>) -> Comm {
        Comm {
            inner: Arc::new(CommInner {
                rt,
                context,
                rank,
                world_of,
            }),
        }
    }

    /// This process's rank in the communicator.
    pub fn rank(&self) -> i32 {
        self.inner.rank
    }

    /// Number of ranks in the communicator.
    pub fn size(&self) -> i32 {
        self.inner.world_of.len() as i32
    }

    /// Checks a destination rank; `Ok(None)` for `PROC_NULL`.
    pub(crate) fn dest(&self, arg: &'static str, rank: i32) -> Result<Option<usize>, Error> {
        if rank == PROC_NULL {
            return Ok(None);
        }
        match usize::try_from(rank)
            .ok()
            .and_then(|r| self.inner.world_of.get(r))
        {
            Some(&world) => Ok(Some(world)),
            None => Err(Error::InvalidRank {
                arg,
                value: rank,
                size: self.size(),
            }),
        }
    }

    /// Checks a receive's source (a rank, `ANY_SOURCE` or `PROC_NULL`).
    pub(crate) fn source(&self, rank: i32) -> Result<(), Error> {
        if rank == ANY_SOURCE || rank == PROC_NULL || (0..self.size()).contains(&rank) {
            Ok(())
        } else {
            Err(Error::InvalidRank {
                arg: "source",
                value: rank,
                size: self.size(),
            })
        }
    }

    pub(crate) fn send_tag(tag: i32) -> Result<(), Error> {
        if (0..=TAG_UB).contains(&tag) {
            Ok(())
        } else {
            Err(Error::InvalidTag {
                arg: "tag",
                value: tag,
                allows_any: false,
            })
        }
    }

    pub(crate) fn recv_tag(tag: i32) -> Result<(), Error> {
        if tag == ANY_TAG || (0..=TAG_UB).contains(&tag) {
            Ok(())
        } else {
            Err(Error::InvalidTag {
                arg: "tag",
                value: tag,
                allows_any: true,
            })
        }
    }

    pub(crate) fn rt(&self) -> &Rt {
        &self.inner.rt
    }
}
