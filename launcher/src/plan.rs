//! Placement: which rank runs on which host.

use crate::cli::MapBy;
use crate::hosts::{self, HostSpec};

/// One host of the job and the ranks it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedHost {
    /// Name as given (or this host's name).
    pub name: String,
    /// Whether it is this machine (no launch command needed).
    pub local: bool,
    /// Slots declared for it.
    pub slots: usize,
    /// Global ranks placed here, ascending.
    pub ranks: Vec<usize>,
}

/// The whole placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Hosts with at least one rank, in node-id order.
    pub hosts: Vec<PlannedHost>,
    /// Node id (index into `hosts`) of each rank.
    pub node_of_rank: Vec<usize>,
}

/// The distinct hosts of `specs` (entries naming one host merged, slots
/// added) and, for each entry, the index of its host.
fn merge(specs: &[HostSpec]) -> (Vec<(String, bool, usize)>, Vec<usize>) {
    let mut merged: Vec<(String, bool, usize)> = Vec::new();
    let mut index = Vec::with_capacity(specs.len());
    for spec in specs {
        let local = hosts::is_local(&spec.name);
        match merged
            .iter()
            .position(|(n, l, _)| *n == spec.name || (local && *l))
        {
            Some(k) => {
                merged[k].2 += spec.slots;
                index.push(k);
            }
            None => {
                index.push(merged.len());
                merged.push((spec.name.clone(), local, spec.slots));
            }
        }
    }
    (merged, index)
}

/// Places `nprocs` ranks. Oversubscription is allowed: when every slot is
/// taken, placement starts another round over the same hosts.
pub fn place(nprocs: usize, specs: &[HostSpec], map_by: MapBy) -> Plan {
    let (candidates, entry_host) = if specs.is_empty() {
        (
            vec![(hosts::local_hostname(), true, nprocs.max(1))],
            vec![0],
        )
    } else {
        merge(specs)
    };
    // Each entry's slots (one entry of every rank without a list).
    let entry_slots: Vec<usize> = if specs.is_empty() {
        vec![nprocs.max(1)]
    } else {
        specs.iter().map(|s| s.slots).collect()
    };
    let mut host_of_rank = Vec::with_capacity(nprocs);
    let mut used = vec![0usize; candidates.len()];
    while host_of_rank.len() < nprocs {
        let round_start = host_of_rank.len();
        match map_by {
            MapBy::Slot => {
                for (h, c) in candidates.iter().enumerate() {
                    for _ in 0..c.2 {
                        if host_of_rank.len() < nprocs {
                            host_of_rank.push(h);
                            used[h] += 1;
                        }
                    }
                }
            }
            MapBy::Seq => {
                for (&slots, &h) in entry_slots.iter().zip(&entry_host) {
                    for _ in 0..slots {
                        if host_of_rank.len() < nprocs {
                            host_of_rank.push(h);
                            used[h] += 1;
                        }
                    }
                }
            }
            MapBy::Node => {
                let mut left: Vec<usize> = candidates.iter().map(|c| c.2).collect();
                while host_of_rank.len() < nprocs && left.iter().any(|&l| l > 0) {
                    for (h, l) in left.iter_mut().enumerate() {
                        if *l > 0 && host_of_rank.len() < nprocs {
                            *l -= 1;
                            host_of_rank.push(h);
                            used[h] += 1;
                        }
                    }
                }
            }
        }
        debug_assert!(host_of_rank.len() > round_start);
    }
    // Renumber so node ids count only hosts that received ranks.
    let mut node_of_host = vec![usize::MAX; candidates.len()];
    let mut planned: Vec<PlannedHost> = Vec::new();
    let mut node_of_rank = Vec::with_capacity(nprocs);
    for (rank, &h) in host_of_rank.iter().enumerate() {
        if node_of_host[h] == usize::MAX {
            node_of_host[h] = planned.len();
            let (name, local, slots) = &candidates[h];
            planned.push(PlannedHost {
                name: name.clone(),
                local: *local,
                slots: *slots,
                ranks: Vec::new(),
            });
        }
        let node = node_of_host[h];
        planned[node].ranks.push(rank);
        node_of_rank.push(node);
    }
    Plan {
        hosts: planned,
        node_of_rank,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(list: &str) -> Vec<HostSpec> {
        hosts::parse_list(list).unwrap()
    }

    #[test]
    fn local_only() {
        let p = place(3, &[], MapBy::Slot);
        assert_eq!(p.hosts.len(), 1);
        assert!(p.hosts[0].local);
        assert_eq!(p.node_of_rank, vec![0, 0, 0]);
    }

    #[test]
    fn by_slot_fills_then_wraps() {
        let p = place(7, &spec("a:2,b:3"), MapBy::Slot);
        assert_eq!(p.node_of_rank, vec![0, 0, 1, 1, 1, 0, 0]);
        assert_eq!(p.hosts[0].ranks, vec![0, 1, 5, 6]);
    }

    #[test]
    fn by_node_round_robins() {
        let p = place(5, &spec("a:1,b:3"), MapBy::Node);
        assert_eq!(p.node_of_rank, vec![0, 1, 1, 1, 0]);
    }

    #[test]
    fn in_sequence_entries_keep_their_order() {
        let p = place(6, &spec("a:2,b,a"), MapBy::Seq);
        assert_eq!(p.node_of_rank, vec![0, 0, 1, 0, 0, 0]);
        assert_eq!(p.hosts[0].ranks, vec![0, 1, 3, 4, 5]);
        assert_eq!(p.hosts[1].ranks, vec![2]);
    }

    #[test]
    fn unused_hosts_are_dropped_and_duplicates_merge() {
        let p = place(2, &spec("a:2,b:2,a"), MapBy::Slot);
        assert_eq!(p.hosts.len(), 1);
        assert_eq!(p.hosts[0].slots, 3);
    }
}
