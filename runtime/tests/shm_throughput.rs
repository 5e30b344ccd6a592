//! Ring throughput between two processes under `oxrun` (ignored by default;
//! meaningful in release builds):
//!
//! ```text
//! cargo build --release -p oxmpi-launcher
//! cargo test --release -p oxmpi --test shm_throughput -- --ignored --nocapture
//! ```
//!
//! Rank 0 pushes full cells from a source buffer for two seconds; rank 1 pops
//! each one and copies it out (as an eager receive would); rank 1 reports
//! messages/s and GB/s. Run for 64-byte and 8 KiB cells.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use oxmpi::bootstrap::connect;
use oxmpi::config::Config;
use oxmpi::transport::shm::{ShmConfig, ShmNode};

const END: u32 = 1;

fn send(node: &ShmNode, cell: usize) {
    let src = vec![0x5au8; cell];
    let tx = node.sender(1);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
        for _ in 0..1024 {
            while !tx.try_push(0, &[&src]) {
                std::hint::spin_loop();
            }
        }
    }
    while !tx.try_push(END, &[]) {
        std::hint::spin_loop();
    }
}

fn receive(node: &ShmNode, cell: usize) {
    let mut dst = vec![0u8; cell];
    let rx = node.receiver(0);
    let (mut count, mut bytes, mut start) = (0u64, 0u64, None);
    loop {
        match rx.try_pop(|flags, b| {
            dst[..b.len()].copy_from_slice(b);
            (flags, b.len())
        }) {
            Some((END, _)) => break,
            Some((_, len)) => {
                start.get_or_insert_with(Instant::now);
                count += 1;
                bytes += len as u64;
            }
            None => std::hint::spin_loop(),
        }
    }
    let secs = start.map_or(0.0, |s| s.elapsed().as_secs_f64());
    println!(
        "THROUGHPUT cell={cell} cells/ring={} msgs/s={:.3e} GB/s={:.2} (n={count})",
        node.layout().cells(),
        count as f64 / secs,
        bytes as f64 / secs / 1e9
    );
}

/// The rank side; a no-op unless run under oxrun by `throughput`.
#[test]
fn role_rank() {
    if std::env::var("OXSHM_ROLE").as_deref() != Ok("throughput") {
        return;
    }
    let mut boot = connect().unwrap();
    let cfg = ShmConfig::from_config(&Config::from_env().unwrap());
    let node = ShmNode::establish(&mut *boot, &cfg).unwrap();
    let cell = node.layout().cell_size();
    match node.local_rank() {
        0 => send(&node, cell),
        _ => receive(&node, cell),
    }
    boot.fence().unwrap();
    boot.finalize().unwrap();
}

#[test]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
fn throughput() {
    let exe = std::env::current_exe().unwrap();
    let oxrun = exe.parent().and_then(Path::parent).unwrap().join("oxrun");
    assert!(oxrun.exists(), "build oxrun first: {}", oxrun.display());
    for cell in ["64", "8k"] {
        let out = Command::new(&oxrun)
            .args(["-n", "2"])
            .arg(&exe)
            .args(["--exact", "role_rank", "--nocapture"])
            .env("OXSHM_ROLE", "throughput")
            .env("OXMPI_SHM_CELL_SIZE", cell)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in stdout.lines().filter(|l| l.contains("THROUGHPUT")) {
            println!("{line}");
        }
    }
}
