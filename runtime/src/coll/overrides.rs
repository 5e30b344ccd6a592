//! The per-collective algorithm overrides, `OXMPI_<COLL>_ALGO`: each takes
//! only the names in its collective's list of the registry, so an unknown
//! name is an error listing that collective's algorithms, never a silent
//! fallback. (A known algorithm that does not apply to a call falls back to
//! the cost model's choice, logged: see [`super::select`].)

use super::algos::{allgather, allgatherv, allreduce, alltoall, bcast, gather, reduce};
use super::algos::{reduce_scatter, scan, scatter, AlgoInfo, Coll};
use crate::config::{Entry, Kind, Setting};

/// The names of `algos`, as a constant.
const fn names<const N: usize>(algos: &[AlgoInfo]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = algos[i].name;
        i += 1;
    }
    out
}

macro_rules! coll_override {
    ($name:ident, $short:literal, $env:literal, $coll:literal, $table:path) => {
        #[doc = concat!("Forces the ", $coll, " algorithm (`", $env, "`; empty: chosen by the cost model).")]
        pub static $name: Setting<Vec<String>> = Setting::new(Entry {
            name: $short,
            env: $env,
            default: "",
            doc: concat!(
                "force the ",
                $coll,
                " algorithm (falls back, logged, when it does not apply)"
            ),
            kind: Kind::List({
                const NAMES: [&str; $table.len()] = names($table);
                &NAMES
            }),
        });
    };
}

coll_override!(
    ALLREDUCE_ALGO,
    "allreduce_algo",
    "OXMPI_ALLREDUCE_ALGO",
    "allreduce",
    allreduce::ALL
);
coll_override!(
    BCAST_ALGO,
    "bcast_algo",
    "OXMPI_BCAST_ALGO",
    "bcast",
    bcast::ALL
);
coll_override!(
    REDUCE_ALGO,
    "reduce_algo",
    "OXMPI_REDUCE_ALGO",
    "reduce",
    reduce::ALL
);
coll_override!(
    ALLGATHER_ALGO,
    "allgather_algo",
    "OXMPI_ALLGATHER_ALGO",
    "allgather",
    allgather::ALL
);
coll_override!(
    GATHER_ALGO,
    "gather_algo",
    "OXMPI_GATHER_ALGO",
    "gather",
    gather::ALL
);
coll_override!(
    GATHERV_ALGO,
    "gatherv_algo",
    "OXMPI_GATHERV_ALGO",
    "gatherv",
    gather::ALL_V
);
coll_override!(
    SCATTER_ALGO,
    "scatter_algo",
    "OXMPI_SCATTER_ALGO",
    "scatter",
    scatter::ALL
);
coll_override!(
    SCATTERV_ALGO,
    "scatterv_algo",
    "OXMPI_SCATTERV_ALGO",
    "scatterv",
    scatter::ALL_V
);
coll_override!(
    ALLGATHERV_ALGO,
    "allgatherv_algo",
    "OXMPI_ALLGATHERV_ALGO",
    "allgatherv",
    allgatherv::ALL
);
coll_override!(
    ALLTOALL_ALGO,
    "alltoall_algo",
    "OXMPI_ALLTOALL_ALGO",
    "alltoall",
    alltoall::ALL
);
coll_override!(
    ALLTOALLV_ALGO,
    "alltoallv_algo",
    "OXMPI_ALLTOALLV_ALGO",
    "alltoallv",
    alltoall::ALL_V
);
coll_override!(
    ALLTOALLW_ALGO,
    "alltoallw_algo",
    "OXMPI_ALLTOALLW_ALGO",
    "alltoallw",
    alltoall::ALL_V
);
coll_override!(
    REDUCE_SCATTER_ALGO,
    "reduce_scatter_algo",
    "OXMPI_REDUCE_SCATTER_ALGO",
    "reduce_scatter",
    reduce_scatter::ALL
);
coll_override!(
    REDUCE_SCATTER_BLOCK_ALGO,
    "reduce_scatter_block_algo",
    "OXMPI_REDUCE_SCATTER_BLOCK_ALGO",
    "reduce_scatter_block",
    reduce_scatter::ALL
);
coll_override!(SCAN_ALGO, "scan_algo", "OXMPI_SCAN_ALGO", "scan", scan::ALL);
coll_override!(
    EXSCAN_ALGO,
    "exscan_algo",
    "OXMPI_EXSCAN_ALGO",
    "exscan",
    scan::ALL
);

/// Every override, in [`Coll::ALL`]'s order (the part of `oxrun --info`
/// after the lower layers' tunables).
///
/// ```
/// use oxmpi::coll::select::{Coll, OVERRIDES};
/// assert_eq!(OVERRIDES.len(), Coll::ALL.len());
/// assert!(OVERRIDES.iter().all(|e| e.env.ends_with("_ALGO") && e.default.is_empty()));
/// ```
pub static OVERRIDES: &[&Entry] = &[
    &ALLREDUCE_ALGO.entry,
    &BCAST_ALGO.entry,
    &REDUCE_ALGO.entry,
    &ALLGATHER_ALGO.entry,
    &GATHER_ALGO.entry,
    &GATHERV_ALGO.entry,
    &SCATTER_ALGO.entry,
    &SCATTERV_ALGO.entry,
    &ALLGATHERV_ALGO.entry,
    &ALLTOALL_ALGO.entry,
    &ALLTOALLV_ALGO.entry,
    &ALLTOALLW_ALGO.entry,
    &REDUCE_SCATTER_ALGO.entry,
    &REDUCE_SCATTER_BLOCK_ALGO.entry,
    &SCAN_ALGO.entry,
    &EXSCAN_ALGO.entry,
];

impl Coll {
    /// Its override.
    pub(crate) fn setting(self) -> &'static Setting<Vec<String>> {
        match self {
            Coll::Allreduce => &ALLREDUCE_ALGO,
            Coll::Bcast => &BCAST_ALGO,
            Coll::Reduce => &REDUCE_ALGO,
            Coll::Allgather => &ALLGATHER_ALGO,
            Coll::Gather => &GATHER_ALGO,
            Coll::Gatherv => &GATHERV_ALGO,
            Coll::Scatter => &SCATTER_ALGO,
            Coll::Scatterv => &SCATTERV_ALGO,
            Coll::Allgatherv => &ALLGATHERV_ALGO,
            Coll::Alltoall => &ALLTOALL_ALGO,
            Coll::Alltoallv => &ALLTOALLV_ALGO,
            Coll::Alltoallw => &ALLTOALLW_ALGO,
            Coll::ReduceScatter => &REDUCE_SCATTER_ALGO,
            Coll::ReduceScatterBlock => &REDUCE_SCATTER_BLOCK_ALGO,
            Coll::Scan => &SCAN_ALGO,
            Coll::Exscan => &EXSCAN_ALGO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::get_from;

    #[test]
    fn each_override_accepts_its_collectives_algorithms_only() {
        for &coll in Coll::ALL {
            let setting = coll.setting();
            for algo in coll.algos() {
                let got = get_from(setting, |_: &str| Ok(Some(algo.name.to_string())));
                assert_eq!(got, Ok(vec![algo.name.to_string()]), "{coll:?}");
            }
            let err = get_from(setting, |_: &str| Ok(Some("nonsense".to_string())))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(setting.entry.env) && err.contains("nonsense"),
                "{err}"
            );
            let listed = format!("list of {}", coll.algo_names().replace(", ", "|"));
            assert!(err.contains(&listed), "{coll:?}: {err}");
        }
    }
}
