//! Choosing an algorithm: applicability first, then the alpha-beta-gamma
//! cost model, then an explicit override (`OXMPI_<COLL>_ALGO`, falling back
//! with a logged reason when it does not apply). Decisions are cached per
//! communicator and size class; `OXMPI_DEBUG=coll` logs each new decision
//! with its predicted time. Pure apart from the cache and the log, so the
//! same function answers `oxrun --explain` for rank counts this machine
//! cannot run.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, OnceLock};

use super::algos::{self, AlgoInfo, Args};
use crate::config;
use crate::fast_hash::FastMap;

pub use super::algos::{choose, Choice, Coll};
pub use super::model::Model;
pub use super::overrides::OVERRIDES;

/// Every algorithm's prediction for a case, and the choice: what
/// `oxrun --explain` prints.
///
/// ```
/// use oxmpi::coll::algos::Args;
/// use oxmpi::coll::select::{explain, Coll, Model};
/// let a = Args::new(12, 4096, true);
/// let text = explain(Coll::Bcast, &a, &Model::SHM); // what `oxrun --explain` prints
/// assert!(text.starts_with("bcast of 4096 bytes"));
/// assert_eq!(text.matches("<- chosen").count(), 1);
/// ```
pub fn explain(coll: Coll, a: &Args, model: &Model) -> String {
    let choice = choose(coll, a, model, None);
    let mut out = format!(
        "{} of {} bytes ({}) on {} ranks{} ({}commutative op); model alpha={:.2e} s, beta={:.2e} s/B, gamma={:.2e} s/B\n",
        coll.name(),
        a.bytes,
        coll.bytes_meaning(),
        a.ranks,
        nodes_text(&a.layout),
        if a.commutative { "" } else { "non-" },
        model.alpha,
        model.beta,
        model.gamma
    );
    if a.layout.nodes > 1 {
        let _ = writeln!(
            out,
            "  between nodes: alpha={:.2e} s, beta={:.2e} s/B",
            model.inter_alpha, model.inter_beta
        );
    }
    for info in coll.algos() {
        let status = match info.applicable(a) {
            Ok(()) => format!(
                "{:>12.2} us{}",
                model.predict_algo(info, a) * 1e6,
                phases(info, a, model)
            ),
            Err(why) => format!("not applicable: {why}"),
        };
        let mark = if info.name == choice.algo.name {
            "  <- chosen"
        } else {
            ""
        };
        let _ = writeln!(out, "  {:<20} {status}{mark}", info.name);
    }
    out
}

/// `" (leaders: X, in nodes: Y)"`: the flat algorithms the phases of a
/// node-aware algorithm would use; empty for the others.
fn phases(info: &AlgoInfo, a: &Args, model: &Model) -> String {
    match info.phases {
        Some(phases) => {
            let (leaders, local) = phases(model, a);
            format!(" (leaders: {leaders}, in nodes: {local})")
        }
        None => String::new(),
    }
}

/// `" on N nodes (up to Q per node)"` for a multi-node layout, else empty.
fn nodes_text(l: &algos::Layout) -> String {
    if l.nodes < 2 {
        return String::new();
    }
    let mixed = if l.blocked { "" } else { ", not in blocks" };
    format!(
        " on {} nodes (up to {} per node{mixed})",
        l.nodes, l.per_node
    )
}

/// Cache key: (communicator context, collective, size class, commutative,
/// ranks, layout). A context id is reused after its communicator is freed,
/// perhaps by one of another size or layout: those are in the key too.
type CacheKey = (u32, u8, u32, bool, usize, algos::Layout);

/// Size classes: a size's bit length, 0..=64.
const CLASSES: usize = usize::BITS as usize + 1;

/// One communicator's selections by (collective, size class,
/// commutative), kept from their first use: on a given communicator the
/// selector's answer depends on nothing else, so repeated calls skip its
/// lock and table. The table is made at the first collective call.
#[derive(Debug, Default)]
pub(crate) struct Picks(OnceLock<Box<[AtomicPtr<AlgoInfo>]>>);

impl Picks {
    /// The kept choice for this call, or `pick`'s (then kept).
    #[inline]
    pub(crate) fn get_or(
        &self,
        coll: Coll,
        bytes: usize,
        commutative: bool,
        pick: impl FnOnce() -> &'static AlgoInfo,
    ) -> &'static AlgoInfo {
        let table = self.0.get_or_init(|| {
            (0..Coll::ALL.len() * 2 * CLASSES)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect()
        });
        let class = (usize::BITS - bytes.leading_zeros()) as usize;
        let slot = &table[(coll as usize * 2 + commutative as usize) * CLASSES + class];
        let kept = slot.load(Ordering::Acquire);
        if !kept.is_null() {
            // SAFETY: only `&'static AlgoInfo`s are stored.
            return unsafe { &*kept };
        }
        let info = pick();
        slot.store(std::ptr::from_ref(info).cast_mut(), Ordering::Release);
        info
    }
}

/// Per-process selection state: overrides read once, the model, the cache.
pub(crate) struct Selector {
    model: Model,
    forced: FastMap<u8, String>,
    debug: bool,
    cache: Mutex<FastMap<CacheKey, &'static AlgoInfo>>,
}

impl Selector {
    /// Reads the overrides; selects with `model` (the job's, see
    /// [`super::calibrate`]), logging decisions when `debug`.
    pub(crate) fn from_env(debug: bool, model: Model) -> Result<Selector, crate::Error> {
        let mut forced = FastMap::default();
        for &coll in Coll::ALL {
            if let Some(name) = config::get(coll.setting())?.into_iter().next() {
                forced.insert(coll as u8, name);
            }
        }
        Ok(Selector {
            model,
            forced,
            debug,
            cache: Mutex::new(FastMap::default()),
        })
    }

    /// The job's cost model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The algorithm for `coll` on a communicator with collective context `context`.
    pub(crate) fn pick(&self, context: u32, coll: Coll, a: &Args) -> &'static AlgoInfo {
        let class = usize::BITS - a.bytes.leading_zeros();
        let key = (context, coll as u8, class, a.commutative, a.ranks, a.layout);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(info) = cache.get(&key) {
            return info;
        }
        let choice = choose(
            coll,
            a,
            &self.model,
            self.forced.get(&(coll as u8)).map(String::as_str),
        );
        if self.debug {
            if let Some(why) = &choice.fallback {
                eprintln!("oxmpi[coll]: {why}; falling back to the cost model");
            }
            eprintln!(
                "oxmpi[coll]: {} {} B x {} ranks{} -> {} (predicted {:.2} us)",
                coll.name(),
                a.bytes,
                a.ranks,
                nodes_text(&a.layout),
                choice.algo.name,
                choice.predicted * 1e6
            );
        }
        cache.insert(key, choice.algo);
        choice.algo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(ranks: usize, bytes: usize, commutative: bool) -> Args {
        Args::new(ranks, bytes, commutative)
    }

    #[test]
    fn small_messages_favour_latency_large_favour_bandwidth() {
        let m = Model::SHM;
        // On one host, small calls go through the shared area.
        assert_eq!(
            choose(Coll::Allreduce, &args(8, 8, true), &m, None)
                .algo
                .name,
            "shm"
        );
        // Across hosts the area does not apply.
        let two_hosts = args(8, 8, true).on(crate::coll::nodes::Layout {
            nodes: 2,
            per_node: 4,
            blocked: true,
        });
        assert_ne!(
            choose(Coll::Allreduce, &two_hosts, &m, None).algo.name,
            "shm"
        );
        assert!(m
            .predict(Coll::Allreduce, "shm", &args(8, 64 << 10, true))
            .is_infinite());
        let big = choose(Coll::Allreduce, &args(8, 16 << 20, true), &m, None)
            .algo
            .name;
        assert!(big == "rabenseifner" || big == "ring", "{big}");
        // Bcast too while the payload fits the deep rings of small slots,
        // beyond them its tree measured faster (see bcast/shm.rs).
        assert_eq!(
            choose(Coll::Bcast, &args(8, 8, true), &m, None).algo.name,
            "shm"
        );
        assert_ne!(
            choose(Coll::Bcast, &args(8, 1024, true), &m, None)
                .algo
                .name,
            "shm"
        );
        assert_ne!(
            choose(Coll::Bcast, &args(8, 64 << 10, true), &m, None)
                .algo
                .name,
            "shm"
        );
    }

    #[test]
    fn forced_algorithms_fall_back_when_they_do_not_apply() {
        let m = Model::SHM;
        let c = choose(Coll::Allreduce, &args(4, 1 << 20, false), &m, Some("ring"));
        assert_ne!(c.algo.name, "ring");
        assert!(c
            .fallback
            .unwrap()
            .contains("needs a commutative operation"));
        let c = choose(
            Coll::Allgather,
            &args(6, 64, true),
            &m,
            Some("recursive_doubling"),
        );
        assert!(c.fallback.unwrap().contains("power-of-two"));
        let c = choose(Coll::Bcast, &args(6, 64, true), &m, Some("chain"));
        assert_eq!(c.algo.name, "chain");
        assert!(c.fallback.is_none());
    }

    #[test]
    fn every_collective_has_a_name_a_setting_and_an_unconditional_algorithm() {
        for &c in Coll::ALL {
            assert_eq!(Coll::from_name(c.name()), Some(c));
            assert_eq!(
                c.setting().entry.env,
                format!("OXMPI_{}_ALGO", c.name().to_uppercase())
            );
            assert!(
                c.algos()
                    .iter()
                    .any(|i| !i.pow2_only && !i.commutative_only),
                "{c:?}"
            );
            for info in c.algos() {
                assert!(c.setting().entry.kind.to_string().contains(info.name));
                // The shared area's entries only for what fits its slots.
                let bytes = if info.pattern == crate::coll::inter::Pattern::SharedArea {
                    64
                } else {
                    4096
                };
                let t = Model::SHM.predict(c, info.name, &args(6, bytes, true));
                assert!(t.is_finite() && t > 0.0, "{c:?} {}", info.name);
            }
        }
    }

    #[test]
    fn alltoall_follows_message_size_and_reduce_scatter_the_operation() {
        let m = Model::SHM;
        let pick = |c, a: Args| choose(c, &a, &m, None).algo.name;
        assert_eq!(pick(Coll::Alltoall, args(16, 16, true)), "shm");
        let two_hosts = args(16, 16, true).on(crate::coll::nodes::Layout {
            nodes: 2,
            per_node: 8,
            blocked: true,
        });
        assert_eq!(pick(Coll::Alltoall, two_hosts), "bruck");
        assert_eq!(pick(Coll::Alltoall, args(16, 4096, true)), "scattered");
        assert_eq!(pick(Coll::Alltoall, args(16, 1 << 20, true)), "pairwise");
        assert_eq!(pick(Coll::Alltoallv, args(16, 16, true)), "scattered");
        assert_eq!(
            pick(Coll::ReduceScatter, args(8, 1 << 16, true)),
            "recursive_halving"
        );
        assert_eq!(
            pick(Coll::ReduceScatter, args(8, 1 << 16, false)),
            "pairwise"
        );
        let c = choose(
            Coll::Allgatherv,
            &args(6, 64, true),
            &m,
            Some("recursive_doubling"),
        );
        assert_eq!(c.algo.name, "ring");
        assert!(c.fallback.unwrap().contains("power-of-two"));
    }

    #[test]
    fn explain_lists_every_algorithm() {
        let text = explain(Coll::Allreduce, &args(64, 1 << 20, true), &Model::SHM);
        for info in Coll::Allreduce.algos() {
            assert!(text.contains(info.name), "{text}");
        }
        assert!(text.contains("<- chosen"));
        assert!(!text.contains("between nodes"), "{text}");
        let a = args(64, 1 << 20, true).on(algos::Layout::blocks(64, 4));
        let text = explain(Coll::Allreduce, &a, &Model::SHM);
        assert!(text.contains("on 4 nodes (up to 16 per node)"), "{text}");
        assert!(text.contains("between nodes: alpha=2.00e-6 s"), "{text}");
        assert!(text.contains("(leaders: "), "{text}");
    }
}
