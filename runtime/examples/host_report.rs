//! Prints what OxMPI knows about this host: the report `oxrun --info` shows.
//!
//! Run with `cargo run -p oxmpi --example host_report`.

use std::io::Write;

fn main() {
    let report = oxmpi::info::HostReport::gather();
    // A closed pipe (e.g. `| head`) is not worth a panic.
    let _ = write!(std::io::stdout().lock(), "{report}");
}
