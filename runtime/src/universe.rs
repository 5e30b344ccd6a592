//! Starting and ending the library: `init` connects to the process
//! manager, builds the transports and the predefined communicators;
//! finalizing (explicitly or by dropping the [`Universe`]) waits for every
//! rank and tells the process manager.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use crate::bootstrap::{self, Bootstrap};
use crate::coll::calibrate;
use crate::coll::select::Model;
use crate::comm::{Comm, Shared};
use crate::error::Error;
use crate::p2p::engine::Engine;
use crate::progress::{Extension, Runtime, WaitPolicy};

/// Thread support levels (`MPI_THREAD_*`).
///
/// ```
/// use oxmpi::Threading;
/// // Levels are ordered: a program needing `Funneled` is served by `Multiple`.
/// assert!(Threading::Single < Threading::Funneled);
/// assert!(Threading::Multiple >= Threading::Serialized);
/// assert_eq!(Threading::Multiple as i32, 3); // MPI_THREAD_MULTIPLE
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Threading {
    /// Only one thread.
    Single = 0,
    /// Only the main thread calls MPI.
    Funneled = 1,
    /// One thread at a time calls MPI.
    Serialized = 2,
    /// Any thread may call any function at any time.
    Multiple = 3,
}

const NEVER: u8 = 0;
const ACTIVE: u8 = 1;
const FINALIZED: u8 = 2;
static STATE: AtomicU8 = AtomicU8::new(NEVER);

/// The initialized library. Dropping it finalizes.
///
/// ```no_run
/// let universe = oxmpi::init()?;
/// let (world, me) = (universe.world(), universe.self_comm());
/// assert_eq!(me.size(), 1);
/// assert_eq!(universe.threading(), oxmpi::Threading::Multiple);
/// println!("rank {} of {}", world.rank(), world.size());
/// universe.finalize()?; // or let it drop
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub struct Universe {
    world: Comm,
    self_comm: Comm,
    boot: Arc<Mutex<Box<dyn Bootstrap>>>,
    threading: Threading,
    done: bool,
}

/// Initializes the library (`MPI_Init`).
///
/// ```no_run
/// let universe = oxmpi::init()?;
/// let world = universe.world();
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn init() -> Result<Universe, Error> {
    init_thread(Threading::Single).map(|(u, _)| u)
}

/// Initializes the library asking for a thread level (`MPI_Init_thread`);
/// returns the level provided, which is always [`Threading::Multiple`].
///
/// ```no_run
/// use oxmpi::Threading;
/// let (universe, provided) = oxmpi::init_thread(Threading::Multiple)?;
/// assert!(provided >= Threading::Multiple);
/// let world = universe.world();
/// std::thread::scope(|s| {
///     s.spawn(|| world.barrier());
/// });
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn init_thread(_required: Threading) -> Result<(Universe, Threading), Error> {
    if STATE
        .compare_exchange(NEVER, ACTIVE, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return Err(Error::State(match STATE.load(Ordering::Acquire) {
            FINALIZED => {
                "the library was already finalized; MPI cannot be initialized again".into()
            }
            _ => "the library is already initialized".into(),
        }));
    }
    match start() {
        Ok(u) => Ok((u, Threading::Multiple)),
        Err(e) => {
            STATE.store(NEVER, Ordering::Release);
            Err(e)
        }
    }
}

fn start() -> Result<Universe, Error> {
    let config = crate::config::Config::from_env()?;
    // Before any buffer is seen: whether some may be device memory.
    crate::mem::cuda::activate(&config.cuda)?;
    let mut boot = bootstrap::connect()?;
    let (rank, size) = (boot.rank(), boot.size());
    // Rank 0 decides the collective cost model for everyone; the
    // transport's fences publish it (see coll::calibrate).
    let chosen = match rank {
        0 => {
            let (model, source) = calibrate::job_model(&config.coll_model)?;
            boot.put(calibrate::MODEL_KEY, &model.encode_compact())?;
            Some((model, source))
        }
        _ => None,
    };
    let base = crate::transport::connect(boot.as_mut(), &config)?;
    let bridged = Arc::new(crate::transport::bridge::Bridged::new(base, size));
    let transport: Arc<dyn crate::transport::Transport> = bridged.clone();
    let (mut model, source) = match chosen {
        Some(c) => c,
        None => {
            let text = boot.get(calibrate::MODEL_KEY)?.unwrap_or_default();
            let model = Model::decode_compact(&text).map_err(|e| {
                Error::Bootstrap(format!("rank 0's collective cost model {text:?}: {e}"))
            })?;
            (model, calibrate::Source::Rank0)
        }
    };
    let cores = crate::machine::online_cpus();
    let policy = WaitPolicy::for_load(boot.local_ranks().len(), cores);
    let mut engine = Engine::new(rank, size, transport, config.eager_limit);
    engine.set_split_min(config.cma_split_min);
    engine.set_ipc_min(config.cuda_ipc.then_some(config.cuda_ipc_min));
    engine.set_pipeline(config.cuda_pipeline_min, config.cuda_pipeline_chunk);
    engine.set_eager_budget(config.eager_budget);
    engine.set_rndv_protocol(&config.rndv_protocol);
    crate::coll::link_probe::measure(&mut engine, rank, boot.node_of_rank(), &mut model)?;
    let debug_coll = config.debug_enabled("coll");
    if debug_coll && rank == 0 {
        eprintln!(
            "oxmpi[coll]: cost model {source:?}: {}",
            model.encode_compact()
        );
    }
    let selector = crate::coll::select::Selector::from_env(debug_coll, model)?;
    let rt = Arc::new(Runtime::new(
        engine,
        policy,
        rank,
        size,
        Extension::holding(selector),
    ));
    let _ = rt.bridged.set(bridged);
    let node_of_rank = boot.node_of_rank().to_vec();
    // What collectives see: the real map, or `OXMPI_COLL_NODES` blocks.
    let coll_node_of_rank = match config.coll_nodes {
        0 => node_of_rank.clone(),
        k => crate::coll::nodes::consecutive(node_of_rank.len(), k),
    };
    let shared = Arc::new(Shared::new(node_of_rank, coll_node_of_rank));
    if debug_coll && rank == 0 && config.coll_nodes > 0 {
        eprintln!(
            "oxmpi[coll]: OXMPI_COLL_NODES={}: collectives see nodes {:?}",
            config.coll_nodes, shared.coll_node_of_rank
        );
    }
    let world = Comm::predefined(rt.clone(), shared.clone(), false);
    let self_comm = Comm::predefined(rt, shared, true);
    Ok(Universe {
        world,
        self_comm,
        boot: Arc::new(Mutex::new(boot)),
        threading: Threading::Multiple,
        done: false,
    })
}

/// Whether `init` has been called (`MPI_Initialized`).
///
/// ```
/// // Before `init` (and in programs that never call it):
/// assert!(!oxmpi::initialized());
/// assert!(!oxmpi::finalized());
/// ```
pub fn initialized() -> bool {
    STATE.load(Ordering::Acquire) != NEVER
}

/// Whether the library has been finalized (`MPI_Finalized`).
///
/// See the example on [`initialized`].
pub fn finalized() -> bool {
    STATE.load(Ordering::Acquire) == FINALIZED
}

impl Universe {
    /// `MPI_COMM_WORLD`.
    ///
    /// See the example on [`Universe`].
    pub fn world(&self) -> Comm {
        self.world.clone()
    }

    /// `MPI_COMM_SELF`.
    ///
    /// See the example on [`Universe`].
    pub fn self_comm(&self) -> Comm {
        self.self_comm.clone()
    }

    /// The launcher, for calls that must not hold the universe (a spawn
    /// blocks until the children answer).
    pub fn launcher(&self) -> Launcher {
        Launcher(Arc::clone(&self.boot))
    }

    /// The launcher's name of this job (the PMI kvs name / job id).
    pub fn job_id(&self) -> String {
        let boot = self.boot.lock().unwrap_or_else(|e| e.into_inner());
        boot.jobid().to_string()
    }

    /// Publishes `port` under `service` in the launcher's name service
    /// (`MPI_Publish_name`), for every process oxrun started to find.
    ///
    /// Errors: `MPI_ERR_SERVICE` when `service` is published already;
    /// `MPI_ERR_UNSUPPORTED_OPERATION` without a launcher (singleton).
    pub fn publish_name(&self, service: &str, port: &str) -> Result<(), Error> {
        let mut boot = self.boot.lock().unwrap_or_else(|e| e.into_inner());
        boot.publish_name(service, port)
    }

    /// Withdraws `service` (`MPI_Unpublish_name`).
    ///
    /// Errors: `MPI_ERR_SERVICE` when it is not published.
    pub fn unpublish_name(&self, service: &str) -> Result<(), Error> {
        let mut boot = self.boot.lock().unwrap_or_else(|e| e.into_inner());
        boot.unpublish_name(service)
    }

    /// The port published under `service` (`MPI_Lookup_name`).
    ///
    /// Errors: `MPI_ERR_NAME` when nothing is published under it.
    pub fn lookup_name(&self, service: &str) -> Result<String, Error> {
        let mut boot = self.boot.lock().unwrap_or_else(|e| e.into_inner());
        boot.lookup_name(service)?.ok_or_else(|| {
            Error::NameNotPublished(format!("no port is published under service {service:?}"))
        })
    }

    /// The thread level provided.
    ///
    /// See the example on [`Universe`].
    pub fn threading(&self) -> Threading {
        self.threading
    }

    /// Ends the whole job with `code` (`MPI_Abort`): tells the launcher,
    /// then exits this process.
    ///
    /// ```no_run
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// if std::path::Path::new("input.dat").exists() {
    ///     // ...
    /// } else {
    ///     universe.abort(2, "input.dat is missing"); // every rank ends, exit code 2
    /// }
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn abort(&self, code: i32, message: &str) -> ! {
        abort_job(&self.boot, code, message)
    }

    /// Finalizes (`MPI_Finalize`): waits until every rank got here and all
    /// of this rank's outgoing data has left, then leaves the job.
    ///
    /// ```no_run
    /// let universe = oxmpi::init()?;
    /// // ... the program ...
    /// universe.finalize()?; // reports errors a drop would have to ignore
    /// assert!(oxmpi::finalized());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn finalize(mut self) -> Result<(), Error> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), Error> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        // MPI: attributes on MPI_COMM_SELF are deleted first (a finalize hook).
        let attrs = self.self_comm.delete_all_attrs();
        let attrs = attrs.and(self.world.delete_all_attrs());
        let result = attrs.and(self.world.barrier_by_messages());
        // Every rank is here: no window request comes any more.
        crate::rma::stop_services();
        self.world.rt().wait_until(|e| (!e.busy()).then_some(()));
        let mut boot = self.boot.lock().unwrap_or_else(|e| e.into_inner());
        let fin = boot.finalize();
        STATE.store(FINALIZED, Ordering::Release);
        result.and(fin)
    }
}

impl Drop for Universe {
    fn drop(&mut self) {
        // A panicking rank must not wait in finalize's barrier for ranks that
        // will never get there: leave without finalizing, so the process
        // exits non-zero and the launcher ends the job at once.
        if std::thread::panicking() {
            return;
        }
        let _ = self.finish();
    }
}

pub(crate) fn abort_job(boot: &Mutex<Box<dyn Bootstrap>>, code: i32, message: &str) -> ! {
    let mut boot = boot.lock().unwrap_or_else(|e| e.into_inner());
    let _ = boot.abort(code, message);
    std::process::exit(abort_exit_status(code))
}

/// The status a process ending with `MPI_Abort(comm, code)` exits with:
/// `code`, except that a non-zero code whose low 8 bits are 0 (256, 512,
/// -256...) becomes 1, since an exit status keeps only those 8 bits and the
/// abort must not read as success.
///
/// ```
/// use oxmpi::universe::abort_exit_status;
/// assert_eq!(abort_exit_status(3), 3);
/// assert_eq!(abort_exit_status(256), 1);
/// assert_eq!(abort_exit_status(-512), 1);
/// assert_eq!(abort_exit_status(257), 257); // exits as 1 anyway: 257 & 0xff
/// assert_eq!(abort_exit_status(0), 0); // MPI_Abort(comm, 0) is the caller's choice
/// ```
pub fn abort_exit_status(code: i32) -> i32 {
    if code != 0 && code & 0xff == 0 {
        1
    } else {
        code
    }
}

/// Seconds since an arbitrary fixed point (`MPI_Wtime`), monotonic.
///
/// ```
/// let t0 = oxmpi::wtime();
/// let busy: u64 = (0..1000u64).sum();
/// let elapsed = oxmpi::wtime() - t0;
/// assert!(busy > 0 && elapsed >= 0.0);
/// assert!(oxmpi::wtick() > 0.0 && oxmpi::wtick() < 1e-3);
/// ```
pub fn wtime() -> f64 {
    let mut ts = libc_timespec();
    // SAFETY: clock_gettime writes into our stack struct.
    unsafe { nix::libc::clock_gettime(nix::libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn libc_timespec() -> nix::libc::timespec {
    nix::libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    }
}

/// Resolution of [`wtime`] in seconds (`MPI_Wtick`).
///
/// See the example on [`wtime`].
pub fn wtick() -> f64 {
    1e-9
}

/// This host's name (`MPI_Get_processor_name`).
///
/// ```
/// let host = oxmpi::processor_name();
/// println!("running on {host:?}");
/// assert!(host.len() < 256); // fits MPI_MAX_PROCESSOR_NAME
/// ```
pub fn processor_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_default()
}

/// A handle on the launcher (the process manager connection) that lives
/// apart from the [`Universe`].
#[derive(Clone)]
pub struct Launcher(Arc<Mutex<Box<dyn Bootstrap>>>);

impl Launcher {
    /// Starts `req` as a new job (`MPI_Comm_spawn`).
    ///
    /// Errors: `MPI_ERR_SPAWN` naming why the launcher refused;
    /// `MPI_ERR_UNSUPPORTED_OPERATION` without a launcher that can.
    pub fn spawn(&self, req: &crate::bootstrap::spawn_wire::SpawnRequest) -> Result<(), Error> {
        let mut boot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let key = crate::bootstrap::spawn_wire::SPAWN_KEY;
        if boot.get(key).ok().flatten().as_deref() != Some("1") {
            return Err(Error::Unsupported(
                "this process's launcher cannot start processes for MPI_Comm_spawn (only \
                 oxrun can: run the job under oxrun)"
                    .into(),
            ));
        }
        boot.spawn(req)
    }

    /// The launcher's name of this job.
    pub fn job_id(&self) -> String {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .jobid()
            .to_string()
    }
}
