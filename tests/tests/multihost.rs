//! Jobs across hosts: the point-to-point and collective suites, and
//! MPICH-built C programs on OxMPI's library, with ranks on network-
//! namespace test hosts (see `oxmpi_tests::hosts`) in 1+1, 2+2 and 2+1
//! layouts, placed by slot and by node so that both same-host and
//! other-host pairs are exercised. Also: inter-host bytes cross the link
//! while same-host pairs send nothing through it, a rank SIGKILLed on the
//! second host ends the job promptly with nothing left on any host, and
//! so do a rank killed and a link cut while fabric traffic is in flight
//! (multihost/faults.rs), spawned children run and talk on the other host
//! and one killed there ends the job (multihost/spawn.rs), a
//! bad provider is a one-line error, and fabric messages reach ranks busy
//! with shared memory (multihost/pace.rs), and CUDA device buffers cross
//! hosts by the fabric (multihost/device.rs). The fabric's large-message paths
//! (RMA read, tagged send) and forced memory registration each run the
//! suites' bulk roles.
//!
//! Needs root for the namespaces: without it every test here prints why it
//! is skipped (never silently).

#[path = "coll/roles.rs"]
mod coll_roles;
#[path = "multihost/device.rs"]
mod device;
#[path = "multihost/faults.rs"]
mod faults;
#[path = "c_abi_harness/mod.rs"]
mod harness;
#[path = "p2p/roles.rs"]
mod p2p_roles;
#[path = "multihost/pace.rs"]
mod pace_role;
#[path = "multihost/ports.rs"]
mod ports;
#[path = "multihost/spawn.rs"]
mod spawn;

use std::process::Command;
use std::time::{Duration, Instant};

use oxmpi::Comm;
use oxmpi_tests::hosts::TestHosts;
use oxmpi_tests::{oxrun, role_job_on, run_command, JobOutcome};

const LIMIT: Duration = Duration::from_secs(180);

/// Entry point of the child ranks; a no-op in a normal test run.
#[test]
fn role_entry() {
    let Ok(role) = std::env::var("OXMPI_TEST_ROLE") else {
        return;
    };
    match role.split_once(':') {
        Some(("p2p", r)) => p2p_roles::run(r),
        Some(("coll", r)) => coll_roles::run(r),
        Some(("bytes", r)) => bytes_role(r),
        Some(("idle", _)) => idle_role(),
        Some(("pace", _)) => pace_role::run(),
        Some(("typed", _)) => typed_role(),
        Some(("stream", r)) => faults::stream_role(r),
        _ => panic!("unknown role {role}"),
    }
}

/// The test hosts, or None (with the reason printed) when they cannot be
/// made here.
fn hosts(n: usize, test: &str) -> Option<TestHosts> {
    if let Some(why) = oxmpi_tests::hosts::unavailable() {
        eprintln!("SKIPPED {test}: {why}");
        return None;
    }
    Some(TestHosts::new(n).unwrap_or_else(|e| panic!("cannot build the test hosts: {e}")))
}

/// A layout: ranks per host and oxrun's placement flags.
struct Layout {
    ranks: &'static [usize],
    extra: &'static [&'static str],
    name: &'static str,
}

/// Same-host and other-host pairs among ranks 0 and 1 alike.
const LAYOUTS: &[Layout] = &[
    Layout {
        ranks: &[1, 1],
        extra: &[],
        name: "1+1",
    },
    Layout {
        ranks: &[2, 2],
        extra: &[],
        name: "2+2 by slot",
    },
    Layout {
        ranks: &[2, 2],
        extra: &["--map-by", "node"],
        name: "2+2 by node",
    },
    Layout {
        ranks: &[2, 1],
        extra: &["--map-by", "node"],
        name: "2+1 by node",
    },
];

fn run_roles(test: &str, family: &str, roles: &[&str], env: &[(&str, &str)]) {
    let Some(h) = hosts(2, test) else { return };
    for layout in LAYOUTS {
        for role in roles {
            let out = role_job_on(
                &h,
                layout.ranks,
                layout.extra,
                &format!("{family}:{role}"),
                env,
                LIMIT,
            );
            assert!(
                out.success(),
                "{family} role {role} on {}:\n{}",
                layout.name,
                out.describe()
            );
        }
    }
    assert!(
        h.leftover_processes().is_empty(),
        "processes left on the hosts"
    );
}

/// Three hosts: every pair of ranks of a 1+1+1 job, and a 2+1+1 job by
/// node, crosses a host boundary in some direction.
#[test]
fn three_hosts() {
    let Some(h) = hosts(3, "three_hosts") else {
        return;
    };
    let layouts: [(&[usize], &[&str]); 2] =
        [(&[1, 1, 1], &[]), (&[2, 1, 1], &["--map-by", "node"])];
    let roles = [
        "p2p:basic",
        "p2p:order",
        "p2p:flood",
        "p2p:large",
        "p2p:threads",
        "coll:allreduce",
        "coll:bcast",
        "coll:allgather",
        "coll:hier",
    ];
    for (ranks, extra) in layouts {
        for role in roles {
            let out = role_job_on(&h, ranks, extra, role, &[], LIMIT);
            assert!(out.success(), "{role} on {ranks:?}:\n{}", out.describe());
        }
    }
    assert!(
        h.leftover_processes().is_empty(),
        "processes left on the hosts"
    );
}

#[test]
fn point_to_point_semantics_across_hosts() {
    run_roles(
        "point_to_point_semantics_across_hosts",
        "p2p",
        &[
            "basic",
            "order",
            "flood",
            "preposted",
            "large",
            "ssend",
            "probe",
            "truncate",
            "cancel",
            "waits",
            "persistent",
            "errors",
            "threads",
        ],
        &[],
    );
}

#[test]
fn collectives_across_hosts() {
    run_roles(
        "collectives_across_hosts",
        "coll",
        &[
            "allreduce",
            "noncommutative",
            "bcast",
            "reduce",
            "allgather",
            "nonblocking",
        ],
        &[],
    );
}

#[test]
fn hierarchical_collectives_on_real_nodes() {
    run_roles(
        "hierarchical_collectives_on_real_nodes",
        "coll",
        &["hier"],
        &[],
    );
}

/// The self-checking C programs, built with MPICH's mpicc, on OxMPI's
/// library under oxrun across hosts: those of `tests/c_abi/` that do not
/// assume one host (`comm.c` checks that every rank shares memory), and
/// those of `tests/c/` (but `hello.c`, which checks that every rank sees
/// the same host name); in every layout (1+1, 2+2 by slot and by node,
/// 2+1).
#[test]
fn mpich_built_programs_across_hosts() {
    let Some(h) = hosts(2, "mpich_built_programs_across_hosts") else {
        return;
    };
    let lib = harness::prefix().join("lib");
    let abi = [
        "p2p",
        "p2p_ext",
        "probe",
        "coll",
        "coll_types",
        "nonblocking",
        "datatype",
    ]
    .map(|name| (name, harness::build(name, harness::Way::MpichBinary)));
    let mpicc = oxmpi_tests::require_mpicc_mpich();
    let plain =
        ["p2p", "collectives", "comm_split"].map(|name| (name, oxmpi_tests::build_c(name, &mpicc)));
    for (name, exe) in abi.iter().chain(&plain) {
        for layout in LAYOUTS {
            let mut cmd = Command::new(oxrun());
            cmd.args(h.oxrun_args(layout.ranks))
                .args(layout.extra)
                .args(["-x", &format!("LD_LIBRARY_PATH={}", lib.display())])
                .arg(exe);
            let out = run_command(cmd, LIMIT);
            assert!(
                out.success() && out.stdout.contains(&format!("PASS {name}")),
                "{name} on {}:\n{}",
                layout.name,
                out.describe()
            );
        }
    }
}

/// Rank pairs exchanging `OXMPI_TEST_BYTES` bytes each way: role `near`
/// pairs rank r with r ^ 1, `far` with (r + 2) % 4 (in a 2+2 job by slot:
/// the same host, and the other host).
fn bytes_role(which: &str) {
    let universe = oxmpi::init().expect("init");
    let world: Comm = universe.world();
    let n: usize = std::env::var("OXMPI_TEST_BYTES").unwrap().parse().unwrap();
    let r = world.rank() as usize;
    let peer = match which {
        "near" => r ^ 1,
        "far" => (r + 2) % 4,
        other => panic!("unknown bytes role {other}"),
    };
    let data: Vec<u8> = (0..n).map(|i| (i * 31 + r) as u8).collect();
    let mut back = vec![0u8; n];
    world.barrier().unwrap();
    world
        .sendrecv(&data, peer as i32, 5, &mut back, peer as i32, 5)
        .unwrap();
    assert!(back
        .iter()
        .enumerate()
        .all(|(i, &b)| b == (i * 31 + peer) as u8));
    world.barrier().unwrap();
    universe.finalize().unwrap();
}

/// Rank 0 sends 1 MiB contiguous to rank 1, which receives it into a
/// strided layout: a receiver that cannot take an RMA read (its layout is
/// not one run) answers the sender's offer with a Cts, and the bytes stream.
fn typed_role() {
    use oxmpi::datatype::{BasicType, Datatype, View, ViewMut};
    let universe = oxmpi::init().expect("init");
    let world: Comm = universe.world();
    const N: usize = 1 << 17;
    if world.rank() == 0 {
        let data: Vec<f64> = (0..N).map(|i| i as f64).collect();
        world.send(&data, 1, 3).unwrap();
    } else if world.rank() == 1 {
        let every_other = Datatype::vector(N as isize, 1, 2, &Datatype::basic(BasicType::Double))
            .expect("vector type");
        every_other.commit();
        let mut wide = vec![-1.0f64; 2 * N];
        let mut view = ViewMut::new(&mut wide, &every_other, 1).expect("view");
        let s = world.recv_view(&mut view, 0, 3).unwrap();
        assert_eq!(s.count, N * 8);
        for i in 0..N {
            assert_eq!(
                (wide[2 * i], wide[2 * i + 1]),
                (i as f64, -1.0),
                "element {i}"
            );
        }
        // And back, typed to contiguous: the sender's Rts has no address.
        world
            .send_view(&View::new(&wide, &every_other, 1).expect("view"), 0, 4)
            .unwrap();
    }
    if world.rank() == 0 {
        let mut back = vec![0f64; N];
        world.recv(&mut back, 1, 4).unwrap();
        assert!(back.iter().enumerate().all(|(i, &v)| v == i as f64));
    }
    universe.finalize().unwrap();
}

/// The last rank sleeps, then sends to every other rank, which waits in a
/// blocking receive meanwhile and checks it used little CPU doing so.
fn idle_role() {
    let universe = oxmpi::init().expect("init");
    let world: Comm = universe.world();
    let (me, last) = (world.rank(), world.size() - 1);
    // The barrier's last messages may still be queued on the sleeping
    // rank's side (a connection being made): time the barrier too.
    let (cpu0, wall0) = (cpu_time(), Instant::now());
    world.barrier().unwrap();
    if me == last {
        std::thread::sleep(Duration::from_millis(1500));
        for r in 0..last {
            world.send(&[r], r, 1).unwrap();
        }
    } else {
        let mut v = [0i32];
        world.recv(&mut v, last, 1).unwrap();
        let (cpu, wall) = (cpu_time() - cpu0, wall0.elapsed());
        assert_eq!(v[0], me);
        assert!(
            wall > Duration::from_secs(1),
            "rank {me} waited only {wall:?}"
        );
        assert!(
            cpu < wall / 5,
            "rank {me} used {cpu:?} of CPU in a {wall:?} blocking wait"
        );
    }
    universe.finalize().unwrap();
}

/// CPU time this process used so far (user and system).
fn cpu_time() -> Duration {
    let mut u: nix::libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into `u`.
    unsafe { nix::libc::getrusage(nix::libc::RUSAGE_SELF, &mut u) };
    let tv = |t: nix::libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// The fabric's large-message paths and memory registration, each chosen
/// by its setting and seen taken in the transport log: RMA read and
/// tagged send with every buffer registered (the path of providers that
/// require `FI_MR_LOCAL`, forced on tcp), and RMA read without (the other
/// suites here run tagged sends without).
#[test]
fn fabric_paths_across_hosts() {
    let Some(h) = hosts(2, "fabric_paths_across_hosts") else {
        return;
    };
    let runs = [
        ("read", "register", "RMA read", " bytes, registered"),
        ("tagged", "register", "tagged receive", " bytes, registered"),
        ("read", "auto", "RMA read", " bytes"),
    ];
    // `truncate` reads part of a message; `typed` receives into a layout
    // that no read can fill, so the receiver answers with a Cts instead.
    let roles = [
        "p2p:large",
        "p2p:truncate",
        "p2p:threads",
        "typed:",
        "coll:allreduce",
    ];
    for (rndv, mr, kind, ending) in runs {
        let env = [
            ("OXMPI_OFI_RNDV", rndv),
            ("OXMPI_OFI_MR", mr),
            ("OXMPI_DEBUG", "transport"),
        ];
        for (ranks, extra) in [(&[1, 1][..], &[][..]), (&[2, 2], &["--map-by", "node"])] {
            for role in roles {
                let out = role_job_on(&h, ranks, extra, role, &env, LIMIT);
                let what =
                    format!("{role} with OXMPI_OFI_RNDV={rndv} OXMPI_OFI_MR={mr} on {ranks:?}");
                assert!(out.success(), "{what}:\n{}", out.describe());
                // Rank 1 is on another host than rank 0 in both layouts,
                // and receives large messages from it in every role.
                let want = format!("oxmpi[transport]: rank 1: first {kind} with rank 0: ");
                assert!(
                    out.stderr
                        .lines()
                        .any(|l| l.starts_with(&want) && l.ends_with(ending)),
                    "{what}: the log lacks \"{want}N{ending}\":\n{}",
                    out.describe()
                );
            }
        }
    }
    assert!(
        h.leftover_processes().is_empty(),
        "processes left on the hosts"
    );
}

#[test]
fn a_rank_blocked_across_hosts_uses_little_cpu() {
    let Some(h) = hosts(2, "a_rank_blocked_across_hosts_uses_little_cpu") else {
        return;
    };
    // 1+1: the fabric's descriptor alone; 2+2: doorbell plus watcher.
    for ranks in [&[1, 1][..], &[2, 2][..]] {
        let out = role_job_on(&h, ranks, &[], "idle:", &[], LIMIT);
        assert!(out.success(), "{ranks:?}:\n{}", out.describe());
    }
}

/// A rank polls the fabric rarely while its traffic is all shared memory:
/// an `MPI_ANY_SOURCE` receive, a blocking receive and a receive on another
/// thread are still filled from the other host (see multihost/pace.rs).
#[test]
fn fabric_messages_reach_ranks_busy_with_shared_memory() {
    let Some(h) = hosts(2, "fabric_messages_reach_ranks_busy_with_shared_memory") else {
        return;
    };
    let out = role_job_on(&h, &[2, 2], &[], "pace:", &[], LIMIT);
    assert!(out.success(), "{}", out.describe());
    assert!(
        h.leftover_processes().is_empty(),
        "processes left on the hosts"
    );
}

#[test]
fn inter_host_bytes_cross_the_link_and_same_host_bytes_do_not() {
    let Some(h) = hosts(
        2,
        "inter_host_bytes_cross_the_link_and_same_host_bytes_do_not",
    ) else {
        return;
    };
    const BYTES: u64 = 16 << 20;
    let bytes = BYTES.to_string();
    let env = [("OXMPI_TEST_BYTES", bytes.as_str())];
    let run = |role: &str| -> u64 {
        let before = h.rx_bytes(0) + h.rx_bytes(1);
        let out = role_job_on(&h, &[2, 2], &[], role, &env, LIMIT);
        assert!(out.success(), "{role}:\n{}", out.describe());
        h.rx_bytes(0) + h.rx_bytes(1) - before
    };
    let far = run("bytes:far");
    // Each of 4 ranks sends BYTES to the other host.
    assert!(
        far >= 4 * BYTES,
        "only {far} bytes crossed the link for {} sent",
        4 * BYTES
    );
    let near = run("bytes:near");
    // Start-up and barriers only: far below one message's worth.
    assert!(
        near < BYTES / 4,
        "{near} bytes crossed the link for same-host pairs"
    );
}

#[test]
fn a_rank_killed_on_the_second_host_ends_the_job() {
    let Some(h) = hosts(2, "a_rank_killed_on_the_second_host_ends_the_job") else {
        return;
    };
    // By node, rank 1 (the one the role kills) runs on the second host.
    let start = Instant::now();
    let out: JobOutcome = role_job_on(&h, &[2, 2], &["--map-by", "node"], "p2p:kill9", &[], LIMIT);
    let took = start.elapsed();
    assert!(!out.success(), "{}", out.describe());
    assert!(
        out.stderr.contains("rank 1") && out.stderr.contains(h.names()[1].as_str())
            || out.stderr.contains("rank 1"),
        "the failure names the rank:\n{}",
        out.describe()
    );
    // 200 ms of the role's own sleep, start-up, then at most 3 s.
    assert!(
        took < Duration::from_secs(6),
        "took {took:?}:\n{}",
        out.describe()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        h.leftover_processes().is_empty(),
        "processes left on the hosts"
    );
}

#[test]
fn an_unknown_provider_is_a_one_line_error() {
    let Some(h) = hosts(2, "an_unknown_provider_is_a_one_line_error") else {
        return;
    };
    let out = role_job_on(
        &h,
        &[1, 1],
        &[],
        "p2p:basic",
        &[("OXMPI_OFI_PROVIDER", "nosuchfabric")],
        LIMIT,
    );
    assert!(!out.success() && !out.timed_out, "{}", out.describe());
    assert!(
        out.stderr.contains("nosuchfabric"),
        "the error names it:\n{}",
        out.describe()
    );
}

/// Unnamed, the provider is libfabric's `net`; named, another one (rxm
/// here); either way each rank's endpoint opens on its own host's link,
/// the address oxrun reached that host at (`OXMPI_OFI_ADDR`), whatever
/// order the provider lists interfaces in.
#[test]
fn endpoints_open_on_net_at_each_host_link() {
    let Some(h) = hosts(2, "endpoints_open_on_net_at_each_host_link") else {
        return;
    };
    for (named, opened) in [(None, "net on "), (Some("tcp"), "tcp;ofi_rxm on ")] {
        let mut env = vec![("OXMPI_DEBUG", "transport")];
        env.extend(named.map(|p| ("OXMPI_OFI_PROVIDER", p)));
        let out = role_job_on(&h, &[1, 1], &[], "p2p:basic", &env, LIMIT);
        assert!(out.success(), "{named:?}:\n{}", out.describe());
        for rank in 0..2 {
            let want = format!("oxmpi[transport]: rank {rank}: fabric endpoint {opened}");
            let source = format!("source {} (this host's address)", h.addr(rank));
            assert!(
                out.stderr
                    .lines()
                    .any(|l| l.starts_with(&want) && l.contains(&source)),
                "{named:?}: the log lacks \"{want}... {source}\":\n{}",
                out.describe()
            );
        }
    }
}

#[test]
fn inter_node_costs_are_measured_at_start() {
    let Some(h) = hosts(2, "inter_node_costs_are_measured_at_start") else {
        return;
    };
    let out = role_job_on(
        &h,
        &[1, 1],
        &[],
        "p2p:basic",
        &[("OXMPI_DEBUG", "coll")],
        LIMIT,
    );
    assert!(out.success(), "{}", out.describe());
    // "oxmpi[coll]: cost model SOURCE: alpha,beta,gamma,inter_alpha_us,inter_gbps"
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("cost model"))
        .unwrap_or_else(|| panic!("no cost model logged:\n{}", out.describe()));
    let figures: Vec<f64> = line
        .rsplit(": ")
        .next()
        .unwrap()
        .split(',')
        .map(|f| f.trim().parse().unwrap())
        .collect();
    let (alpha_us, gbps) = (figures[3], figures[4]);
    assert!(
        (alpha_us, gbps) != (2.0, 10.0),
        "the inter-node figures are still the defaults: {line}"
    );
    // A link through the kernel's network stack: microseconds, not nanoseconds.
    assert!(alpha_us > 1.0 && alpha_us < 10_000.0, "{line}");
    assert!(gbps > 0.0 && gbps < 1000.0, "{line}");
}
