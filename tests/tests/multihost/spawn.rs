//! `MPI_Comm_spawn` with the children on other test hosts
//! (`tests/c_abi/spawn.c`, MPICH-built, on OxMPI's library): the info key
//! `host` (the program's `SPAWN_HOST`) puts them on the parents' other
//! host, on both hosts, or on a host the parents' job does not use;
//! without it they run on the spawning root's host, whichever that is.
//! Parents and children exchange point-to-point messages, an allreduce
//! and a barrier across the intercommunicator, merge it and allgather on
//! the result, and check `MPI_Comm_get_parent` and where each child runs;
//! the job ends with exit 0 and nothing left on any host; every member's
//! bridge link opens on its own host's interface. And a child
//! SIGKILLed on the other host, or the link to the children's host cut,
//! ends the whole job within 3 s with one line naming the child or the
//! host, nothing left behind.

use std::process::Command;
use std::time::Duration;

use oxmpi_tests::hosts::TestHosts;
use oxmpi_tests::{oxrun, run_command, JobOutcome};

use super::faults::{ended_after, now_ns, oxrun_lines, wait_for};
use super::{harness, hosts, LIMIT};

/// `spawn` with `ranks[i]` parents on host `i` and `env` passed with -x.
fn spawn_job(h: &TestHosts, ranks: &[usize], extra: &[&str], env: &[(&str, &str)]) -> JobOutcome {
    let exe = harness::build("spawn", harness::Way::MpichBinary);
    let lib = harness::prefix().join("lib");
    let mut cmd = Command::new(oxrun());
    cmd.args(h.oxrun_args(ranks))
        .args(extra)
        .args(["-x", &format!("LD_LIBRARY_PATH={}", lib.display())]);
    for (k, v) in env {
        cmd.args(["-x", &format!("{k}={v}")]);
    }
    cmd.arg(exe);
    run_command(cmd, LIMIT)
}

#[test]
fn spawned_children_run_and_talk_across_hosts() {
    let Some(h) = hosts(2, "spawned_children_run_and_talk_across_hosts") else {
        return;
    };
    let (a, b) = (h.names()[0].as_str(), h.names()[1].as_str());
    let both = format!("{a}:1,{b}:2");
    let both_back = format!("{b}:2,{a}");
    // (parents per host, oxrun's placement flags, SPAWN_HOST)
    let layouts: [(&[usize], &[&str], Option<&str>); 5] = [
        // Every parent on A, every child on B.
        (&[2], &[], Some(b)),
        // A parent on each host; children on both.
        (&[1, 1], &[], Some(&both)),
        (&[2, 2], &["--map-by", "node"], Some(&both_back)),
        // The parents on B only, the children on A, which their job does not use.
        (&[0, 1], &[], Some(a)),
        // No host key: the root's host (A for spawn, B for spawn_multiple).
        (&[1, 1], &[], None),
    ];
    for (ranks, extra, spawn_host) in layouts {
        let env: Vec<(&str, &str)> = spawn_host.map(|s| ("SPAWN_HOST", s)).into_iter().collect();
        let out = spawn_job(&h, ranks, extra, &env);
        let what = format!("parents {ranks:?} {extra:?}, SPAWN_HOST={spawn_host:?}");
        assert!(
            out.success() && out.stdout.contains("PASS spawn"),
            "{what}:\n{}",
            out.describe()
        );
        assert!(
            h.leftover_processes().is_empty(),
            "{what}: processes left on the hosts"
        );
    }
}

/// Each member of a bridge opens its link on its own host's interface
/// (the address the job reached that host at), children and parents
/// alike: a parent on each host, children 0 on A and 1-2 on B, in both
/// calls of spawn.c (spawn_multiple's root is on B, its command "B" runs
/// there), so bridge positions 0 and 2 are on A, 1, 3 and 4 on B.
#[test]
fn bridge_links_open_on_each_members_host() {
    let Some(h) = hosts(2, "bridge_links_open_on_each_members_host") else {
        return;
    };
    let both = format!("{}:1,{}:2", h.names()[0], h.names()[1]);
    let env = [("SPAWN_HOST", both.as_str()), ("OXMPI_DEBUG", "transport")];
    let out = spawn_job(&h, &[1, 1], &[], &env);
    assert!(
        out.success() && out.stdout.contains("PASS spawn"),
        "{}",
        out.describe()
    );
    let host_of_position = [0, 1, 0, 1, 1];
    let mut seen = [0usize; 5];
    // "oxmpi[transport]: bridge position P of 5: fabric endpoint net on
    // IFACE (...), source ADDR (this host's address), ..."
    for line in out.stderr.lines() {
        let Some(rest) = line.strip_prefix("oxmpi[transport]: bridge position ") else {
            continue;
        };
        let p: usize = rest.split(' ').next().unwrap().parse().unwrap();
        let want = format!(
            "of 5: fabric endpoint net on {}i ",
            h.names()[host_of_position[p]]
        );
        let source = format!(
            "source {} (this host's address)",
            h.addr(host_of_position[p])
        );
        assert!(
            rest.contains(&want) && rest.contains(&source),
            "position {p} wants \"{want}...{source}\": {line}"
        );
        seen[p] += 1;
    }
    // Both calls open every position's link once.
    assert_eq!(seen, [2; 5], "bridge links logged:\n{}", out.describe());
}

/// `spawn` with 2 parents on host 0 and the children on host 1, child 1
/// faulting (`SPAWN_FAULT`, see spawn.c) once its messages are posted;
/// `stamp` is where it writes the time.
fn faulty_spawn(h: &TestHosts, fault: &str, stamp: &std::path::Path) -> JobOutcome {
    let env = [
        ("SPAWN_HOST", h.names()[1].as_str()),
        ("SPAWN_FAULT", fault),
        ("SPAWN_FAULT_CHILD", "1"),
        ("SPAWN_FAULT_STAMP", stamp.to_str().unwrap()),
    ];
    spawn_job(h, &[2], &[], &env)
}

/// Checks a faulty job: it failed within 3 s of `fault_ns`, with one line
/// holding every one of `names`, and left nothing on the hosts.
fn ended_promptly(h: &TestHosts, out: &JobOutcome, fault_ns: u128, names: &[&str]) {
    assert!(!out.success() && !out.timed_out, "{}", out.describe());
    let took = ended_after(out, fault_ns);
    assert!(
        took < Duration::from_secs(3),
        "ended {took:?} after the fault:\n{}",
        out.describe()
    );
    let lines = oxrun_lines(out);
    assert_eq!(lines.len(), 1, "one line:\n{}", out.describe());
    assert!(
        names.iter().all(|n| lines[0].contains(n)),
        "the line names {names:?}:\n{}",
        out.describe()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        h.leftover_processes().is_empty(),
        "processes left on the hosts"
    );
    eprintln!("the job ended {took:?} after the fault: {}", lines[0]);
}

#[test]
fn a_child_killed_on_the_other_host_ends_the_job_within_3_s() {
    let Some(h) = hosts(
        2,
        "a_child_killed_on_the_other_host_ends_the_job_within_3_s",
    ) else {
        return;
    };
    let stamp = h.dir().join("child-killed-at");
    let out = faulty_spawn(&h, "kill", &stamp);
    let killed: u128 = std::fs::read_to_string(&stamp)
        .unwrap_or_else(|e| panic!("no stamp ({e}):\n{}", out.describe()))
        .trim()
        .parse()
        .unwrap();
    ended_promptly(&h, &out, killed, &["rank 1", &h.names()[1], "SIGKILL"]);
    // The status of the child, as for a rank of the job itself.
    assert_eq!(out.code, Some(128 + 9), "{}", out.describe());
}

#[test]
fn the_link_to_the_childrens_host_cut_ends_the_job_within_3_s() {
    let Some(h) = hosts(
        2,
        "the_link_to_the_childrens_host_cut_ends_the_job_within_3_s",
    ) else {
        return;
    };
    let stamp = h.dir().join("child-stalls");
    let (out, cut) = std::thread::scope(|s| {
        let job = s.spawn(|| faulty_spawn(&h, "stall", &stamp));
        wait_for(&stamp);
        std::thread::sleep(Duration::from_millis(200));
        let cut = now_ns();
        h.set_link(1, false).unwrap();
        (job.join().unwrap(), cut)
    });
    h.set_link(1, true).unwrap();
    ended_promptly(&h, &out, cut, &[&h.names()[1]]);
}
