use super::*;

fn check_shape(machine: &Machine) {
    assert!(!machine.cores().is_empty(), "no cores: {machine:?}");
    assert!(machine.pus() >= machine.cores().len());
    assert!(machine.packages() >= 1);
    assert!(machine.numa_nodes() >= 1);
    let listed: usize = machine.cores().iter().map(|c| c.pus.len()).sum();
    assert_eq!(listed, machine.pus(), "{machine:?}");
    for core in machine.cores() {
        assert!(!core.pus.is_empty(), "core without PUs: {core:?}");
    }
}

fn check_round_robin(machine: &Machine) {
    let ncores = machine.cores().len();
    for nranks in 1..=ncores {
        let sets = machine.core_sets_round_robin(nranks);
        assert_eq!(sets.len(), nranks);
        let mut seen = std::collections::HashSet::new();
        for set in &sets {
            assert!(!set.is_empty());
            for pu in set {
                assert!(seen.insert(*pu), "PU {pu} in two sets: {sets:?}");
            }
        }
    }
    let sets = machine.core_sets_round_robin(2 * ncores + 1);
    assert_eq!(sets[ncores], sets[0]);
    assert_eq!(sets[2 * ncores], sets[0]);
    assert!(machine.core_sets_round_robin(0).is_empty());
}

#[test]
fn probe_finds_cores() {
    let machine = Machine::probe().expect("probe");
    check_shape(&machine);
    check_round_robin(&machine);
}

#[test]
fn fallback_finds_cores() {
    let machine = Machine::probe_fallback().expect("fallback probe");
    assert!(matches!(machine.source(), Source::Fallback { .. }));
    check_shape(&machine);
    check_round_robin(&machine);
}

#[test]
fn hwloc_and_fallback_agree_on_pus() {
    let machine = Machine::probe().expect("probe");
    if let Source::Hwloc { .. } = machine.source() {
        let fb = Machine::probe_fallback().expect("fallback probe");
        let mut a: Vec<usize> = machine.cores().iter().flat_map(|c| c.pus.clone()).collect();
        let mut b: Vec<usize> = fb.cores().iter().flat_map(|c| c.pus.clone()).collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
}

#[test]
fn no_cores_means_unbound_sets() {
    let machine = Machine {
        cores: Vec::new(),
        pus: 0,
        packages: 1,
        numa_nodes: 1,
        source: Source::Fallback {
            reason: "test".into(),
        },
    };
    assert_eq!(
        machine.core_sets_round_robin(3),
        vec![Vec::<usize>::new(); 3]
    );
}

#[test]
fn every_set_is_bindable() {
    use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
    use nix::unistd::Pid;
    let machine = Machine::probe().expect("probe");
    for set in machine.core_sets_round_robin(machine.cores().len()) {
        // On Linux pid 0 names the calling thread, so bind a scratch thread.
        let got = std::thread::spawn(move || {
            let mut mask = CpuSet::new();
            for pu in &set {
                mask.set(*pu).expect("PU index fits a CpuSet");
            }
            sched_setaffinity(Pid::from_raw(0), &mask).expect("sched_setaffinity");
            let now = sched_getaffinity(Pid::from_raw(0)).expect("sched_getaffinity");
            let bound: Vec<usize> = (0..CpuSet::count())
                .filter(|&c| now.is_set(c).unwrap_or(false))
                .collect();
            (set, bound)
        })
        .join()
        .expect("thread");
        assert_eq!(got.0, got.1);
    }
}
