//! The GPU path without a GPU: CUDA device buffers through the C ABI on the
//! workspace's CUDA driver test double (`tests/cuda-double`, installed as
//! `libcuda.so.1` on the library path). Device memory there is unreadable
//! by the CPU, so any path that touches a device pointer crashes the rank;
//! its kernels are `kernels/cuda/reduce.cu` compiled for the host, and
//! `CUDA_DOUBLE_LOG` names every kernel launched, which shows reductions
//! ran on the "device". NVRTC (the PyPI wheel `scripts/setup.sh` installs)
//! compiles the kernels as on a real machine.
//!
//! Run with `cargo build --workspace && cargo test -p oxmpi-tests --test gpu`.

#[path = "c_abi_harness/mod.rs"]
mod harness;

use std::process::Command;

use cudarc::driver::CudaContext;
use harness::double::{double_dir, nvrtc_dir};
use harness::*;
use oxmpi::coll::select::Coll;
use oxmpi::ops::Op;
use oxmpi_tests::role_job;

/// What a run printed, the kernels the double launched and how many IPC
/// mappings it made.
struct GpuRun {
    out: JobOutcome,
    kernels: Vec<String>,
    ipc_opens: usize,
}

/// Runs `name` (built `way`) with `ranks` ranks on the double, with extra
/// environment `env`.
fn run_on_double(name: &str, way: Way, ranks: usize, env: &[(&str, &str)]) -> GpuRun {
    let exe = build(name, way);
    let scratch = ScratchDir::new();
    let log = scratch.path().join("kernels.log");
    let mut path = vec![double_dir(), nvrtc_dir()];
    if way == Way::MpichBinary {
        path.insert(0, prefix().join("lib"));
    }
    let mut cmd = Command::new(oxrun());
    cmd.arg("-n")
        .arg(ranks.to_string())
        .arg(&exe)
        .current_dir(scratch.path())
        .env("TMPDIR", scratch.path())
        .env("LD_LIBRARY_PATH", std::env::join_paths(&path).unwrap())
        .env("CUDA_DOUBLE_LOG", &log);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run_command(cmd, JOB_TIMEOUT);
    assert!(
        !out.timed_out,
        "{name} ({way:?}) with {ranks} ranks hung\n{}",
        out.describe()
    );
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    let events = |what: &str| -> Vec<String> {
        log.lines()
            .filter(|l| l.starts_with(what))
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
            .collect()
    };
    GpuRun {
        out,
        kernels: events("launch "),
        ipc_opens: events("ipc_open ").len(),
    }
}

fn assert_passed(run: &GpuRun, name: &str, what: &str) {
    let pass = format!("PASS {name}");
    assert!(
        run.out.success() && run.out.stdout.lines().any(|l| l.trim_end() == pass),
        "{name} {what} failed\n{}",
        run.out.describe()
    );
    assert!(
        !run.out.outlived,
        "{name} {what}: processes outlived the launcher\n{}",
        run.out.describe()
    );
}

/// The reductions of gpu_buffers.c that run as device kernels: SUM/MAX/
/// MIN/PROD on doubles, SUM on floats and long longs, MAX on ints (the
/// reduce-scatter).
const BUFFERS_KERNELS: [&str; 7] = [
    "oxmpi_sum_f64",
    "oxmpi_max_f64",
    "oxmpi_min_f64",
    "oxmpi_prod_f64",
    "oxmpi_sum_f32",
    "oxmpi_sum_i64",
    "oxmpi_max_i32",
];

/// Each of `kernels` was launched on the device in `run` (`what` names
/// the run). One rank reduces nothing (no partner), so callers check from
/// 2 ranks.
fn assert_launched(run: &GpuRun, what: &str, kernels: &[&str]) {
    for kernel in kernels {
        assert!(
            run.kernels.iter().any(|k| k == kernel),
            "{what}: {kernel} was never launched on the device; launched: {:?}\n{}",
            run.kernels,
            run.out.describe()
        );
    }
}

/// gpu_buffers.c's reductions ran as device kernels (from 2 ranks).
fn assert_device_reductions(run: &GpuRun, ranks: usize) {
    if ranks >= 2 {
        assert_launched(run, &format!("{ranks} ranks"), &BUFFERS_KERNELS);
    }
}

fn check_gpu_buffers(way: Way) {
    // Large device messages between ranks of the host went by CUDA IPC: at
    // least the three reallocated buffers were mapped.
    check_program("gpu_buffers", way, &BUFFERS_KERNELS, 3);
}

/// With `OXMPI_CUDA_IPC_MIN=1` every device message between ranks of the
/// host goes by CUDA IPC, collectives' steps included: same results (also
/// for every send mode, probe, partitioned and truncated receive of
/// gpu_calls.c and every collective of gpu_colls.c).
#[test]
fn every_device_message_by_ipc() {
    for ranks in [2, 4] {
        for name in ["gpu_buffers", "gpu_calls", "gpu_colls"] {
            let run = run_on_double(
                name,
                Way::MpichBinary,
                ranks,
                &[("OXMPI_CUDA_IPC_MIN", "1")],
            );
            assert_passed(&run, name, &format!("(all by IPC, {ranks} ranks)"));
            if name == "gpu_buffers" {
                assert_device_reductions(&run, ranks);
            }
            assert!(
                run.ipc_opens > 3 * ranks,
                "{name}, {ranks} ranks: only {} IPC mappings",
                run.ipc_opens
            );
        }
    }
}

/// With `OXMPI_CUDA_IPC=0` every device message goes through host memory:
/// same results, no IPC mapping; also with every device message through the
/// pinned-memory pipeline in 4 KiB chunks (point-to-point and collective
/// steps).
#[test]
fn device_buffers_without_ipc() {
    let no_ipc = [("OXMPI_CUDA_IPC", "0")];
    let piped = [
        ("OXMPI_CUDA_IPC", "0"),
        ("OXMPI_CUDA_PIPELINE_MIN", "1"),
        ("OXMPI_CUDA_PIPELINE_CHUNK", "4k"),
    ];
    for (ranks, env) in [
        (2, &no_ipc[..]),
        (3, &no_ipc[..]),
        (3, &piped[..]),
        (4, &piped[..]),
    ] {
        for name in ["gpu_buffers", "gpu_calls", "gpu_colls"] {
            let run = run_on_double(name, Way::MpichBinary, ranks, env);
            assert_passed(&run, name, &format!("({env:?}, {ranks} ranks)"));
            assert_eq!(
                run.ipc_opens, 0,
                "{name}: OXMPI_CUDA_IPC=0 still mapped buffers"
            );
        }
    }
}

/// An MPICH-built program on OxMPI's library.
#[test]
fn mpich_binary_with_device_buffers() {
    check_gpu_buffers(Way::MpichBinary);
}

/// The same program built with OxMPI's `mpicc`.
#[test]
fn our_mpicc_with_device_buffers() {
    check_gpu_buffers(Way::Ours);
}

/// Runs `name` built `way` at 1-4 ranks; from 2 ranks, each of `kernels`
/// was launched on the device and at least `min_ipc_opens` IPC mappings
/// were made.
fn check_program(name: &str, way: Way, kernels: &[&str], min_ipc_opens: usize) {
    for ranks in 1..=MAX_RANKS {
        let run = run_on_double(name, way, ranks, &[]);
        let what = format!("{name} ({way:?}, {ranks} ranks)");
        assert_passed(&run, name, &what);
        if ranks < 2 {
            continue;
        }
        assert_launched(&run, &what, kernels);
        assert!(
            run.ipc_opens >= min_ipc_opens,
            "{what}: {} IPC mappings, expected at least {min_ipc_opens}\n{}",
            run.ipc_opens,
            run.out.describe()
        );
    }
}

/// gpu_calls.c: point-to-point in every mode and packing, on device
/// buffers (no reductions).
fn check_gpu_calls(way: Way) {
    check_program("gpu_calls", way, &[], 0);
}

/// gpu_colls.c: every collective, blocking, non-blocking and persistent,
/// on device buffers. Its fp16 and bf16 sums and its scans (the program's
/// only SUM and MAX on ints) ran as device kernels; MPICH 4.0's mpi.h has
/// no `MPIX_BFLOAT16`, so only our build sums bfloat16.
fn check_gpu_colls(way: Way) {
    let mut kernels = vec!["oxmpi_sum_f16", "oxmpi_sum_i32", "oxmpi_max_i32"];
    if way == Way::Ours {
        kernels.push("oxmpi_sum_bf16");
    }
    check_program("gpu_colls", way, &kernels, 0);
}

/// gpu_calls.c built with MPICH's `mpicc.mpich`, on OxMPI's library.
#[test]
fn mpich_binary_with_device_calls() {
    check_gpu_calls(Way::MpichBinary);
}

/// gpu_calls.c built with OxMPI's `mpicc`.
#[test]
fn our_mpicc_with_device_calls() {
    check_gpu_calls(Way::Ours);
}

/// gpu_colls.c built with MPICH's `mpicc.mpich`, on OxMPI's library.
#[test]
fn mpich_binary_with_device_collectives() {
    check_gpu_colls(Way::MpichBinary);
}

/// gpu_colls.c built with OxMPI's `mpicc`.
#[test]
fn our_mpicc_with_device_collectives() {
    check_gpu_colls(Way::Ours);
}

/// gpu_rma.c: one-sided communication with device origin, result and
/// compare buffers, and on windows over device memory (created and
/// attached): every operation under fence, lock / flush and PSCW. From 2
/// ranks, peers reached device windows through CUDA IPC.
fn check_gpu_rma(way: Way) {
    check_program("gpu_rma", way, &[], 2);
}

/// gpu_rma.c built with MPICH's `mpicc.mpich`, on OxMPI's library.
#[test]
fn mpich_binary_with_device_rma() {
    check_gpu_rma(Way::MpichBinary);
}

/// gpu_rma.c built with OxMPI's `mpicc`.
#[test]
fn our_mpicc_with_device_rma() {
    check_gpu_rma(Way::Ours);
}

/// gpu_colls.c with every collective algorithm forced in turn
/// (`OXMPI_<COLL>_ALGO` for each collective that has it; one that does not
/// apply falls back), at 3 and 4 ranks: each schedule runs on the device.
#[test]
fn device_collectives_under_every_algorithm() {
    let mut names: Vec<&str> = Coll::ALL
        .iter()
        .flat_map(|c| c.algos().iter().map(|a| a.name))
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let vars: Vec<(String, &str)> = Coll::ALL
            .iter()
            .filter(|c| c.algos().iter().any(|a| a.name == name))
            .map(|c| (format!("OXMPI_{}_ALGO", c.name().to_uppercase()), name))
            .collect();
        let env: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        for ranks in [3, 4] {
            let run = run_on_double("gpu_colls", Way::Ours, ranks, &env);
            assert_passed(
                &run,
                "gpu_colls",
                &format!("({name} forced, {ranks} ranks)"),
            );
        }
    }
}

/// `OXMPI_CUDA=on` without a driver fails at `MPI_Init` with a message that
/// says why; `off` with the double present makes device buffers unknown, so
/// `MPIX_Query_cuda_support()` reads 0 (the program reports it and fails).
#[test]
fn cuda_modes() {
    let exe = build("gpu_buffers", Way::MpichBinary);
    let scratch = ScratchDir::new();
    let mut cmd = Command::new(oxrun());
    cmd.args(["-n", "1"])
        .arg(&exe)
        .current_dir(scratch.path())
        .env("TMPDIR", scratch.path())
        .env("LD_LIBRARY_PATH", prefix().join("lib"))
        .env("OXMPI_CUDA", "on");
    let out = run_command(cmd, JOB_TIMEOUT);
    // Without libcuda the program itself stops first, before MPI_Init.
    assert!(!out.success(), "{}", out.describe());

    let hello = build("env", Way::MpichBinary);
    let mut cmd = Command::new(oxrun());
    cmd.args(["-n", "1"])
        .arg(&hello)
        .current_dir(scratch.path())
        .env("TMPDIR", scratch.path())
        .env("LD_LIBRARY_PATH", prefix().join("lib"))
        .env("OXMPI_CUDA", "on");
    let out = run_command(cmd, JOB_TIMEOUT);
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(
        !out.success() && text.contains("OXMPI_CUDA=on") && text.contains("no usable CUDA device"),
        "OXMPI_CUDA=on without a driver must fail naming why\n{}",
        out.describe()
    );

    let run = run_on_double("gpu_buffers", Way::MpichBinary, 1, &[("OXMPI_CUDA", "off")]);
    assert!(
        !run.out.success() && run.out.stderr.contains("MPIX_Query_cuda_support() = 0"),
        "OXMPI_CUDA=off must report no CUDA support\n{}",
        run.out.describe()
    );
}

/// Entry point of the child ranks of the Rust API roles; a no-op in a
/// normal test run.
#[test]
fn role_entry() {
    if let Ok(role) = std::env::var(oxmpi_tests::ROLE_VAR) {
        assert_eq!(role, "device_slices", "unknown role {role}");
        device_slices_role();
    }
}

/// cudarc device slices through the Rust API: send/recv around a ring,
/// bcast, allreduce (SUM on f32 and MAX on i64: device kernels), reduce
/// and allgather, each checked against the serial result.
fn device_slices_role() {
    let universe = oxmpi::init().expect("init");
    let world = universe.world();
    let (me, p) = (world.rank(), world.size());
    let stream = CudaContext::new(0).expect("context").default_stream();

    let n = 1000;
    let mine: Vec<f32> = (0..n).map(|i| (me * 1000 + i) as f32).collect();
    let dmine = stream.clone_htod(&mine).unwrap();
    let mut got = stream.alloc_zeros::<f32>(n as usize).unwrap();
    let (right, left) = ((me + 1) % p, (me + p - 1) % p);
    if me % 2 == 0 {
        world.send_device(&dmine, right, 1).unwrap();
        world.recv_device(&mut got, left, 1).unwrap();
    } else {
        world.recv_device(&mut got, left, 1).unwrap();
        world.send_device(&dmine, right, 1).unwrap();
    }
    let want: Vec<f32> = (0..n).map(|i| (left * 1000 + i) as f32).collect();
    assert_eq!(stream.clone_dtoh(&got).unwrap(), want, "ring send/recv");

    let mut b = stream.clone_htod(&[me + 5; 7]).unwrap();
    world.bcast_device(&mut b, p - 1).unwrap();
    assert_eq!(stream.clone_dtoh(&b).unwrap(), [p + 4; 7], "bcast");

    let mut sum = stream.alloc_zeros::<f32>(n as usize).unwrap();
    world.allreduce_device(&dmine, &mut sum, &Op::SUM).unwrap();
    let want: Vec<f32> = (0..n)
        .map(|i| (0..p).map(|r| (r * 1000 + i) as f32).sum())
        .collect();
    assert_eq!(stream.clone_dtoh(&sum).unwrap(), want, "allreduce sum");

    let big = stream.clone_htod(&[me as i64 * 3 - 7; 33]).unwrap();
    let mut max = stream.alloc_zeros::<i64>(33).unwrap();
    world.reduce_device(&big, &mut max, &Op::MAX, 0).unwrap();
    if me == 0 {
        assert_eq!(
            stream.clone_dtoh(&max).unwrap(),
            [(p as i64 - 1) * 3 - 7; 33],
            "reduce max"
        );
    }

    let block = stream.clone_htod(&[me as u8; 3]).unwrap();
    let mut all = stream.alloc_zeros::<u8>(3 * p as usize).unwrap();
    world.allgather_device(&block, &mut all).unwrap();
    let want: Vec<u8> = (0..p as u8).flat_map(|r| [r; 3]).collect();
    assert_eq!(stream.clone_dtoh(&all).unwrap(), want, "allgather");
    world.barrier().unwrap();
}

/// The Rust API with cudarc device slices, on the double, at 1-4 ranks;
/// the reductions ran as device kernels.
#[test]
fn rust_api_with_device_slices() {
    let scratch = ScratchDir::new();
    let log = scratch.path().join("kernels.log");
    let path = std::env::join_paths([double_dir(), nvrtc_dir()]).unwrap();
    for ranks in 1..=MAX_RANKS {
        let _ = std::fs::remove_file(&log);
        let env = [
            ("LD_LIBRARY_PATH", path.clone()),
            ("CUDA_DOUBLE_LOG", log.clone().into_os_string()),
        ];
        let out = role_job(&oxrun(), ranks, "device_slices", &env, JOB_TIMEOUT);
        assert!(
            out.success(),
            "device_slices at {ranks} ranks\n{}",
            out.describe()
        );
        let kernels = std::fs::read_to_string(&log).unwrap_or_default();
        if ranks > 1 {
            for k in ["oxmpi_sum_f32", "oxmpi_max_i64"] {
                assert!(
                    kernels.contains(k),
                    "{ranks} ranks: {k} not launched:\n{kernels}"
                );
            }
        }
    }
}
