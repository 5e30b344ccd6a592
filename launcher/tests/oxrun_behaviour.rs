//! oxrun's launcher behaviours, end to end through the real binary:
//! labels, environment, exit codes, signals, timeout, stdin, binding,
//! orphans and bad input.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{command, run, run_cmd, wait_for_lines, wait_gone};

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn labels_prefix_every_line_of_every_rank() {
    let out = run(
        &[
            "-n",
            "3",
            "-l",
            "sh",
            "-c",
            "echo out; echo err >&2; printf tail",
        ],
        LIMIT,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines: BTreeSet<&str> = out.stdout.lines().collect();
    for r in 0..3 {
        assert!(lines.contains(format!("[{r}] out").as_str()), "{out:?}");
        assert!(lines.contains(format!("[{r}] tail").as_str()), "{out:?}");
        assert!(out.stderr.contains(&format!("[{r}] err\n")), "{out:?}");
    }
    let plain = run(&["-n", "2", "--tag-output", "echo", "x"], LIMIT);
    assert_eq!(sorted_by_rank(&plain.stdout), "[0] x\n[1] x\n");
}

fn sorted_by_rank(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn lines_from_different_ranks_never_interleave() {
    // Each rank writes 3000 long lines quickly; every line must be whole.
    let script = "i=0; line=$(printf \"%0200d\" $PMI_RANK | tr 0 $PMI_RANK); \
                  while [ $i -lt 3000 ]; do echo \"$PMI_RANK:$line\"; i=$((i+1)); done";
    let out = run(&["-n", "4", "sh", "-c", script], LIMIT);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let mut counts = [0usize; 4];
    for line in out.stdout.lines() {
        let (rank, body) = line.split_once(':').expect("line has rank prefix");
        let r: usize = rank.parse().expect("rank prefix is a number");
        assert_eq!(body.len(), 200, "line cut or merged: {line:.80}");
        assert!(
            body.bytes().all(|b| b == b'0' + r as u8),
            "mixed line: {line:.80}"
        );
        counts[r] += 1;
    }
    assert_eq!(counts, [3000; 4]);
}

#[test]
fn environment_reaches_every_rank() {
    let mut cmd = command(&[
        "-n", "2", "-x", "XSET=1", "-x", "XPASS", "-genv", "GSET", "two words", "--env", "LSET=3",
        "sh", "-c",
        "echo \"$PMI_RANK|$PMI_SIZE|$MPI_LOCALNRANKS|$MPI_LOCALRANKID|$XSET|$XPASS|$GSET|$LSET|${PMI_FD:+fd}|${PMI_JOBID:+job}\"",
    ]);
    cmd.env("XPASS", "passed");
    let out = run_cmd(cmd, None, LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines: BTreeSet<&str> = out.stdout.lines().collect();
    let expected: BTreeSet<&str> = [
        "0|2|2|0|1|passed|two words|3|fd|job",
        "1|2|2|1|1|passed|two words|3|fd|job",
    ]
    .into();
    assert_eq!(lines, expected);
}

#[test]
fn failing_rank_ends_the_job_with_its_exit_code() {
    let out = run(
        &[
            "-n",
            "3",
            "sh",
            "-c",
            "if [ $PMI_RANK = 1 ]; then exit 3; fi; exec sleep 30",
        ],
        LIMIT,
    );
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(
        out.elapsed < Duration::from_secs(3),
        "took {:?}",
        out.elapsed
    );
    let msgs: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("oxrun:"))
        .collect();
    assert_eq!(
        msgs.len(),
        1,
        "exactly one line about the failure: {msgs:?}"
    );
    assert!(
        msgs[0].contains("rank 1") && msgs[0].contains("exited with code 3"),
        "{msgs:?}"
    );
}

#[test]
fn rank_killed_by_signal_gives_128_plus_signal() {
    let out = run(
        &[
            "-n",
            "2",
            "sh",
            "-c",
            "if [ $PMI_RANK = 1 ]; then kill -KILL $$; fi; exec sleep 30",
        ],
        LIMIT,
    );
    assert_eq!(out.code, Some(128 + 9), "{out:?}");
    assert!(
        out.elapsed < Duration::from_secs(3),
        "took {:?}",
        out.elapsed
    );
    assert!(
        out.stderr.contains("rank 1") && out.stderr.contains("SIGKILL"),
        "{}",
        out.stderr
    );
}

#[test]
fn timeout_ends_the_job() {
    let out = run(&["--timeout", "1", "-n", "2", "sleep", "30"], LIMIT);
    assert_eq!(out.code, Some(124), "{out:?}");
    assert!(
        out.elapsed < Duration::from_secs(4),
        "took {:?}",
        out.elapsed
    );
    assert!(out.stderr.contains("timed out after 1 s"), "{}", out.stderr);
}

/// A stopped rank (SIGSTOP) is not dead: once continued it runs on, and
/// the job succeeds.
#[test]
fn stopped_rank_is_not_taken_for_dead() {
    let dir = tempdir("stopped");
    let f = dir.join("pid");
    let script = format!(
        "f={f}; if [ $PMI_RANK = 1 ]; then echo $$ >$f.tmp; mv $f.tmp $f; kill -STOP $$; echo resumed; exit 0; fi; \
         while [ ! -s $f ]; do sleep 0.05; done; p=$(cat $f); \
         until grep -q ') T' /proc/$p/stat; do sleep 0.05; done; sleep 0.5; kill -CONT $p",
        f = f.display()
    );
    let out = run(&["-n", "2", "sh", "-c", &script], LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "resumed\n", "{out:?}");
    assert_eq!(out.stderr, "", "{out:?}");
}

/// A job whose rank stays stopped still ends at `--timeout`.
#[test]
fn timeout_ends_a_job_with_a_stopped_rank() {
    let script = "if [ $PMI_RANK = 1 ]; then kill -STOP $$; fi; exec sleep 30";
    let out = run(&["--timeout", "1", "-n", "2", "sh", "-c", script], LIMIT);
    assert_eq!(out.code, Some(124), "{out:?}");
    assert!(
        out.elapsed < Duration::from_secs(3),
        "took {:?}",
        out.elapsed
    );
    assert!(out.stderr.contains("timed out after 1 s"), "{}", out.stderr);
}

#[test]
fn stdin_goes_to_rank_zero_only() {
    let cmd = command(&["-n", "2", "sh", "-c", "read x; echo \"$PMI_RANK:$x\""]);
    let out = run_cmd(cmd, Some(b"hello\n"), LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    let lines: BTreeSet<&str> = out.stdout.lines().collect();
    assert_eq!(lines, ["0:hello", "1:"].into());
}

#[test]
fn sigint_is_forwarded_and_a_second_one_kills() {
    let dir = tempdir("sigint");
    let ready = dir.join("ready");
    // Ranks report SIGINT and exit cleanly.
    let script = format!(
        "trap 'echo got-int-$PMI_RANK; exit 0' INT; echo up >> {}; while :; do sleep 0.05; done",
        ready.display()
    );
    let child = command(&["-n", "2", "sh", "-c", &script]).spawn().unwrap();
    wait_for_lines(&ready, 2, LIMIT);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("got-int-0") && stdout.contains("got-int-1"),
        "{stdout}"
    );

    // Ranks ignore SIGINT: the second one kills them.
    let ready2 = dir.join("ready2");
    let script = format!(
        "trap '' INT; echo up >> {}; while :; do sleep 0.05; done",
        ready2.display()
    );
    let child = command(&["-n", "2", "sh", "-c", &script]).spawn().unwrap();
    wait_for_lines(&ready2, 2, LIMIT);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(200));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let start = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("second interrupt"));
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("oxrun-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn no_orphans_after_oxrun_is_killed() {
    let marker = format!("7{}.25", std::process::id());
    let dir = tempdir("orphans");
    let ready = dir.join("ready");
    // Each rank also leaves a background grandchild behind.
    let script = format!(
        "sleep {marker} & echo up >> {}; exec sleep {marker}",
        ready.display()
    );
    let mut child = command(&["-n", "4", "sh", "-c", &script]).spawn().unwrap();
    wait_for_lines(&ready, 4, LIMIT);
    assert!(common::processes_with(&marker).len() >= 8);
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let left = wait_gone(&marker, Duration::from_secs(2));
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

#[test]
fn no_orphans_after_a_failure() {
    let marker = format!("8{}.5", std::process::id());
    let script = format!(
        "sleep {marker} & if [ $PMI_RANK = 0 ]; then sleep 0.3; exit 5; fi; exec sleep {marker}"
    );
    let out = run(&["-n", "3", "sh", "-c", &script], LIMIT);
    assert_eq!(out.code, Some(5));
    let left = wait_gone(&marker, Duration::from_secs(2));
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

#[test]
fn bind_to_core_gives_each_rank_its_own_core() {
    let ncpu = std::thread::available_parallelism().unwrap().get();
    let n = ncpu.min(4).to_string();
    let out = run(
        &[
            "-n",
            &n,
            "--bind-to",
            "core",
            "sh",
            "-c",
            "grep Cpus_allowed_list /proc/self/status",
        ],
        LIMIT,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let sets: Vec<&str> = out
        .stdout
        .lines()
        .map(|l| l.split(':').nth(1).unwrap().trim())
        .collect();
    assert_eq!(sets.len(), n.parse::<usize>().unwrap());
    let distinct: BTreeSet<_> = sets.iter().collect();
    assert_eq!(distinct.len(), sets.len(), "cores shared: {sets:?}");
    let unbound = run(
        &[
            "-n",
            "2",
            "--bind-to",
            "none",
            "sh",
            "-c",
            "grep Cpus_allowed_list /proc/self/status",
        ],
        LIMIT,
    );
    let all = run(
        &[
            "-n",
            "1",
            "sh",
            "-c",
            "grep Cpus_allowed_list /proc/self/status",
        ],
        LIMIT,
    );
    for line in unbound.stdout.lines() {
        assert_eq!(line, all.stdout.trim(), "--bind-to none must not restrict");
    }
}

/// Without `--bind-to`, oversubscribed ranks are dealt round-robin over the
/// cores when each core gets the same number of them, and left unbound
/// when the split would be uneven.
#[test]
fn automatic_binding_of_oversubscribed_ranks() {
    let ncpu = std::thread::available_parallelism().unwrap().get();
    let allowed = |n: usize| -> Vec<String> {
        let out = run(
            &[
                "-n",
                &n.to_string(),
                "sh",
                "-c",
                "grep Cpus_allowed_list /proc/self/status",
            ],
            LIMIT,
        );
        assert_eq!(out.code, Some(0), "{out:?}");
        out.stdout
            .lines()
            .map(|l| l.split(':').nth(1).unwrap().trim().to_string())
            .collect()
    };
    let all = allowed(1).pop().unwrap();
    let even = allowed(2 * ncpu);
    let mut per_set = std::collections::BTreeMap::<&str, usize>::new();
    for set in &even {
        *per_set.entry(set.as_str()).or_default() += 1;
    }
    // (A host whose CPUs are one core's hardware threads has nothing to deal.)
    if ncpu > 1 && per_set.len() > 1 {
        assert!(!per_set.contains_key(all.as_str()), "unbound: {even:?}");
        assert!(
            per_set.values().all(|&k| k == 2),
            "two ranks per core: {even:?}"
        );
        let uneven = allowed(ncpu + 1);
        assert!(
            uneven.iter().all(|s| *s == all),
            "uneven split bound: {uneven:?}"
        );
    }
}

#[test]
fn sixty_four_ranks_oversubscribed() {
    let out = run(
        &["-n", "64", "sh", "-c", "echo $PMI_RANK"],
        Duration::from_secs(60),
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let ranks: BTreeSet<usize> = out.stdout.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ranks, (0..64).collect());
    assert!(
        !out.stderr.contains("warn"),
        "no warning storm: {}",
        out.stderr
    );
}

#[test]
fn bad_input_gives_one_clear_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["--frobnicate", "true"], "unknown option '--frobnicate'"),
        (&["-n", "2"], "missing program"),
        (&["-n", "0", "true"], "'-n' must be at least 1, got 0"),
        (&["-np", "many", "true"], "got 'many'"),
        (
            &["--hostfile", "/nonexistent/hosts", "true"],
            "cannot read hostfile '/nonexistent/hosts'",
        ),
        (&["--timeout", "soon", "true"], "got 'soon'"),
    ];
    for (args, expected) in cases {
        let out = run(args, LIMIT);
        assert_eq!(out.code, Some(2), "{args:?}: {out:?}");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(
            lines[0].starts_with("oxrun: ") && lines[0].contains(expected),
            "{args:?}: {lines:?}"
        );
    }
    let dir = tempdir("hostfile");
    let hf = dir.join("hosts");
    std::fs::write(&hf, "localhost slots=2\nlocalhost banana\n").unwrap();
    let out = run(&["--hostfile", hf.to_str().unwrap(), "true"], LIMIT);
    assert_eq!(out.code, Some(2));
    assert!(
        out.stderr.contains("line 2") && out.stderr.contains("banana"),
        "{}",
        out.stderr
    );
}

/// Absurd counts are refused up front, in one line naming the value and
/// the limit: no huge allocation, no panic, no fork storm.
#[test]
fn absurd_rank_counts_are_refused_at_once() {
    let cases: &[(&[&str], i32, &str)] = &[
        (&["-n", "-1", "true"], 2, "'-n' must be at least 1, got -1"),
        (
            &["-n", "99999999999", "true"],
            2,
            "99999999999, more than the limit of 16777216",
        ),
        (
            &["-n", "18446744073709551615", "true"],
            2,
            "limit of 16777216",
        ),
        (
            &["-n", "2147483648", "true"],
            2,
            "2147483648, more than the limit",
        ),
        (
            &["-H", "localhost:99999999999", "true"],
            2,
            "got 99999999999, more than the limit",
        ),
        // Within the job-size bound, above any host's pid_max (at most 2^22).
        (
            &["-n", "16777216", "true"],
            1,
            "cannot start 16777216 ranks on this host",
        ),
        (
            &["-H", "localhost:16777216", "true"],
            1,
            "cannot start 16777216 ranks",
        ),
    ];
    for (args, code, expected) in cases {
        let out = run(args, LIMIT);
        assert_eq!(out.code, Some(*code), "{args:?}: {out:?}");
        assert!(
            out.elapsed < Duration::from_secs(1),
            "{args:?}: took {:?}",
            out.elapsed
        );
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(
            lines[0].starts_with("oxrun: ") && lines[0].contains(expected),
            "{args:?}: {lines:?}"
        );
    }
}

#[test]
fn missing_executable_fails_cleanly() {
    let out = run(&["-n", "2", "/nonexistent/program"], LIMIT);
    assert_ne!(out.code, Some(0));
    assert!(out.elapsed < Duration::from_secs(3));
    assert!(
        out.stderr.contains("cannot start '/nonexistent/program'"),
        "{}",
        out.stderr
    );
}

#[test]
fn version_help_and_info() {
    let v = run(&["--version"], LIMIT);
    assert!(v.stdout.starts_with("oxrun (OxMPI) "), "{v:?}");
    let h = run(&["--help"], LIMIT);
    assert!(h.stdout.contains("--bind-to") && h.stdout.contains("--timeout"));
    let i = run(&["--info"], LIMIT);
    assert_eq!(i.code, Some(0), "{i:?}");
    for word in ["topology", "libfabric", "cuda", "transports"] {
        assert!(i.stdout.contains(word), "--info lacks {word}: {}", i.stdout);
    }
}

#[test]
fn hostfile_with_local_names_runs_locally() {
    let dir = tempdir("hostfile-local");
    let hf = dir.join("hosts");
    std::fs::write(&hf, "# local only\nlocalhost:2\n").unwrap();
    let out = run(
        &["-f", hf.to_str().unwrap(), "sh", "-c", "echo $PMI_SIZE"],
        LIMIT,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(out.stdout, "2\n2\n");
}

#[test]
fn works_when_installed_as_mpirun_and_mpiexec() {
    let dir = tempdir("names");
    for name in ["mpirun", "mpiexec"] {
        let link = dir.join(name);
        std::os::unix::fs::symlink(common::oxrun(), &link).unwrap();
        let mut cmd = std::process::Command::new(&link);
        cmd.args(["-np", "2", "sh", "-c", "echo $PMI_RANK"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let out = run_cmd(cmd, None, LIMIT);
        assert_eq!(out.code, Some(0), "{name}: {out:?}");
        assert_eq!(sorted_by_rank(&out.stdout), "0\n1\n", "{name}");
    }
}

#[test]
fn explain_prints_every_algorithm_and_the_choice() {
    let out = run(
        &["--explain", "allreduce", "--bytes", "1M", "-n", "64"],
        LIMIT,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    for algo in ["recursive_doubling", "rabenseifner", "ring", "reduce_bcast"] {
        assert!(out.stdout.contains(algo), "{}", out.stdout);
    }
    assert_eq!(out.stdout.matches("<- chosen").count(), 1);
    let nc = run(
        &[
            "--explain",
            "allreduce",
            "--bytes",
            "8",
            "-n",
            "6",
            "--noncommutative",
        ],
        LIMIT,
    );
    assert!(
        nc.stdout.contains("ring needs a commutative operation"),
        "{}",
        nc.stdout
    );
    // Several nodes: the node-aware algorithm is predicted; on one it does not apply.
    let one = run(&["--explain", "bcast", "--bytes", "64k", "-n", "32"], LIMIT);
    assert!(
        one.stdout
            .contains("hierarchical needs ranks on more than one node"),
        "{}",
        one.stdout
    );
    let four = run(
        &[
            "--explain",
            "allreduce",
            "--bytes",
            "64k",
            "-n",
            "32",
            "--nodes",
            "4",
        ],
        LIMIT,
    );
    assert_eq!(four.code, Some(0), "{four:?}");
    assert!(
        four.stdout.contains("on 4 nodes (up to 8 per node)"),
        "{}",
        four.stdout
    );
    assert!(
        four.stdout.contains("between nodes: alpha="),
        "{}",
        four.stdout
    );
    let hier = four
        .stdout
        .lines()
        .find(|l| l.contains("hierarchical"))
        .unwrap_or("");
    assert!(
        hier.ends_with(" us") || hier.contains(" us "),
        "{}",
        four.stdout
    );
    let bad = run(&["--explain", "alltoall_magic", "--bytes", "8"], LIMIT);
    assert_eq!(bad.code, Some(2));
    assert!(bad.stderr.contains("unknown collective 'alltoall_magic'"));
}
