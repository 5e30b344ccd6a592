//! `oxrun`: the OxMPI launcher and PMI server (also installed as `mpirun`
//! and `mpiexec`). See `oxrun --help`.
#![deny(missing_docs)]

mod agent;
mod bind;
mod cli;
mod conn;
mod controller;
mod hosts;
mod plan;
mod poller;
mod proto;
mod signals;

use thiserror::Error;

/// Errors that stop oxrun before a job runs.
#[derive(Debug, Error)]
pub enum LaunchError {
    /// The command line is wrong; the text says which argument and value.
    #[error("{0}")]
    Usage(String),
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match cli::parse(&args) {
        Ok(cli::Mode::Run(opts)) => controller::run(opts),
        Ok(cli::Mode::Proxy(target)) => agent::run(target),
        Ok(cli::Mode::Version) => {
            println!("{}", version_line());
            0
        }
        Ok(cli::Mode::Help) => {
            print!("{}", cli::USAGE);
            0
        }
        Ok(cli::Mode::Info) => {
            println!("{}", version_line());
            println!("{}", oxmpi::info::HostReport::gather());
            0
        }
        Err(e) => {
            eprintln!("oxrun: {e}");
            2
        }
    };
    std::process::exit(code);
}

fn version_line() -> String {
    format!(
        "oxrun (OxMPI) {} — PMI-1 and PMI-2 server",
        env!("CARGO_PKG_VERSION")
    )
}
