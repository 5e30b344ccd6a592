//! Where the collective cost model's parameters come from: measured on the
//! machine, not guessed.
//!
//! Every rank must pick the same algorithm for a collective, so one model
//! serves the whole job: rank 0 decides it at start-up ([`job_model`]) and
//! publishes it in the bootstrap key-value space under `MODEL_KEY`
//! before the transport's fences; the other ranks read it after them. Rank
//! 0 takes, in order:
//!
//! 1. `OXMPI_COLL_MODEL=<file>`: parameters from a file, e.g. the fit of
//!    `cargo run --release -p oxmpi-benches --bin coll -- --model` (which
//!    writes `benches/results/coll_model.txt`), or `builtin` for
//!    [`Model::SHM`];
//! 2. the per-host cache, `$XDG_CACHE_HOME/oxmpi/coll-model-<host>` (else
//!    `~/.cache/...`; `-debug` appended in unoptimised builds), written by
//!    an earlier calibration;
//! 3. a calibration at first use (`calibrate`, a few milliseconds on one
//!    core), saved to the cache for the next job.
//!
//! A calibration under valgrind, or one slower than any real core
//! ([`Model::plausible`]: a machine too loaded to give it a time slice),
//! would steer every later job to poor algorithms: it is neither kept nor
//! used (the job takes [`Model::SHM`]), and a cached model that fails the
//! same test is measured again.
//!
//! The text form is one `key = value` per line: `alpha_us`, `beta_gbps`,
//! `gamma_gbps` (`#` comments allowed), and optionally the network's
//! `inter_alpha_us` and `inter_beta_gbps` (defaults
//! [`super::inter::DEFAULT_INTER_ALPHA`] and
//! [`super::inter::DEFAULT_INTER_BETA`]; written only when they differ
//! from those, so files without them stay what they were).

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::inter::{DEFAULT_INTER_ALPHA, DEFAULT_INTER_BETA};
use super::select::Model;
use crate::error::Error;

/// Bootstrap key under which rank 0 publishes the job's model.
pub(crate) const MODEL_KEY: &str = "oxmpi-coll-model";

/// Where a job's model came from (logged by `OXMPI_DEBUG=coll`).
///
/// ```
/// use oxmpi::coll::calibrate::{job_model, Source};
/// let (_, source) = job_model("builtin")?;
/// assert_eq!(source, Source::Builtin);
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The built-in constants ([`Model::SHM`]).
    Builtin,
    /// The file `OXMPI_COLL_MODEL` named.
    File(PathBuf),
    /// The per-host cache of an earlier calibration.
    Cache(PathBuf),
    /// Measured now (and saved to the cache, when it has a place).
    Calibrated,
    /// Measured now, but too slow to be this machine's pace (see the
    /// module docs): the job uses the built-in constants.
    Implausible(Model),
    /// Not measured, the process running under valgrind (see the module
    /// docs): the job uses the built-in constants.
    UnderValgrind,
    /// Published by rank 0 (what every other rank sees).
    Rank0,
}

/// The slowest copy or reduction rate (bytes per second, `1 / beta` and
/// `1 / gamma`) a calibration may measure and be believed: below what any
/// server or desktop core of the last fifteen years does over 1 MiB in
/// cache (this VM: 12 and 19 GB/s).
const MIN_PLAUSIBLE_RATE: f64 = 2e9;

impl Model {
    /// Whether a measured model can be this machine's pace (see the module
    /// docs): copy and reduction rates of at least `MIN_PLAUSIBLE_RATE`.
    ///
    /// ```
    /// use oxmpi::coll::select::Model;
    /// assert!(Model::SHM.plausible());
    /// let valgrind = Model { beta: 1.0 / 0.027e9, ..Model::SHM };
    /// assert!(!valgrind.plausible());
    /// ```
    pub fn plausible(&self) -> bool {
        [self.beta, self.gamma]
            .iter()
            .all(|&per_byte| per_byte > 0.0 && 1.0 / per_byte >= MIN_PLAUSIBLE_RATE)
    }

    /// The model as `key = value` lines.
    ///
    /// ```
    /// use oxmpi::coll::select::Model;
    /// let text = Model::SHM.encode(); // the form OXMPI_COLL_MODEL files hold
    /// assert!(text.starts_with("alpha_us = 0.3990\n"));
    /// assert_eq!(text.lines().count(), 3);
    /// ```
    pub fn encode(&self) -> String {
        let mut text = format!(
            "alpha_us = {:.4}\nbeta_gbps = {:.3}\ngamma_gbps = {:.3}\n",
            self.alpha * 1e6,
            1e-9 / self.beta,
            1e-9 / self.gamma
        );
        if self.inter_alpha != DEFAULT_INTER_ALPHA || self.inter_beta != DEFAULT_INTER_BETA {
            text += &format!(
                "inter_alpha_us = {:.4}\ninter_beta_gbps = {:.3}\n",
                self.inter_alpha * 1e6,
                1e-9 / self.inter_beta
            );
        }
        text
    }

    /// `alpha_us,beta_gbps,gamma_gbps,inter_alpha_us,inter_beta_gbps` as
    /// five numbers: the form
    /// published in the bootstrap key-value space, whose wire formats
    /// (PMI-1, PMI-2) split on spaces, `=` and `;`.
    pub(crate) fn encode_compact(&self) -> String {
        format!(
            "{:.4},{:.3},{:.3},{:.4},{:.3}",
            self.alpha * 1e6,
            1e-9 / self.beta,
            1e-9 / self.gamma,
            self.inter_alpha * 1e6,
            1e-9 / self.inter_beta
        )
    }

    /// Parses [`Model::encode_compact`]'s form (the first three numbers
    /// are required, the network's two optional).
    pub(crate) fn decode_compact(text: &str) -> Result<Model, String> {
        let values: Vec<&str> = text.split(',').collect();
        if values.len() < 3 || values.len() > COMPACT_KEYS.len() {
            return Err(format!(
                "{text:?}: expected 3 to {} comma-separated numbers",
                COMPACT_KEYS.len()
            ));
        }
        let lines: String = COMPACT_KEYS
            .iter()
            .zip(values)
            .map(|(key, v)| format!("{key} = {v}\n"))
            .collect();
        Model::decode(&lines)
    }

    /// Parses [`Model::encode`]'s form; the error names what is wrong.
    pub(crate) fn decode(text: &str) -> Result<Model, String> {
        let (mut alpha, mut beta, mut gamma) = (None, None, None);
        let (mut inter_alpha, mut inter_beta) = (DEFAULT_INTER_ALPHA, DEFAULT_INTER_BETA);
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| format!("line {line:?} is not `key = value`"))?;
            let v: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v > 0.0)
                .ok_or_else(|| {
                    format!(
                        "{} = {:?} is not a positive number",
                        key.trim(),
                        value.trim()
                    )
                })?;
            match key.trim() {
                "alpha_us" => alpha = Some(v * 1e-6),
                "beta_gbps" => beta = Some(1e-9 / v),
                "gamma_gbps" => gamma = Some(1e-9 / v),
                "inter_alpha_us" => inter_alpha = v * 1e-6,
                "inter_beta_gbps" => inter_beta = 1e-9 / v,
                other => return Err(format!("unknown key {other:?}")),
            }
        }
        match (alpha, beta, gamma) {
            (Some(alpha), Some(beta), Some(gamma)) => Ok(Model {
                alpha,
                beta,
                gamma,
                inter_alpha,
                inter_beta,
            }),
            _ => Err("alpha_us, beta_gbps and gamma_gbps are all required".into()),
        }
    }
}

/// The keys of [`Model::encode_compact`]'s numbers, in order.
const COMPACT_KEYS: [&str; 5] = [
    "alpha_us",
    "beta_gbps",
    "gamma_gbps",
    "inter_alpha_us",
    "inter_beta_gbps",
];

/// Rank 0's choice of the job's model (see the module docs). `setting` is
/// the value of `OXMPI_COLL_MODEL` (empty when unset).
///
/// ```
/// use oxmpi::coll::calibrate::{job_model, Source};
/// use oxmpi::coll::select::Model;
/// let (model, source) = job_model("builtin")?; // OXMPI_COLL_MODEL=builtin
/// assert_eq!((model.alpha, source), (Model::SHM.alpha, Source::Builtin));
/// let err = job_model("/nonexistent/model.txt").unwrap_err();
/// assert!(err.to_string().contains("OXMPI_COLL_MODEL"));
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub fn job_model(setting: &str) -> Result<(Model, Source), Error> {
    match setting {
        "builtin" => return Ok((Model::SHM, Source::Builtin)),
        "" => {}
        path => {
            let bad = |reason: String| Error::InvalidArgument {
                arg: "OXMPI_COLL_MODEL",
                reason: format!("{path}: {reason}"),
            };
            let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
            let model = Model::decode(&text).map_err(bad)?;
            return Ok((model, Source::File(path.into())));
        }
    }
    Ok(cached_or_calibrated(cache_path().as_deref()))
}

/// Steps 2 and 3 of the module docs, with the cache at `cache`.
fn cached_or_calibrated(cache: Option<&Path>) -> (Model, Source) {
    if let Some(p) = cache {
        if let Some(model) = std::fs::read_to_string(p)
            .ok()
            .and_then(|t| Model::decode(&t).ok())
            .filter(Model::plausible)
        {
            return (model, Source::Cache(p.into()));
        }
    }
    if under_valgrind() {
        // Its copies would measure 0.03-0.6 GB/s, taking up to a second.
        return (Model::SHM, Source::UnderValgrind);
    }
    let model = calibrate();
    if !model.plausible() {
        return (Model::SHM, Source::Implausible(model));
    }
    if let Some(p) = cache {
        // Best effort: a job without a writable cache calibrates each time.
        let _ = save(p, &model);
    }
    (model, Source::Calibrated)
}

/// Whether this process runs under valgrind (its preloaded core library).
fn under_valgrind() -> bool {
    std::env::var("LD_PRELOAD").is_ok_and(|v| v.contains("vgpreload"))
}

/// The per-host cache file, if there is a home for it.
pub(crate) fn cache_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    let host = nix::unistd::gethostname().ok()?.into_string().ok()?;
    // Unoptimised builds measure unoptimised kernels: keep them apart.
    let profile = if cfg!(debug_assertions) { "-debug" } else { "" };
    Some(
        base.join("oxmpi")
            .join(format!("coll-model-{host}{profile}")),
    )
}

/// Writes `model` to `path` atomically (a private temporary, renamed).
fn save(path: &Path, model: &Model) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".coll-model.{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(
        format!(
            "# OxMPI collective cost model, calibrated at first use\n{}",
            model.encode()
        )
        .as_bytes(),
    )?;
    std::fs::rename(&tmp, path)
}

/// Bytes per calibration buffer: the size class where the bandwidth and
/// reduction terms start to matter, small enough to stay in cache.
const CAL_BYTES: usize = 1 << 20;
/// Timed repetitions of each measurement (the best one counts).
const CAL_REPS: usize = 32;
/// Per-message cost when nothing better is known: the fit of
/// `coll --model` on the development machine (docs/STATUS.md). One rank
/// alone cannot measure a message between two processes.
const DEFAULT_ALPHA: f64 = 0.4e-6;

/// Measures this core: beta from a timed copy (a shared-memory message is
/// copied twice, into a ring cell and out of it), gamma from the `f64` sum
/// kernel, in place, over the same bytes. Alpha is [`DEFAULT_ALPHA`].
pub(crate) fn calibrate() -> Model {
    let one = 1.0f64.to_ne_bytes();
    let src: Vec<u8> = one.iter().copied().cycle().take(CAL_BYTES).collect();
    let mut dst = vec![0u8; CAL_BYTES];
    let copy = best_of(|| dst.copy_from_slice(std::hint::black_box(&src)));
    let reduce = best_of(|| {
        let _ = oxmpi_kernels::reduce(
            oxmpi_kernels::Op::Sum,
            oxmpi_kernels::ElemType::F64,
            &mut dst,
            &src,
        );
    });
    std::hint::black_box(&dst);
    Model {
        alpha: DEFAULT_ALPHA,
        beta: 2.0 * copy / CAL_BYTES as f64,
        gamma: reduce / CAL_BYTES as f64,
        inter_alpha: DEFAULT_INTER_ALPHA,
        inter_beta: DEFAULT_INTER_BETA,
    }
}

/// The fastest of [`CAL_REPS`] timed runs of `f` (after one warm-up), in seconds.
fn best_of(mut f: impl FnMut()) -> f64 {
    f();
    (0..CAL_REPS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
        .max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trip_and_errors_name_the_problem() {
        let m = Model {
            alpha: 0.4e-6,
            beta: 1.0 / 13.3e9,
            gamma: 1.0 / 10e9,
            ..Model::SHM
        };
        let back = Model::decode(&m.encode()).unwrap();
        assert!((back.alpha - m.alpha).abs() < 1e-12);
        // Default network parameters are left out: the form files had before.
        assert!(!m.encode().contains("inter"), "{}", m.encode());
        assert_eq!(back.inter_alpha, DEFAULT_INTER_ALPHA);
        let compact = m.encode_compact();
        assert!(!compact.contains([' ', '\n', '=', ';']), "{compact}");
        assert!((Model::decode_compact(&compact).unwrap().gamma - m.gamma).abs() < 1e-15);
        assert!(Model::decode_compact("1,2").is_err());
        assert!((1.0 / back.beta - 13.3e9).abs() < 1e7);
        assert!(Model::decode("alpha_us = 1\nbeta_gbps = 2")
            .unwrap_err()
            .contains("all required"));
        assert!(
            Model::decode("alpha_us = -1\nbeta_gbps = 2\ngamma_gbps = 3")
                .unwrap_err()
                .contains("alpha_us")
        );
        assert!(Model::decode("speed = 3").unwrap_err().contains("speed"));
    }

    #[test]
    fn network_keys_are_optional_and_round_trip() {
        let old = Model::decode("alpha_us = 1\nbeta_gbps = 2\ngamma_gbps = 3\n").unwrap();
        assert_eq!(
            (old.inter_alpha, old.inter_beta),
            (DEFAULT_INTER_ALPHA, DEFAULT_INTER_BETA)
        );
        let net = Model::decode(
            "alpha_us = 1\nbeta_gbps = 2\ngamma_gbps = 3\ninter_alpha_us = 5 # IB\ninter_beta_gbps = 12.5\n",
        )
        .unwrap();
        assert!((net.inter_alpha - 5e-6).abs() < 1e-15);
        assert!((1.0 / net.inter_beta - 12.5e9).abs() < 1e3);
        for text in [net.encode(), net.encode_compact()] {
            let back = Model::decode(&text)
                .or_else(|_| Model::decode_compact(&text))
                .unwrap();
            assert!((back.inter_alpha - net.inter_alpha).abs() < 1e-12, "{text}");
            assert!((back.inter_beta - net.inter_beta).abs() < 1e-15, "{text}");
        }
        // Three compact numbers (an older rank 0) still parse.
        assert_eq!(
            Model::decode_compact("1,2,3").unwrap().inter_alpha,
            DEFAULT_INTER_ALPHA
        );
        assert!(Model::decode_compact("1,2,3,4,5,6").is_err());
        assert!(Model::decode("inter_alpha_us = 0\n")
            .unwrap_err()
            .contains("inter_alpha_us"));
    }

    #[test]
    fn calibration_measures_plausible_rates() {
        let m = calibrate();
        // Any machine that runs this copies and adds between 0.1 and 1000 GB/s.
        for rate in [1.0 / m.beta, 1.0 / m.gamma] {
            assert!((1e8..1e12).contains(&rate), "{m:?}");
        }
    }

    #[test]
    fn file_setting_wins_and_bad_files_are_named() {
        let dir = std::env::temp_dir().join(format!("oxmpi-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good");
        std::fs::write(&good, "alpha_us = 2\nbeta_gbps = 5\ngamma_gbps = 7\n").unwrap();
        let (m, src) = job_model(good.to_str().unwrap()).unwrap();
        assert_eq!(src, Source::File(good.clone()));
        assert!((m.alpha - 2e-6).abs() < 1e-12);
        let e = job_model(dir.join("missing").to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("OXMPI_COLL_MODEL"), "{e}");
        assert_eq!(job_model("builtin").unwrap().1, Source::Builtin);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_implausible_cache_is_measured_again_and_replaced() {
        let dir = std::env::temp_dir().join(format!("oxmpi-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cache = dir.join("coll-model-test");
        // What a first job under valgrind would have left.
        let slow = Model {
            beta: 1.0 / 0.027e9,
            ..Model::SHM
        };
        save(&cache, &slow).unwrap();
        let (fresh, source) = cached_or_calibrated(Some(&cache));
        assert_eq!(source, Source::Calibrated, "{fresh:?}");
        assert!(fresh.plausible(), "{fresh:?}");
        let kept = Model::decode(&std::fs::read_to_string(&cache).unwrap()).unwrap();
        assert_eq!(kept.encode(), fresh.encode());
        // A plausible cache is taken as it is.
        assert_eq!(
            cached_or_calibrated(Some(&cache)).1,
            Source::Cache(cache.clone())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
