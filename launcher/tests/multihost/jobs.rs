//! The longer jobs of the tests, with their checks: a PMI job across the
//! hosts, and oxrun killed mid-job.

use std::time::Instant;

use super::{netns_id, netns_of_pid, oxrun_cmd, oxrun_cmd_via, TestNet, LIMIT, PROMPT};
use crate::common::{processes_with, run_cmd, self_as_rank, wait_for_lines, wait_gone, Outcome};

/// Runs `n` ranks of this binary playing `role` on `hosts` (`a:2,b:2` and
/// the like) mapped by `map`; the outcome and the host of each rank.
pub fn pmi_job(
    net: &TestNet,
    role: &str,
    hosts: &str,
    n: usize,
    map: &str,
) -> (Outcome, Vec<String>) {
    let n_text = n.to_string();
    let mut rest = vec!["-n", n_text.as_str(), "--map-by", map];
    let rank_cmd = self_as_rank(role);
    rest.extend(rank_cmd.iter().map(String::as_str));
    let mut cmd = oxrun_cmd(net, hosts, &rest);
    let placement: Vec<String> = match (hosts, map) {
        ("a:2,b:2", "slot") => vec![0, 0, 1, 1],
        ("a:2,b:2", "node") => vec![0, 1, 0, 1],
        ("a:1,b:2", "slot") => vec![0, 1, 1],
        _ => panic!("placement for {hosts} by {map} not tabled"),
    }
    .into_iter()
    .map(|h| net.hosts[h].clone())
    .collect();
    let mapping = match (hosts, map) {
        ("a:2,b:2", "slot") => "(vector,(0,2,2))",
        ("a:2,b:2", "node") => "(vector,(0,2,1))",
        _ => "(vector,(0,1,1),(1,1,2))",
    };
    let root = netns_id("/proc/self/ns/net");
    cmd.env("OXRUN_TEST_HOSTS", placement.join(","))
        .env("OXRUN_TEST_MAPPING", mapping)
        .env("OXRUN_TEST_ROOT_NETNS", format!("{}:{}", root.0, root.1));
    (run_cmd(cmd, None, LIMIT), placement)
}

/// Starts a 4-rank job whose ranks (and a background child each) carry
/// `marker`, kills oxrun with SIGKILL and checks everything is gone.
pub fn kill_oxrun_and_check(net: &TestNet, launcher: &str, marker: &str, detached: bool) {
    let ready = net.dir.join(format!("ready-{marker}"));
    let script = format!(
        "sleep {marker} & echo up >> {}; exec sleep {marker}",
        ready.display()
    );
    let mut child = oxrun_cmd_via(net, launcher, "a:2,b:2", &["-n", "4", "sh", "-c", &script])
        .spawn()
        .unwrap();
    wait_for_lines(&ready, 4, LIMIT);
    let oxrun_pid = child.id() as i32;
    let ranks: Vec<i32> = processes_with(marker)
        .into_iter()
        .filter(|&p| p != oxrun_pid)
        .collect();
    assert!(ranks.len() >= 8, "ranks and their children: {ranks:?}");
    let host_ns: Vec<_> = net
        .hosts
        .iter()
        .map(|h| netns_id(&format!("/run/netns/{h}")))
        .collect();
    for pid in &ranks {
        let ns = netns_of_pid(*pid);
        assert!(
            ns.is_some_and(|ns| host_ns.contains(&ns)),
            "rank process {pid} is not on a test host"
        );
    }
    // The agents: never the secret on their command lines; and, detached,
    // not children of oxrun (only the TCP connection can tell them).
    let agents = processes_with(&format!("--proxy-host {}", net.id));
    let agents: Vec<i32> = agents
        .into_iter()
        .filter(|&p| {
            std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "oxrun")
        })
        .collect();
    assert_eq!(agents.len(), 2, "one agent per host: {agents:?}");
    for &agent in &agents {
        let cmdline = std::fs::read(format!("/proc/{agent}/cmdline")).unwrap();
        let words: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        assert!(
            !words
                .iter()
                .any(|w| w.len() == 48 && w.iter().all(u8::is_ascii_hexdigit)),
            "secret on an agent's command line"
        );
        let stat = std::fs::read_to_string(format!("/proc/{agent}/stat")).unwrap();
        let ppid: i32 = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            ppid == child.id() as i32,
            !detached,
            "agent {agent} has parent {ppid}, oxrun is {}",
            child.id()
        );
    }
    let killed = Instant::now();
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let left = wait_gone(marker, PROMPT);
    assert!(left.is_empty(), "ranks left behind: {left:?}");
    let agents_left = wait_gone(&format!("--proxy-host {}", net.id), PROMPT);
    assert!(
        agents_left.is_empty(),
        "agents left behind: {agents_left:?}"
    );
    eprintln!(
        "kill -9 oxrun ({}): all gone in {:?}",
        if detached {
            "detached agents"
        } else {
            "agents are children"
        },
        killed.elapsed()
    );
}
