//! Host facts reported by `oxrun --info`.
//!
//! [`HostReport::gather`] asks each part of the runtime what it knows about
//! this host (topology, libfabric, CUDA, NVRTC, transports, tunables). It
//! never fails: a part that cannot answer records its error text, and the
//! report prints it.

use std::fmt;

use crate::config;
use crate::machine::Machine;
use crate::mem::cuda_probe::{self, GpuProbe, NvrtcProbe};
use crate::transport::ofi;

/// How far along a transport is.
///
/// ```
/// use oxmpi::info::{TransportState, TRANSPORTS};
/// let used: Vec<&str> = TRANSPORTS
///     .iter()
///     .filter(|t| t.state == TransportState::Used)
///     .map(|t| t.name)
///     .collect();
/// assert!(used.contains(&"shm"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportState {
    /// Compiled in and used to move messages.
    Used,
    /// Does not move messages yet: not implemented, or only a probe of what
    /// it will need exists (the note says which).
    Planned,
}

/// One transport and what it does today.
///
/// ```
/// use oxmpi::info::{TransportInfo, TRANSPORTS};
/// let shm: &TransportInfo = TRANSPORTS.iter().find(|t| t.name == "shm").unwrap();
/// println!("{}: {}", shm.name, shm.note);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransportInfo {
    /// Its name, as in `transport/`.
    pub name: &'static str,
    /// How far along it is.
    pub state: TransportState,
    /// What it is for, or what is missing.
    pub note: &'static str,
}

/// Every transport the runtime knows, with its honest state. Whoever makes a
/// transport carry messages updates its row.
///
/// See the examples on [`TransportInfo`] and [`TransportState`].
pub static TRANSPORTS: &[TransportInfo] = &[
    TransportInfo {
        name: "self",
        state: TransportState::Used,
        note: "messages a rank sends to itself, handled inside the engine",
    },
    TransportInfo {
        name: "shm",
        state: TransportState::Used,
        note: "ranks on the same host: memfd segment, cell rings, futex doorbells, CMA single copy",
    },
    TransportInfo {
        name: "ofi",
        state: TransportState::Used,
        note: "ranks on other hosts: a libfabric RDM endpoint (tagged, send-after-send order; net where offered, else libfabric's first; OXMPI_OFI_PROVIDER / FI_PROVIDER override; on the interface holding the address oxrun reached the host at, OXMPI_OFI_ADDR / OXMPI_OFI_IFACE), credit flow control, large messages by RMA read of the sender's buffer or by tagged send into the receive buffer (OXMPI_OFI_RNDV), buffers registered as the provider requires (FI_MR_LOCAL; OXMPI_OFI_MR=register forces it)",
    },
    TransportInfo {
        name: "cuda_ipc",
        state: TransportState::Used,
        note: "device buffers between ranks of one host: large messages by CUDA IPC (the receiver maps the sender's allocation, cached by buffer id, and copies once; OXMPI_CUDA_IPC, OXMPI_CUDA_IPC_MIN); other device messages through host memory",
    },
];

/// What libfabric reports.
///
/// ```
/// let fabric = oxmpi::info::HostReport::gather().fabric;
/// match &fabric.library_version {
///     Ok(v) => println!("libfabric {v}, providers {:?}", fabric.providers),
///     Err(why) => println!("no libfabric: {why}"),
/// }
/// ```
#[derive(Debug)]
pub struct FabricReport {
    /// The loaded library's version, or why libfabric is unavailable (not
    /// compiled in, or not loadable).
    pub library_version: Result<String, String>,
    /// The API version requested from `fi_getinfo`; `None` when not
    /// compiled in.
    pub api_version: Option<String>,
    /// Distinct provider names, or why they could not be listed.
    pub providers: Result<Vec<String>, String>,
    /// The provider jobs across hosts use, in words (see
    /// `transport::ofi::provider_between_hosts`).
    pub between_hosts: String,
}

/// Everything `oxrun --info` says about this host.
///
/// ```
/// use oxmpi::info::HostReport;
/// let report = HostReport::gather();
/// if let Ok(machine) = &report.machine {
///     assert!(machine.pus() >= 1);
/// }
/// assert_eq!(report.transports.len(), oxmpi::info::TRANSPORTS.len());
/// print!("{report}"); // what `oxrun --info` prints
/// ```
#[derive(Debug)]
pub struct HostReport {
    /// The host name, or why it could not be read.
    pub hostname: Result<String, String>,
    /// Cores, PUs, packages, NUMA nodes, or why they could not be probed.
    pub machine: Result<Machine, String>,
    /// libfabric version and providers.
    pub fabric: FabricReport,
    /// The CUDA driver probe.
    pub gpu: GpuProbe,
    /// The NVRTC probe.
    pub nvrtc: NvrtcProbe,
    /// Whether device messages between ranks of this host can go by CUDA
    /// IPC, and from which size (from the probe and the settings).
    pub cuda_ipc: String,
    /// The transports and their state.
    pub transports: &'static [TransportInfo],
    /// Every tunable with its current value.
    pub config: config::Listing,
}

impl HostReport {
    /// Gathers the report. Never fails and never panics: each part that
    /// cannot answer records its error text.
    ///
    /// See the example on [`HostReport`].
    pub fn gather() -> HostReport {
        let gpu = cuda_probe::probe_gpu();
        HostReport {
            hostname: nix::unistd::gethostname()
                .map_err(|e| format!("gethostname: {e}"))
                .map(|h| h.to_string_lossy().into_owned()),
            machine: Machine::probe().map_err(|e| e.to_string()),
            fabric: fabric_report(),
            gpu: gpu.clone(),
            nvrtc: cuda_probe::probe_nvrtc(),
            cuda_ipc: ipc_state(&gpu),
            transports: TRANSPORTS,
            config: config::listing_with(crate::coll::select::OVERRIDES),
        }
    }
}

fn fabric_report() -> FabricReport {
    let providers = ofi::providers().map_err(|e| e.to_string());
    let configured = config::get(&config::OFI_PROVIDER).unwrap_or_default();
    let between_hosts = match &providers {
        Ok(found) => ofi::provider_between_hosts(&configured, found),
        Err(_) => "none".into(),
    };
    FabricReport {
        library_version: ofi::library_version().map_err(|e| e.to_string()),
        api_version: ofi::api_version(),
        providers,
        between_hosts,
    }
}

/// What CUDA IPC does on this host, in words.
fn ipc_state(gpu: &GpuProbe) -> String {
    if gpu.why_absent.is_some() {
        return "unavailable (no CUDA device: see the cuda line)".into();
    }
    match (
        config::get(&config::CUDA_IPC),
        config::get(&config::CUDA_IPC_MIN),
    ) {
        (Ok(false), _) => "off (OXMPI_CUDA_IPC=0): device messages go through host memory".into(),
        (Ok(true), Ok(min)) => format!(
            "device messages of {min} bytes and more to ranks of this host (OXMPI_CUDA_IPC_MIN)"
        ),
        (Err(e), _) | (_, Err(e)) => format!("unknown ({e})"),
    }
}

/// Cores whose binding sets are printed one by one; more are summarised.
const CORES_SHOWN: usize = 16;

impl fmt::Display for HostReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.hostname {
            Ok(name) => writeln!(f, "host:       {name}")?,
            Err(e) => writeln!(f, "host:       unknown ({e})")?,
        }
        match &self.machine {
            Ok(machine) => {
                writeln!(f, "topology:   {machine}")?;
                write_cores(f, machine)?;
            }
            Err(e) => writeln!(f, "topology:   unavailable ({e})")?,
        }
        write_fabric(f, &self.fabric)?;
        writeln!(f, "cuda:       {}", self.gpu)?;
        writeln!(f, "nvrtc:      {}", self.nvrtc)?;
        writeln!(f, "cuda ipc:   {}", self.cuda_ipc)?;
        writeln!(f, "transports:")?;
        for t in self.transports {
            let state = match t.state {
                TransportState::Used => "used",
                TransportState::Planned => "planned",
            };
            writeln!(f, "  {:<9} {:<13} {}", t.name, state, t.note)?;
        }
        writeln!(f, "config:")?;
        write!(f, "{}", self.config)
    }
}

fn write_cores(f: &mut fmt::Formatter<'_>, machine: &Machine) -> fmt::Result {
    let cores = machine.cores();
    let shown: Vec<String> = cores
        .iter()
        .take(CORES_SHOWN)
        .map(|c| {
            let os = c.os_index.map_or("?".to_string(), |i| i.to_string());
            let pus: Vec<String> = c.pus.iter().map(usize::to_string).collect();
            format!("{os}:[{}]", pus.join(","))
        })
        .collect();
    write!(f, "  core:PUs   {}", shown.join(" "))?;
    if cores.len() > CORES_SHOWN {
        write!(f, " ... ({} more)", cores.len() - CORES_SHOWN)?;
    }
    writeln!(f)
}

fn write_fabric(f: &mut fmt::Formatter<'_>, fabric: &FabricReport) -> fmt::Result {
    match (&fabric.library_version, &fabric.api_version) {
        (Ok(lib), Some(api)) => write!(f, "libfabric:  {lib} (API {api} requested)")?,
        (Ok(lib), None) => write!(f, "libfabric:  {lib}")?,
        // The providers fail for the same reason; say it once.
        (Err(e), _) => return writeln!(f, "libfabric:  unavailable ({e})"),
    }
    match &fabric.providers {
        Ok(names) if names.is_empty() => writeln!(f, "; no providers found")?,
        Ok(names) => writeln!(f, "; providers: {}", names.join(", "))?,
        Err(e) => return writeln!(f, "; providers unavailable ({e})"),
    }
    writeln!(f, "  between hosts: {}", fabric.between_hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_and_print() {
        let report = HostReport::gather();
        let text = report.to_string();
        for heading in [
            "host:",
            "topology:",
            "libfabric:",
            "cuda:",
            "nvrtc:",
            "cuda ipc:",
            "transports:",
            "config:",
        ] {
            assert!(text.contains(heading), "{heading} missing from\n{text}");
        }
        for t in TRANSPORTS {
            assert!(text.contains(t.name), "{text}");
        }
        assert!(text.contains("OXMPI_EAGER_LIMIT"), "{text}");
    }

    /// Writes one fabric report the way `--info` prints it.
    struct Fabric<'a>(&'a FabricReport);

    impl fmt::Display for Fabric<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_fabric(f, self.0)
        }
    }

    #[test]
    fn fabric_line_says_why_libfabric_is_unavailable() {
        let reason = "libfabric not loadable: libfabric.so.1: cannot open shared object file";
        let report = FabricReport {
            library_version: Err(reason.into()),
            api_version: Some("1.17".into()),
            providers: Err(reason.into()),
            between_hosts: "none".into(),
        };
        assert_eq!(
            Fabric(&report).to_string(),
            format!("libfabric:  unavailable ({reason})\n")
        );
        let report = FabricReport {
            library_version: Ok("1.17".into()),
            api_version: Some("1.17".into()),
            providers: Ok(vec!["tcp".into(), "shm".into()]),
            between_hosts: "tcp (libfabric's first: no net here)".into(),
        };
        assert_eq!(
            Fabric(&report).to_string(),
            "libfabric:  1.17 (API 1.17 requested); providers: tcp, shm\n  \
             between hosts: tcp (libfabric's first: no net here)\n"
        );
    }
}
