//! The node segment across real processes: this test binary re-runs itself
//! under `oxrun` as the ranks (role chosen by `OXSHM_ROLE`). Each rank
//! establishes the node, streams sequenced messages of varying sizes to every
//! other local rank through the rings (sleeping on its doorbell when idle),
//! checks order and content, and CMA-reads a peer's buffer. The parent checks
//! that no `/dev/shm/oxmpi-*` file of the job remains, also after a rank is
//! killed with SIGKILL, and that a stale file of a dead creator is removed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use oxmpi::bootstrap::{connect, Bootstrap};
use oxmpi::config::Config;
use oxmpi::transport::shm::{cma, ShmConfig, ShmNode};

const MESSAGES: u32 = 100_000;

fn pattern(seq: u32, from: usize, i: usize) -> u8 {
    (seq as usize * 7 + i * 13 + from) as u8
}

fn size_of_msg(seq: u32, max: usize) -> usize {
    if seq & 1023 == 0 {
        max
    } else {
        4 + (seq as usize * 37) % 240
    }
}

/// Sends `count` messages to every other local rank and checks all it gets.
fn exchange(node: &ShmNode, count: u32) {
    let (me, n) = (node.local_rank(), node.local_size());
    let max = node.sender((me + 1) % n).max_payload();
    let (mut sent, mut got) = (vec![0u32; n], vec![0u32; n]);
    sent[me] = count;
    got[me] = count;
    while sent.iter().chain(&got).any(|&c| c < count) {
        let seen = node.doorbell(me).current();
        let mut busy = false;
        for p in (0..n).filter(|&p| p != me) {
            while sent[p] < count {
                let Some(mut r) = node.sender(p).try_reserve() else {
                    break;
                };
                let (seq, len) = (sent[p], size_of_msg(sent[p], max));
                let cell = r.payload();
                cell[..4].copy_from_slice(&seq.to_le_bytes());
                for (i, b) in cell[4..len].iter_mut().enumerate() {
                    *b = pattern(seq, me, i);
                }
                r.commit(len, 0);
                node.doorbell(p).ring();
                sent[p] += 1;
                busy = true;
            }
            while node
                .receiver(p)
                .try_pop(|_, b| {
                    let seq = u32::from_le_bytes(b[..4].try_into().unwrap());
                    assert_eq!(seq, got[p], "order of messages from local rank {p}");
                    assert_eq!(b.len(), size_of_msg(seq, max), "size of {seq} from {p}");
                    let ok = b[4..]
                        .iter()
                        .enumerate()
                        .all(|(i, &v)| v == pattern(seq, p, i));
                    assert!(ok, "content of message {seq} from local rank {p}");
                })
                .is_some()
            {
                got[p] += 1;
                busy = true;
                node.doorbell(p).ring(); // room freed for a sender waiting on us
            }
        }
        if !busy {
            node.doorbell(me)
                .wait(seen, Some(Duration::from_millis(50)));
        }
    }
}

/// Reads the next local rank's buffer with one CMA call over three ranges.
fn cma_check(boot: &mut dyn Bootstrap, node: &ShmNode) {
    let me = node.local_rank();
    let buf: Vec<u8> = (0..(1 << 20) + 77).map(|i| (i * 3 + me) as u8).collect();
    let key = |r: usize| format!("oxshm-buf-{r}");
    boot.put(&key(boot.rank()), &(buf.as_ptr() as usize).to_string())
        .unwrap();
    boot.fence().unwrap();
    if node.local_size() > 1 && node.cma_enabled() {
        let peer = (me + 1) % node.local_size();
        let addr: usize = boot
            .get(&key(node.ranks()[peer]))
            .unwrap()
            .unwrap()
            .parse()
            .unwrap();
        let ranges = [
            (addr + 1000, 4096),
            (addr, 1000),
            (addr + 5096, buf.len() - 5096),
        ];
        let mut got = vec![0u8; buf.len()];
        let n = cma::read_from(node.peer_pid(peer), &ranges, &mut got).unwrap();
        assert_eq!(n, buf.len());
        let want = (1000..5096).chain(0..1000).chain(5096..buf.len());
        assert!(want.zip(&got).all(|(i, &v)| v == (i * 3 + peer) as u8));
        println!("rank {} cma ok", boot.rank());
    }
    boot.fence().unwrap(); // keep `buf` alive until the reader is done
}

/// The rank side; a no-op unless run by a parent test under oxrun.
#[test]
fn role_rank() {
    let Ok(role) = std::env::var("OXSHM_ROLE") else {
        return;
    };
    let mut boot = connect().unwrap();
    let cfg = ShmConfig::from_config(&Config::from_env().unwrap());
    let node = ShmNode::establish(&mut *boot, &cfg).unwrap();
    let rank = boot.rank();
    println!("rank {rank} backing {:?}", node.backing());
    match role.as_str() {
        "exchange" => exchange(&node, MESSAGES),
        "die" if rank == 1 => {
            exchange(&node, 0);
            std::thread::sleep(Duration::from_millis(200));
            let _ = nix::sys::signal::raise(nix::sys::signal::SIGKILL);
        }
        "die" => exchange(&node, u32::MAX),
        _ => {}
    }
    cma_check(&mut *boot, &node);
    boot.finalize().unwrap();
    println!("rank {rank} OK");
}

fn oxrun() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    let oxrun = dir.join("oxrun");
    if !oxrun.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .args(["build", "-p", "oxmpi-launcher"])
            .status()
            .unwrap();
        assert!(
            st.success() && oxrun.exists(),
            "cannot build {}",
            oxrun.display()
        );
    }
    oxrun
}

/// Runs `n` ranks in `role` under oxrun; returns oxrun's pid and output.
fn launch(n: usize, role: &str, env: &[(&str, &str)]) -> (u32, Output) {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(oxrun());
    cmd.arg("-n")
        .arg(n.to_string())
        .arg(exe)
        .args(["--exact", "role_rank", "--nocapture", "--test-threads=1"])
        .env("OXSHM_ROLE", role)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = cmd.spawn().unwrap();
    let pid = child.id();
    let start = Instant::now();
    let waiter = std::thread::spawn(move || child.wait_with_output().unwrap());
    while !waiter.is_finished() {
        if start.elapsed() > Duration::from_secs(240) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::SIGKILL,
            );
            panic!("oxrun -n {n} ({role}) did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (pid, waiter.join().unwrap())
}

/// `/dev/shm` files of the job that oxrun `pid` ran.
fn leftovers(oxrun_pid: u32) -> Vec<String> {
    let prefix = format!("oxmpi-kvs_{oxrun_pid}_0-");
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|name| name.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

fn exchange_under_oxrun(memfd: &str) {
    let (pid, out) = launch(4, "exchange", &[("OXMPI_SHM_MEMFD", memfd)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "oxrun failed:\n{stdout}\n{stderr}");
    for r in 0..4 {
        assert!(
            stdout.contains(&format!("rank {r} OK")),
            "{stdout}\n{stderr}"
        );
        assert!(stdout.contains(&format!("rank {r} cma ok")), "{stdout}");
    }
    let kind = if memfd == "on" {
        "Memfd"
    } else {
        "File(\"oxmpi-kvs_"
    };
    assert!(stdout.contains(&format!("backing {kind}")), "{stdout}");
    assert_eq!(leftovers(pid), Vec::<String>::new());
}

#[test]
fn four_ranks_exchange_through_a_memfd_segment() {
    exchange_under_oxrun("on");
}

#[test]
fn four_ranks_exchange_through_a_dev_shm_file() {
    exchange_under_oxrun("off");
}

#[test]
fn a_killed_rank_leaves_nothing_in_dev_shm() {
    for memfd in ["off", "on"] {
        let (pid, out) = launch(4, "die", &[("OXMPI_SHM_MEMFD", memfd)]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "the job must fail: {stdout}");
        assert!(stdout.contains("rank 1 backing"), "{stdout}");
        assert_eq!(leftovers(pid), Vec::<String>::new());
    }
}

#[test]
fn a_stale_file_of_a_dead_creator_is_removed_at_the_next_start() {
    let mut child = Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let fake = Path::new("/dev/shm").join(format!("oxmpi-kvs_0_0-0-{dead}-00000000deadbeef"));
    std::fs::write(&fake, b"stale").unwrap();
    let (_, out) = launch(2, "establish", &[("OXMPI_SHM_MEMFD", "off")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!fake.exists(), "{} survived", fake.display());
}
