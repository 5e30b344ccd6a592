//! The typed registry of every tunable.
//!
//! Each tunable is a static [`Setting<T>`]: a name, its `OXMPI_*` environment
//! variable, a default (as text, parsed like the variable), a doc line and a
//! [`Kind`]. [`REGISTRY`] lists them all; `oxrun --info` prints
//! [`listing()`]. Nothing else in the runtime calls `getenv` for a tunable:
//! read one with [`get`], or load them all once with [`Config::from_env`].
//! A bad value is an error naming the variable and the value, never a silent
//! default.

use std::fmt;
use std::marker::PhantomData;

use thiserror::Error as ThisError;

/// What kind of value a tunable takes (how it is parsed and documented).
///
/// ```
/// use oxmpi::config::{Kind, DEBUG, DEBUG_CATEGORIES};
/// use oxmpi::config::{CMA_PTRACER, CMA_PTRACERS, RNDV_PROTOCOL, RNDV_PROTOCOLS};
/// assert_eq!(DEBUG.entry.kind, Kind::List(DEBUG_CATEGORIES));
/// assert_eq!(CMA_PTRACER.entry.kind, Kind::List(CMA_PTRACERS));
/// assert_eq!(RNDV_PROTOCOL.entry.kind, Kind::List(RNDV_PROTOCOLS));
/// use oxmpi::config::{OFI_MR, OFI_MRS, OFI_RNDV, OFI_RNDVS};
/// assert_eq!(OFI_MR.entry.kind, Kind::List(OFI_MRS));
/// assert_eq!(OFI_RNDV.entry.kind, Kind::List(OFI_RNDVS));
/// assert_eq!(Kind::Bytes.to_string(), "bytes");
/// assert_eq!(Kind::List(&["a", "b"]).to_string(), "list of a|b");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `1/0`, `true/false`, `yes/no`, `on/off` (any case).
    Bool,
    /// A byte count: a plain number or one with a `k`/`m`/`g` suffix (powers of 1024).
    Bytes,
    /// A plain count.
    Count,
    /// A comma-separated list whose items must come from the given set.
    List(&'static [&'static str]),
    /// A file path (any text; empty means unset).
    Path,
    /// A name passed on as it is (any text; empty means unset).
    Text,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::Bool => f.write_str("bool"),
            Kind::Bytes => f.write_str("bytes"),
            Kind::Count => f.write_str("count"),
            Kind::List(items) => write!(f, "list of {}", items.join("|")),
            Kind::Path => f.write_str("path"),
            Kind::Text => f.write_str("text"),
        }
    }
}

/// One registry entry, untyped: what `--info` prints.
///
/// ```
/// use oxmpi::config::{Kind, EAGER_LIMIT};
/// let e = &EAGER_LIMIT.entry;
/// assert_eq!((e.name, e.env), ("eager_limit", "OXMPI_EAGER_LIMIT"));
/// assert_eq!((e.default, e.kind), ("64k", Kind::Bytes));
/// ```
#[derive(Debug)]
pub struct Entry {
    /// Short name, e.g. `eager_limit`.
    pub name: &'static str,
    /// The environment variable, e.g. `OXMPI_EAGER_LIMIT`.
    pub env: &'static str,
    /// The default, written as the variable would be.
    pub default: &'static str,
    /// One line saying what it does.
    pub doc: &'static str,
    /// How the value is parsed.
    pub kind: Kind,
}

/// A tunable whose value has type `T`.
///
/// ```
/// use oxmpi::config::{get_from, Entry, Kind, Setting};
/// static RETRIES: Setting<usize> = Setting::new(Entry {
///     name: "retries",
///     env: "MYAPP_RETRIES",
///     default: "3",
///     doc: "how often to retry",
///     kind: Kind::Count,
/// });
/// assert_eq!(get_from(&RETRIES, |_: &str| Ok(None))?, 3);
/// assert_eq!(get_from(&RETRIES, |_: &str| Ok(Some("5".into())))?, 5);
/// # Ok::<(), oxmpi::config::ConfigError>(())
/// ```
#[derive(Debug)]
pub struct Setting<T> {
    /// Its registry entry.
    pub entry: Entry,
    _type: PhantomData<fn() -> T>,
}

impl<T> Setting<T> {
    /// Declares a tunable (for the statics below).
    ///
    /// See the example on [`Setting`].
    pub const fn new(entry: Entry) -> Self {
        Setting {
            entry,
            _type: PhantomData,
        }
    }
}

/// Debug categories accepted by `OXMPI_DEBUG`.
///
/// See the example on [`Kind`].
pub const DEBUG_CATEGORIES: &[&str] = &[
    "all",
    "bootstrap",
    "topology",
    "transport",
    "p2p",
    "coll",
    "progress",
    "mem",
];

/// Messages up to this many bytes are sent eagerly; larger ones use rendezvous.
///
/// Read it with [`get`]; see the examples there and on [`get_from`].
pub static EAGER_LIMIT: Setting<usize> = Setting::new(Entry {
    name: "eager_limit",
    env: "OXMPI_EAGER_LIMIT",
    default: "64k",
    doc: "largest message sent eagerly; larger messages use rendezvous",
    kind: Kind::Bytes,
});

/// Most eager bytes one sender may have sent a receiver and not got back
/// (the receiver returns them as it matches the messages): past it, that
/// sender's messages go rendezvous, so a receiver's memory for unexpected
/// eager messages stays within this per peer.
///
/// See the example on [`get_from`].
pub static EAGER_BUDGET: Setting<usize> = Setting::new(Entry {
    name: "eager_budget",
    env: "OXMPI_EAGER_BUDGET",
    default: "8M",
    doc: "most unmatched eager bytes one sender may have at a receiver; past it the sender uses rendezvous for that receiver; 0: unlimited",
    kind: Kind::Bytes,
});

/// Payload bytes of one shared-memory ring cell.
///
/// See the example on [`get_from`].
pub static SHM_CELL_SIZE: Setting<usize> = Setting::new(Entry {
    name: "shm_cell_size",
    env: "OXMPI_SHM_CELL_SIZE",
    default: "8k",
    doc: "payload bytes of one shm ring cell; messages that fit are sent inline",
    kind: Kind::Bytes,
});

/// Number of cells in each shared-memory ring.
///
/// See the example on [`get_from`].
pub static SHM_RING_CELLS: Setting<usize> = Setting::new(Entry {
    name: "shm_ring_cells",
    env: "OXMPI_SHM_RING_CELLS",
    default: "64",
    doc: "cells in each shm ring (per sender-receiver pair)",
    kind: Kind::Count,
});

/// Whether the node's shared segment is a memfd (else a `/dev/shm` file).
///
/// See the example on [`get_from`].
pub static SHM_MEMFD: Setting<bool> = Setting::new(Entry {
    name: "shm_memfd",
    env: "OXMPI_SHM_MEMFD",
    default: "on",
    doc: "back the node segment with a memfd shared via /proc (off: a /dev/shm file, unlinked after attach)",
    kind: Kind::Bool,
});

/// Whether large intra-node messages use a single CMA copy.
///
/// See the example on [`get_from`].
pub static CMA: Setting<bool> = Setting::new(Entry {
    name: "cma",
    env: "OXMPI_CMA",
    default: "on",
    doc: "use process_vm_readv (CMA) single copy for intra-node rendezvous",
    kind: Kind::Bool,
});

/// Whom a rank declares as its tracer under Yama `ptrace_scope=1`, so that
/// CMA works: `parent` (its launcher agent, and so its sibling ranks) or
/// `any` (every process of the user, the old behaviour).
///
/// See the example on [`Kind`].
pub const CMA_PTRACERS: &[&str] = &["parent", "any"];

/// Who may read a rank's memory with CMA under Yama `ptrace_scope=1`.
///
/// See the example on [`get_from`].
pub static CMA_PTRACER: Setting<Vec<String>> = Setting::new(Entry {
    name: "cma_ptracer",
    env: "OXMPI_CMA_PTRACER",
    default: "parent",
    doc: "under Yama ptrace_scope=1, who may read a rank's memory (CMA): parent (the launcher agent and its descendants: sibling ranks) or any (every process of the user)",
    kind: Kind::List(CMA_PTRACERS),
});

/// Values of [`CUDA`].
///
/// See the example on [`Kind`].
pub const CUDA_MODES: &[&str] = &["auto", "on", "off"];

/// Whether buffers may be CUDA device memory.
///
/// See the example on [`get_from`].
pub static CUDA: Setting<Vec<String>> = Setting::new(Entry {
    name: "cuda",
    env: "OXMPI_CUDA",
    default: "auto",
    doc: "device buffers: auto (when a CUDA driver with a device loads), on (a job without one fails at init), off (buffers are host memory; the driver is never loaded)",
    kind: Kind::List(CUDA_MODES),
});

/// Whether device messages to ranks of the same host go by CUDA IPC.
///
/// See the example on [`get_from`].
pub static CUDA_IPC: Setting<bool> = Setting::new(Entry {
    name: "cuda_ipc",
    env: "OXMPI_CUDA_IPC",
    default: "on",
    doc: "send large device messages to ranks of the same host by CUDA IPC (one device-to-device copy by the receiver) instead of through host memory",
    kind: Kind::Bool,
});

/// Smallest device message sent by CUDA IPC.
///
/// See the example on [`get_from`].
pub static CUDA_IPC_MIN: Setting<usize> = Setting::new(Entry {
    name: "cuda_ipc_min",
    env: "OXMPI_CUDA_IPC_MIN",
    default: "32k",
    doc: "smallest device message sent to a rank of the same host by CUDA IPC",
    kind: Kind::Bytes,
});

/// Smallest device message staged through the pinned-memory pipeline.
///
/// See the example on [`get_from`].
pub static CUDA_PIPELINE_MIN: Setting<usize> = Setting::new(Entry {
    name: "cuda_pipeline_min",
    env: "OXMPI_CUDA_PIPELINE_MIN",
    default: "1m",
    doc: "smallest device message (not sent by CUDA IPC) copied to pinned host memory in chunks that are sent as they arrive",
    kind: Kind::Bytes,
});

/// Chunk of the device staging pipeline.
///
/// See the example on [`get_from`].
pub static CUDA_PIPELINE_CHUNK: Setting<usize> = Setting::new(Entry {
    name: "cuda_pipeline_chunk",
    env: "OXMPI_CUDA_PIPELINE_CHUNK",
    default: "512k",
    doc: "bytes per device-to-host copy of the device staging pipeline",
    kind: Kind::Bytes,
});

/// Rendezvous messages at least this large are copied by both sides at once.
///
/// See the example on [`get_from`].
pub static CMA_SPLIT_MIN: Setting<usize> = Setting::new(Entry {
    name: "cma_split_min",
    env: "OXMPI_CMA_SPLIT_MIN",
    default: "0",
    doc: "smallest message the receiver and sender copy cooperatively (half each); 0 turns it off",
    kind: Kind::Bytes,
});

/// Rendezvous protocols: `auto` streams through the rings (two copies,
/// pipelined on both cores) when each local rank has a core and reads with
/// CMA (one copy by the receiver alone) when oversubscribed.
///
/// See the example on [`Kind`].
pub const RNDV_PROTOCOLS: &[&str] = &["auto", "cma", "stream"];

/// How large messages travel between ranks of one host.
///
/// See the example on [`get_from`].
pub static RNDV_PROTOCOL: Setting<Vec<String>> = Setting::new(Entry {
    name: "rndv_protocol",
    env: "OXMPI_RNDV_PROTOCOL",
    default: "auto",
    doc: "rendezvous protocol: auto (stream when every rank has a core, else CMA), cma (single copy), stream (pipelined copy through the rings)",
    kind: Kind::List(RNDV_PROTOCOLS),
});

/// Which libfabric provider carries messages between hosts.
///
/// See the example on [`get_from`].
pub static OFI_PROVIDER: Setting<String> = Setting::new(Entry {
    name: "ofi_provider",
    env: "OXMPI_OFI_PROVIDER",
    default: "",
    doc: "libfabric provider between hosts, e.g. net, tcp, verbs, efa (empty: net where libfabric offers it, else libfabric's first RDM provider; FI_PROVIDER narrows both)",
    kind: Kind::Text,
});

/// Which interface (libfabric domain) carries messages between hosts.
///
/// See the example on [`get_from`].
pub static OFI_IFACE: Setting<String> = Setting::new(Entry {
    name: "ofi_iface",
    env: "OXMPI_OFI_IFACE",
    default: "",
    doc: "libfabric domain / network interface between hosts, e.g. eth0 (empty: the one holding ofi_addr, else the first one with an address other hosts can reach)",
    kind: Kind::Text,
});

/// The address whose interface carries messages between hosts.
///
/// See the example on [`get_from`].
pub static OFI_ADDR: Setting<String> = Setting::new(Entry {
    name: "ofi_addr",
    env: "OXMPI_OFI_ADDR",
    default: "",
    doc: "IP address of this host whose interface carries messages between hosts (oxrun sets it, for jobs across hosts, to the address this host reaches oxrun from; empty: an address of this host's name, else the first one other hosts can reach; ofi_iface wins)",
    kind: Kind::Text,
});

/// Largest packet on the fabric (header and payload).
///
/// See the example on [`get_from`].
pub static OFI_PACKET: Setting<usize> = Setting::new(Entry {
    name: "ofi_packet",
    env: "OXMPI_OFI_PACKET",
    default: "8k",
    doc: "largest packet between hosts, and so the eager limit there (larger messages go direct); each remote peer gets (ofi_credits + 2) receive buffers of this size",
    kind: Kind::Bytes,
});

/// Packets a rank may have in flight to one peer on another host.
///
/// See the example on [`get_from`].
pub static OFI_CREDITS: Setting<usize> = Setting::new(Entry {
    name: "ofi_credits",
    env: "OXMPI_OFI_CREDITS",
    default: "32",
    doc: "packets a sender may have in flight to one peer on another host before the receiver returns credits (bounds the receiver's memory)",
    kind: Kind::Count,
});

/// How rarely a rank with peers both on its host and on others polls the
/// fabric while it has no fabric traffic.
///
/// See the example on [`get_from`].
pub static OFI_COLD_POLLS: Setting<usize> = Setting::new(Entry {
    name: "ofi_cold_polls",
    env: "OXMPI_OFI_COLD_POLLS",
    default: "256",
    doc: "a rank with peers on its host and on other hosts polls the fabric once in this many progress polls while it has no fabric traffic (1: on every poll); always before it sleeps",
    kind: Kind::Count,
});

/// Memory registration choices between hosts: `auto` registers what
/// the provider requires, `register` every buffer a data call names.
///
/// See the example on [`Kind`].
pub const OFI_MRS: &[&str] = &["auto", "register"];

/// Which buffers the fabric transport registers.
///
/// See the example on [`get_from`].
pub static OFI_MR: Setting<Vec<String>> = Setting::new(Entry {
    name: "ofi_mr",
    env: "OXMPI_OFI_MR",
    default: "auto",
    doc: "memory registration between hosts: auto (what the provider requires: packet and user buffers under FI_MR_LOCAL, as verbs/efa/cxi want; RMA-read buffers always), register (every buffer, whatever the provider: the FI_MR_LOCAL path on any provider)",
    kind: Kind::List(OFI_MRS),
});

/// Ways large contiguous messages cross hosts: `auto` (tagged: on tcp
/// here the two measured alike), `read` (RMA read by the receiver where the provider
/// offers it), `tagged` (a tagged send into the posted receive buffer).
///
/// See the example on [`Kind`].
pub const OFI_RNDVS: &[&str] = &["auto", "read", "tagged"];

/// How large contiguous messages cross hosts.
///
/// See the example on [`get_from`].
pub static OFI_RNDV: Setting<Vec<String>> = Setting::new(Entry {
    name: "ofi_rndv",
    env: "OXMPI_OFI_RNDV",
    default: "auto",
    doc: "large contiguous messages between hosts: read (the receiver reads the sender's registered buffer, RMA, where the provider offers FI_RMA+FI_READ; else tagged), tagged (the receiver posts a tagged receive into its buffer, the sender sends into it), auto (tagged: on tcp the two measured alike, and it needs no remote-read registrations)",
    kind: Kind::List(OFI_RNDVS),
});

/// Which subsystems log debug output.
///
/// See the example on [`get_from`].
pub static DEBUG: Setting<Vec<String>> = Setting::new(Entry {
    name: "debug",
    env: "OXMPI_DEBUG",
    default: "",
    doc: "comma-separated debug categories to log to stderr",
    kind: Kind::List(DEBUG_CATEGORIES),
});

/// Where the collective cost model's parameters come from (see
/// `coll::calibrate`): empty for the per-host cache, measured at first use.
///
/// See the example on [`get_from`].
pub static COLL_MODEL: Setting<String> = Setting::new(Entry {
    name: "coll_model",
    env: "OXMPI_COLL_MODEL",
    default: "",
    doc: "file with the cost model's alpha/beta/gamma (default: per-host cache, calibrated at first use)",
    kind: Kind::Path,
});

/// How many nodes the collective layer sees (testing and tuning).
///
/// See the example on [`get_from`].
pub static COLL_NODES: Setting<usize> = Setting::new(Entry {
    name: "coll_nodes",
    env: "OXMPI_COLL_NODES",
    default: "0",
    doc: "testing/tuning: collectives (only) treat the ranks as this many nodes of consecutive world ranks, like MPICH's NUM_CLIQUES (0: the real node map)",
    kind: Kind::Count,
});

/// How long each wait of a port connection lasts (seconds): the
/// connecting root's wait for the acceptor, every exchange after it.
///
/// See the example on [`get_from`].
pub static PORT_TIMEOUT: Setting<usize> = Setting::new(Entry {
    name: "port_timeout",
    env: "OXMPI_PORT_TIMEOUT",
    default: "180",
    doc: "seconds MPI_Comm_connect waits for MPI_Comm_accept, and each later step of a connection waits for the other side",
    kind: Kind::Count,
});

/// The address port names carry (`MPI_Open_port`).
///
/// See the example on [`get_from`].
pub static PORT_HOST: Setting<String> = Setting::new(Entry {
    name: "port_host",
    env: "OXMPI_PORT_HOST",
    default: "",
    doc: "IPv4 address or host name that port names carry (empty: this host name's first non-loopback IPv4 address, else 127.0.0.1)",
    kind: Kind::Text,
});

/// The name directory a singleton publishes in and looks up from (oxrun
/// reads the same variable: `oxrun --name-dir`).
///
/// See the example on [`get_from`].
pub static NAME_DIR: Setting<String> = Setting::new(Entry {
    name: "name_dir",
    env: "OXMPI_NAME_DIR",
    default: "",
    doc: "directory of a name service shared by jobs (MPI_Publish_name / MPI_Lookup_name): oxrun's, or a singleton's (empty: oxrun's per-job service; none for a singleton)",
    kind: Kind::Path,
});

/// Largest payload per rank of a small collective that goes through the
/// communicator's shared-memory area (`coll/area`) instead of messages.
pub static SHM_COLL_BYTES: Setting<usize> = Setting::new(Entry {
    name: "shm_coll_bytes",
    env: "OXMPI_SHM_COLL_BYTES",
    default: "4k",
    doc: "largest payload per rank (alltoall: all its blocks) of a collective through the communicator's shared-memory area, on communicators within one host (0: never)",
    kind: Kind::Bytes,
});

/// Every tunable of the layers below the collectives, in the order
/// `--info` prints them (the collectives' algorithm overrides,
/// `OXMPI_<COLL>_ALGO`, are defined beside the algorithm registry:
/// `coll::select::OVERRIDES`).
///
/// ```
/// use oxmpi::config::REGISTRY;
/// // Every variable is OXMPI_ and the upper-case name.
/// assert!(REGISTRY.iter().all(|e| e.env == format!("OXMPI_{}", e.name.to_uppercase())));
/// ```
pub static REGISTRY: &[&Entry] = &[
    &EAGER_LIMIT.entry,
    &EAGER_BUDGET.entry,
    &SHM_CELL_SIZE.entry,
    &SHM_RING_CELLS.entry,
    &SHM_MEMFD.entry,
    &CMA.entry,
    &CMA_PTRACER.entry,
    &CUDA.entry,
    &CUDA_IPC.entry,
    &CUDA_IPC_MIN.entry,
    &CUDA_PIPELINE_MIN.entry,
    &CUDA_PIPELINE_CHUNK.entry,
    &CMA_SPLIT_MIN.entry,
    &RNDV_PROTOCOL.entry,
    &OFI_PROVIDER.entry,
    &OFI_IFACE.entry,
    &OFI_ADDR.entry,
    &OFI_PACKET.entry,
    &OFI_CREDITS.entry,
    &OFI_COLD_POLLS.entry,
    &OFI_MR.entry,
    &OFI_RNDV.entry,
    &DEBUG.entry,
    &COLL_MODEL.entry,
    &COLL_NODES.entry,
    &PORT_TIMEOUT.entry,
    &PORT_HOST.entry,
    &NAME_DIR.entry,
    &SHM_COLL_BYTES.entry,
];

/// A tunable's value could not be read.
///
/// ```
/// use oxmpi::config::{get_from, ConfigError, EAGER_LIMIT};
/// let err = get_from(&EAGER_LIMIT, |_: &str| Ok(Some("lots".into()))).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "OXMPI_EAGER_LIMIT=\"lots\": not a non-negative integer (expected bytes)"
/// );
/// let err = get_from(&EAGER_LIMIT, |_: &str| Err(())).unwrap_err(); // set, not UTF-8
/// assert_eq!(err, ConfigError::NotUnicode { env: "OXMPI_EAGER_LIMIT" });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, ThisError)]
#[non_exhaustive]
pub enum ConfigError {
    /// The value does not parse as the tunable's kind.
    #[error("{env}={value:?}: {reason} (expected {kind})")]
    Invalid {
        /// The environment variable.
        env: &'static str,
        /// The text it held.
        value: String,
        /// What is wrong with it.
        reason: String,
        /// What was expected.
        kind: Kind,
    },
    /// The variable is set but is not valid UTF-8.
    #[error("{env} is set but is not valid UTF-8")]
    NotUnicode {
        /// The environment variable.
        env: &'static str,
    },
}

/// A type a tunable's text parses into.
///
/// ```
/// use oxmpi::config::{FromSetting, Kind};
/// assert_eq!(usize::from_setting("2m", Kind::Bytes), Ok(2 << 20));
/// assert_eq!(usize::from_setting("2m", Kind::Count).is_err(), true); // suffixes are for bytes
/// assert_eq!(bool::from_setting("Yes", Kind::Bool), Ok(true));
/// assert!(Vec::<String>::from_setting("x", Kind::List(&["a"])).is_err());
/// ```
pub trait FromSetting: Sized {
    /// Parses `text` as a value of `kind`; the error says what is wrong.
    ///
    /// See the example on [`FromSetting`].
    fn from_setting(text: &str, kind: Kind) -> Result<Self, String>;
}

impl FromSetting for bool {
    fn from_setting(text: &str, _kind: Kind) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err("not a boolean".into()),
        }
    }
}

impl FromSetting for usize {
    fn from_setting(text: &str, kind: Kind) -> Result<Self, String> {
        let text = text.trim();
        let lower = text.to_ascii_lowercase();
        let (digits, shift) = match (kind, lower.trim_end_matches(['b', 'i'])) {
            (Kind::Bytes, t) if t.ends_with('k') => (&t[..t.len() - 1], 10),
            (Kind::Bytes, t) if t.ends_with('m') => (&t[..t.len() - 1], 20),
            (Kind::Bytes, t) if t.ends_with('g') => (&t[..t.len() - 1], 30),
            (Kind::Bytes, t) => (t, 0),
            _ => (lower.as_str(), 0),
        };
        let n: usize = digits
            .trim()
            .parse()
            .map_err(|_| "not a non-negative integer".to_string())?;
        n.checked_mul(1usize << shift)
            .ok_or_else(|| "too large".to_string())
    }
}

impl FromSetting for String {
    fn from_setting(text: &str, _kind: Kind) -> Result<Self, String> {
        Ok(text.trim().to_string())
    }
}

impl FromSetting for Vec<String> {
    fn from_setting(text: &str, kind: Kind) -> Result<Self, String> {
        let allowed: &[&str] = match kind {
            Kind::List(items) => items,
            _ => &[],
        };
        let mut items = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let item = item.to_ascii_lowercase();
            if !allowed.is_empty() && !allowed.contains(&item.as_str()) {
                return Err(format!("unknown item {item:?}"));
            }
            if !items.contains(&item) {
                items.push(item);
            }
        }
        Ok(items)
    }
}

/// Where a value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The variable was not set.
    Default,
    /// The variable was set.
    Env,
}

/// Reads `setting` from the process environment (its default when unset).
///
/// ```
/// use oxmpi::config::{get, Config, EAGER_LIMIT};
/// let limit: usize = get(&EAGER_LIMIT)?; // OXMPI_EAGER_LIMIT, else its default
/// assert_eq!(limit, Config::from_env()?.eager_limit);
/// # Ok::<(), oxmpi::config::ConfigError>(())
/// ```
pub fn get<T: FromSetting>(setting: &Setting<T>) -> Result<T, ConfigError> {
    get_from(setting, env_lookup)
}

/// Reads `setting` through `lookup` (an environment stand-in: variable name
/// to `Some(text)` when set; `Err(())` when set but not UTF-8).
///
/// ```
/// use oxmpi::config::*;
/// let env = |name: &str| -> Result<Option<String>, ()> {
///     Ok(match name {
///         "OXMPI_EAGER_LIMIT" => Some("128k".into()),
///         "OXMPI_SHM_MEMFD" => Some("off".into()),
///         "OXMPI_DEBUG" => Some("coll, p2p".into()),
///         "OXMPI_SHM_RING_CELLS" => Some("lots".into()),
///         _ => None, // unset: the default
///     })
/// };
/// assert_eq!(get_from(&EAGER_LIMIT, env)?, 128 * 1024);
/// assert!(!get_from(&SHM_MEMFD, env)?);
/// assert_eq!(get_from(&DEBUG, env)?, ["coll", "p2p"]);
/// assert_eq!(get_from(&SHM_CELL_SIZE, env)?, 8 * 1024); // the default, "8k"
/// assert!(get_from(&CMA, env)?);
/// assert_eq!(get_from(&CMA_SPLIT_MIN, env)?, 0);
/// assert_eq!(get_from(&RNDV_PROTOCOL, env)?, ["auto"]);
/// assert_eq!(get_from(&COLL_MODEL, env)?, "");
/// assert_eq!(get_from(&COLL_NODES, env)?, 0); // the real node map
/// let err = get_from(&SHM_RING_CELLS, env).unwrap_err();
/// assert!(matches!(err, ConfigError::Invalid { env: "OXMPI_SHM_RING_CELLS", .. }));
/// # Ok::<(), ConfigError>(())
/// ```
pub fn get_from<T: FromSetting>(
    setting: &Setting<T>,
    lookup: impl Fn(&str) -> Result<Option<String>, ()>,
) -> Result<T, ConfigError> {
    let entry = &setting.entry;
    let (text, _) = raw(entry, &lookup)?;
    T::from_setting(&text, entry.kind).map_err(|reason| ConfigError::Invalid {
        env: entry.env,
        value: text,
        reason,
        kind: entry.kind,
    })
}

/// The text of `entry` in the process environment now (its default when
/// unset), unparsed: what the tool interface's control variables show.
///
/// ```
/// use oxmpi::config::{current_text, EAGER_LIMIT};
/// if std::env::var_os("OXMPI_EAGER_LIMIT").is_none() {
///     assert_eq!(current_text(&EAGER_LIMIT.entry)?, "64k");
/// }
/// # Ok::<(), oxmpi::config::ConfigError>(())
/// ```
pub fn current_text(entry: &Entry) -> Result<String, ConfigError> {
    raw(entry, &env_lookup).map(|(text, _)| text)
}

fn raw(entry: &Entry, lookup: &impl Fn(&str) -> Result<Option<String>, ()>) -> RawValue {
    match lookup(entry.env) {
        Ok(Some(text)) => Ok((text, Origin::Env)),
        Ok(None) => Ok((entry.default.to_string(), Origin::Default)),
        Err(()) => Err(ConfigError::NotUnicode { env: entry.env }),
    }
}

fn env_lookup(name: &str) -> Result<Option<String>, ()> {
    match std::env::var(name) {
        Ok(text) => Ok(Some(text)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(()),
    }
}

/// Every tunable's value, loaded once (at initialisation) and passed around.
///
/// ```
/// use oxmpi::config::Config;
/// let cfg = Config::from_lookup(|name: &str| {
///     Ok((name == "OXMPI_DEBUG").then(|| "all".to_string()))
/// })?;
/// assert_eq!(cfg.eager_limit, 64 * 1024); // defaults elsewhere
/// assert!(cfg.debug_enabled("coll")); // "all" turns every category on
/// # Ok::<(), oxmpi::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// [`EAGER_LIMIT`].
    pub eager_limit: usize,
    /// [`EAGER_BUDGET`] (0: unlimited).
    pub eager_budget: usize,
    /// [`SHM_CELL_SIZE`].
    pub shm_cell_size: usize,
    /// [`SHM_RING_CELLS`].
    pub shm_ring_cells: usize,
    /// [`SHM_MEMFD`].
    pub shm_memfd: bool,
    /// [`CMA`].
    pub cma: bool,
    /// [`CMA_PTRACER`] (one of [`CMA_PTRACERS`]).
    pub cma_ptracer: String,
    /// [`CUDA`]: `auto`, `on` or `off`.
    pub cuda: String,
    /// [`CUDA_IPC`].
    pub cuda_ipc: bool,
    /// [`CUDA_IPC_MIN`].
    pub cuda_ipc_min: usize,
    /// [`CUDA_PIPELINE_MIN`].
    pub cuda_pipeline_min: usize,
    /// [`CUDA_PIPELINE_CHUNK`].
    pub cuda_pipeline_chunk: usize,
    /// [`CMA_SPLIT_MIN`].
    pub cma_split_min: usize,
    /// [`RNDV_PROTOCOL`] (one of [`RNDV_PROTOCOLS`]).
    pub rndv_protocol: String,
    /// [`OFI_PROVIDER`] (empty when unset).
    pub ofi_provider: String,
    /// [`OFI_IFACE`] (empty when unset).
    pub ofi_iface: String,
    /// [`OFI_ADDR`] (empty when unset).
    pub ofi_addr: String,
    /// [`OFI_PACKET`].
    pub ofi_packet: usize,
    /// [`OFI_CREDITS`].
    pub ofi_credits: usize,
    /// [`OFI_COLD_POLLS`].
    pub ofi_cold_polls: usize,
    /// [`OFI_MR`] (one of [`OFI_MRS`]).
    pub ofi_mr: String,
    /// [`OFI_RNDV`] (one of [`OFI_RNDVS`]).
    pub ofi_rndv: String,
    /// [`DEBUG`].
    pub debug: Vec<String>,
    /// [`COLL_MODEL`] (empty when unset).
    pub coll_model: String,
    /// [`COLL_NODES`] (0: the real node map).
    pub coll_nodes: usize,
    /// [`SHM_COLL_BYTES`] (0: collectives never use the shared area).
    pub shm_coll_bytes: usize,
}

impl Config {
    /// Loads every tunable from the process environment; the first bad
    /// value is the error.
    ///
    /// ```
    /// use oxmpi::config::Config;
    /// let cfg = Config::from_env()?; // what `init` loads
    /// assert_eq!(cfg, Config::from_lookup(|name: &str| Ok(std::env::var(name).ok()))?);
    /// # Ok::<(), oxmpi::config::ConfigError>(())
    /// ```
    pub fn from_env() -> Result<Config, ConfigError> {
        Config::from_lookup(env_lookup)
    }

    /// Loads every tunable through `lookup` (see [`get_from`]).
    ///
    /// See the example on [`Config`].
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Result<Option<String>, ()>,
    ) -> Result<Config, ConfigError> {
        Ok(Config {
            eager_limit: get_from(&EAGER_LIMIT, &lookup)?,
            eager_budget: get_from(&EAGER_BUDGET, &lookup)?,
            shm_cell_size: get_from(&SHM_CELL_SIZE, &lookup)?,
            shm_ring_cells: get_from(&SHM_RING_CELLS, &lookup)?,
            shm_memfd: get_from(&SHM_MEMFD, &lookup)?,
            cma: get_from(&CMA, &lookup)?,
            cma_ptracer: get_from(&CMA_PTRACER, &lookup)?
                .into_iter()
                .next()
                .unwrap_or_else(|| "parent".into()),
            cuda: get_from(&CUDA, &lookup)?
                .into_iter()
                .next()
                .unwrap_or_else(|| "auto".into()),
            cuda_ipc: get_from(&CUDA_IPC, &lookup)?,
            cuda_ipc_min: get_from(&CUDA_IPC_MIN, &lookup)?,
            cuda_pipeline_min: get_from(&CUDA_PIPELINE_MIN, &lookup)?,
            cuda_pipeline_chunk: get_from(&CUDA_PIPELINE_CHUNK, &lookup)?,
            cma_split_min: get_from(&CMA_SPLIT_MIN, &lookup)?,
            rndv_protocol: get_from(&RNDV_PROTOCOL, &lookup)?
                .into_iter()
                .next()
                .unwrap_or_else(|| "auto".into()),
            ofi_provider: get_from(&OFI_PROVIDER, &lookup)?,
            ofi_iface: get_from(&OFI_IFACE, &lookup)?,
            ofi_addr: get_from(&OFI_ADDR, &lookup)?,
            ofi_packet: get_from(&OFI_PACKET, &lookup)?,
            ofi_credits: get_from(&OFI_CREDITS, &lookup)?,
            ofi_cold_polls: get_from(&OFI_COLD_POLLS, &lookup)?,
            ofi_mr: get_from(&OFI_MR, &lookup)?
                .into_iter()
                .next()
                .unwrap_or_else(|| "auto".into()),
            ofi_rndv: get_from(&OFI_RNDV, &lookup)?
                .into_iter()
                .next()
                .unwrap_or_else(|| "auto".into()),
            debug: get_from(&DEBUG, &lookup)?,
            coll_model: get_from(&COLL_MODEL, &lookup)?,
            coll_nodes: get_from(&COLL_NODES, &lookup)?,
            shm_coll_bytes: get_from(&SHM_COLL_BYTES, &lookup)?,
        })
    }

    /// Whether debug output for `category` is on.
    ///
    /// See the example on [`Config`].
    pub fn debug_enabled(&self, category: &str) -> bool {
        self.debug.iter().any(|c| c == "all" || c == category)
    }
}

/// A snapshot of every tunable with its current text and origin; its
/// `Display` is the table `oxrun --info` prints.
///
/// Made by [`listing`]; see the example there.
#[derive(Debug, Clone)]
pub struct Listing {
    rows: Vec<(&'static Entry, RawValue)>,
}

/// A tunable's text and where it came from, as read.
type RawValue = Result<(String, Origin), ConfigError>;

/// Snapshots every tunable from the process environment.
///
/// ```
/// let table = oxmpi::config::listing().to_string();
/// assert!(table.contains("OXMPI_EAGER_LIMIT"));
/// print!("{table}"); // the tunables part of `oxrun --info`
/// ```
pub fn listing() -> Listing {
    listing_with(&[])
}

/// [`listing`] with `more` tunables after the registry's (those a higher
/// layer defines, such as the collectives' algorithm overrides).
///
/// ```
/// use oxmpi::config::{listing_with, CMA};
/// assert!(listing_with(&[&CMA.entry]).to_string().matches("OXMPI_CMA ").count() >= 2);
/// ```
pub fn listing_with(more: &[&'static Entry]) -> Listing {
    Listing {
        rows: REGISTRY
            .iter()
            .chain(more)
            .map(|entry| (*entry, raw(entry, &env_lookup)))
            .collect(),
    }
}

impl fmt::Display for Listing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .rows
            .iter()
            .map(|(e, _)| e.env.len())
            .max()
            .unwrap_or(0);
        for (entry, value) in &self.rows {
            let shown = match value {
                Ok((text, Origin::Default)) => format!("{text:?} (default)"),
                Ok((text, Origin::Env)) => match check_text(entry, text) {
                    Ok(()) => format!("{text:?} (from env; default {:?})", entry.default),
                    Err(reason) => format!("{text:?} INVALID: {reason}"),
                },
                Err(e) => format!("INVALID: {e}"),
            };
            writeln!(f, "  {:<width$}  {shown}", entry.env)?;
            writeln!(f, "  {:<width$}    {} [{}]", "", entry.doc, entry.kind)?;
        }
        Ok(())
    }
}

/// Whether `text` parses as `entry`'s kind.
fn check_text(entry: &Entry, text: &str) -> Result<(), String> {
    match entry.kind {
        Kind::Bool => bool::from_setting(text, entry.kind).map(drop),
        Kind::Bytes | Kind::Count => usize::from_setting(text, entry.kind).map(drop),
        Kind::List(_) => Vec::<String>::from_setting(text, entry.kind).map(drop),
        Kind::Path | Kind::Text => Ok(()),
    }
}

#[cfg(test)]
mod tests;
