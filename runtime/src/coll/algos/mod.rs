//! Collective algorithms: one file per algorithm, each with its
//! applicability as data ([`AlgoInfo`]) and a `build` function that adds its
//! steps to a schedule.

pub mod allgather;
pub mod allreduce;
pub mod bcast;
pub mod reduce;

/// What an algorithm requires of the call.
#[derive(Debug, Clone, Copy)]
pub struct AlgoInfo {
    /// Name used by `OXMPI_<COLL>_ALGO` and in logs.
    pub name: &'static str,
    /// Only for commutative operations (it combines out of rank order).
    pub commutative_only: bool,
    /// Only for power-of-two rank counts.
    pub pow2_only: bool,
}

/// The facts selection looks at.
#[derive(Debug, Clone, Copy)]
pub struct Args {
    /// Ranks in the communicator.
    pub ranks: usize,
    /// Bytes per rank (the message size as nccl-tests counts it).
    pub bytes: usize,
    /// Whether the operation is commutative (true when there is none).
    pub commutative: bool,
}

impl AlgoInfo {
    /// Why this algorithm cannot run the call, or `Ok`.
    pub fn applicable(&self, a: &Args) -> Result<(), String> {
        if self.commutative_only && !a.commutative {
            return Err(format!("{} needs a commutative operation", self.name));
        }
        if self.pow2_only && !a.ranks.is_power_of_two() {
            return Err(format!(
                "{} needs a power-of-two number of ranks, not {}",
                self.name, a.ranks
            ));
        }
        Ok(())
    }
}
