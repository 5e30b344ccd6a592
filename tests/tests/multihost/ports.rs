//! Ports between two jobs whose ranks are on different test hosts
//! (`tests/c_abi/ports_jobs.c`, MPICH-built, on OxMPI's library): the
//! servers and clients spread over both hosts with the rank 0s together
//! (join over loopback included), and a server on one host with a client
//! on the other (the roots' handshake crosses the link).

use std::path::Path;
use std::process::Command;

use oxmpi_tests::hosts::TestHosts;
use oxmpi_tests::{oxrun, run_command, JobOutcome, ScratchDir};

use super::{harness, hosts, LIMIT};

/// `ports_jobs ARGS` as a job with `list` (`--host` syntax) of `n` ranks.
fn job(h: &TestHosts, dir: &Path, list: &str, n: usize, args: &[&str], join: bool) -> JobOutcome {
    let exe = harness::build("ports_jobs", harness::Way::MpichBinary);
    let lib = harness::prefix().join("lib");
    let mut cmd = Command::new(oxrun());
    cmd.args(["--launcher-cmd", &h.launch_command().to_string_lossy()])
        .args(["--control-addr", h.control_addr()])
        .args(["--host", list, "-n", &n.to_string(), "--bind-to", "none"])
        .args(["-x", &format!("LD_LIBRARY_PATH={}", lib.display())])
        .arg("--name-dir")
        .arg(dir.join("names"));
    if !join {
        cmd.args(["-x", "PORTS_JOBS_NO_JOIN=1"]);
    }
    // A closed port's TCP port may have been taken since (see c_abi.rs).
    cmd.env("OXMPI_PORT_TIMEOUT", "30");
    cmd.arg(&exe).args(args).current_dir(dir);
    run_command(cmd, LIMIT)
}

#[test]
fn ports_between_jobs_across_hosts() {
    let Some(h) = hosts(2, "ports_between_jobs_across_hosts") else {
        return;
    };
    let (h0, h1) = (h.names()[0].clone(), h.names()[1].clone());
    let both = format!("{h0}:1,{h1}:1");
    let layouts = [
        (both.clone(), 2, both.clone(), 2, true),
        (format!("{h0}:2"), 2, format!("{h1}:1"), 1, false),
    ];
    for (slist, s, clist, c, join) in layouts {
        let scratch = ScratchDir::new();
        let dir = scratch.path().to_path_buf();
        let what = format!("server on {slist}, client on {clist}");
        let (sn, cn) = (s.to_string(), c.to_string());
        let server = std::thread::scope(|scope| {
            let server = scope.spawn(|| job(&h, &dir, &slist, s, &["server", &cn], join));
            let client = job(&h, &dir, &clist, c, &["client", &sn], join);
            assert!(
                client.success() && client.stdout.contains("PASS ports_jobs client"),
                "client, {what}:\n{}",
                client.describe()
            );
            server.join().expect("the server's thread")
        });
        assert!(
            server.success() && server.stdout.contains("PASS ports_jobs server"),
            "server, {what}:\n{}",
            server.describe()
        );
        let late = job(&h, &dir, &clist, c, &["late"], join);
        assert!(
            late.success() && late.stdout.contains("PASS ports_jobs late"),
            "late client, {what}:\n{}",
            late.describe()
        );
    }
}
