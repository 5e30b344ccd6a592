//! Benchmark support code shared by the runners in `src/bin/`.
//!
//! * [`stats`]: summaries (min, median, mean) of timing samples.
//! * [`timing`]: run a whole job under a hard timeout and time it.
//! * [`report`]: Markdown tables and the report header (date, host).
//! * [`machine`]: the machine's own core-to-core latency (its state).
#![deny(missing_docs)]

pub mod capture;
pub mod machine;
pub mod peers;
pub mod report;
pub mod stats;
pub mod timing;
