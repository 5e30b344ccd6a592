//! Benchmark support code shared by the runners in `src/bin/`.
//!
//! * [`cli`]: flags, seconds, the results directory.
//! * [`peers`]: OxMPI, MPICH and Open MPI side by side: launchers, C
//!   builds, the figures the benchmarks print.
//! * [`job`]: around one job: a quiet machine, its speed, how it ended.
//! * [`capture`] / [`timing`]: run a whole job under a hard timeout, keeping
//!   its output or its time.
//! * [`machine`]: the machine's own core-to-core latency (its state).
//! * [`stats`]: summaries (min, median, mean) of samples.
//! * [`format`]: sizes, times and ratios as the reports write them.
//! * [`report`]: Markdown tables and the report header (date, host).
#![deny(missing_docs)]

pub mod capture;
pub mod cli;
pub mod format;
pub mod job;
pub mod machine;
pub mod peers;
pub mod report;
pub mod stats;
pub mod timing;
