//! CUDA device buffers across hosts: the MPICH-built GPU programs of
//! `tests/c_abi/` on OxMPI's library and the CUDA driver test double (see
//! gpu.rs), with ranks on two namespace hosts. With `OXMPI_CUDA_IPC_MIN=1`
//! every device message between ranks of one host goes by CUDA IPC; the
//! double's IPC reaches across the fake hosts (they share one kernel, so
//! `/proc/<pid>/fd` does), so a message routed by what is reachable rather
//! than by host would show as an IPC mapping in a 1+1 job. There none may
//! be made; in a 2+2 job by slot, the same-host pairs must make some.

use std::process::Command;

use oxmpi_tests::{oxrun, run_command, ScratchDir};

use super::harness::{self, double};
use super::{hosts, LAYOUTS, LIMIT};

/// The programs, all with device buffers in point-to-point (every send
/// mode, probe, partitioned and truncated receives) and collectives.
const PROGRAMS: [&str; 3] = ["gpu_buffers", "gpu_calls", "gpu_colls"];

#[test]
fn device_buffers_across_hosts() {
    let Some(h) = hosts(2, "device_buffers_across_hosts") else {
        return;
    };
    let path = std::env::join_paths([
        harness::prefix().join("lib"),
        double::double_dir(),
        double::nvrtc_dir(),
    ])
    .unwrap();
    for name in PROGRAMS {
        let exe = harness::build(name, harness::Way::MpichBinary);
        for layout in LAYOUTS {
            let scratch = ScratchDir::new();
            let log = scratch.path().join("double.log");
            let mut cmd = Command::new(oxrun());
            cmd.args(h.oxrun_args(layout.ranks))
                .args(layout.extra)
                .args(["-x", &format!("LD_LIBRARY_PATH={}", path.to_string_lossy())])
                .args(["-x", &format!("CUDA_DOUBLE_LOG={}", log.display())])
                .args(["-x", "OXMPI_CUDA_IPC_MIN=1"])
                .arg(&exe);
            let out = run_command(cmd, LIMIT);
            assert!(
                out.success() && out.stdout.contains(&format!("PASS {name}")),
                "{name} on {}:\n{}",
                layout.name,
                out.describe()
            );
            let opens = std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .filter(|l| l.starts_with("ipc_open "))
                .count();
            match layout.name {
                "1+1" => assert_eq!(
                    opens, 0,
                    "{name} on 1+1: device messages between hosts went by CUDA IPC"
                ),
                "2+2 by slot" => assert!(
                    opens > 0,
                    "{name} on 2+2 by slot: no CUDA IPC between ranks of one host"
                ),
                _ => {}
            }
        }
    }
}
