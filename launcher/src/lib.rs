//! The OxMPI launcher (`oxrun`, also `mpirun` / `mpiexec`) as a library:
//! the binary is a thin `main` over [`run_from_args`]. Exposed as a library
//! so the wire formats can be fuzzed and tested directly.
#![deny(missing_docs)]

pub mod agent;
mod bind;
pub mod cli;
pub mod conn;
pub mod controller;
pub mod hosts;
pub mod limits;
pub mod liveness;
pub mod plan;
pub mod poller;
pub mod proto;
pub mod signals;

use thiserror::Error;

/// Errors that stop oxrun before a job runs.
#[derive(Debug, Error)]
pub enum LaunchError {
    /// The command line is wrong; the text says which argument and value.
    #[error("{0}")]
    Usage(String),
}

/// Runs oxrun with `args` (without the program name); returns the exit code.
pub fn run_from_args(args: &[String]) -> i32 {
    if args.first().map(String::as_str) == Some("--spawn-exec") {
        return agent::spawned::exec_planned();
    }
    match cli::parse(args) {
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
        Ok(cli::Mode::Explain {
            coll,
            bytes,
            ranks,
            commutative,
            nodes,
        }) => {
            use oxmpi::coll::{algos::Args, nodes::Layout, select};
            match select::Coll::from_name(&coll) {
                Some(c) => {
                    let args =
                        Args::new(ranks, bytes, commutative).on(Layout::blocks(ranks, nodes));
                    // The model a job started here would use (same rules as rank 0's).
                    let chosen = oxmpi::config::get(&oxmpi::config::COLL_MODEL)
                        .map_err(|e| e.to_string())
                        .and_then(|s| {
                            oxmpi::coll::calibrate::job_model(&s).map_err(|e| e.to_string())
                        });
                    match chosen {
                        Ok((model, source)) => {
                            println!(
                                "cost model ({source:?}): {}",
                                model.encode().trim().replace('\n', ", ")
                            );
                            print!("{}", select::explain(c, &args, &model));
                            0
                        }
                        Err(e) => {
                            eprintln!("oxrun: --explain: {e}");
                            2
                        }
                    }
                }
                None => {
                    let known: Vec<&str> = select::Coll::ALL.iter().map(|c| c.name()).collect();
                    eprintln!(
                        "oxrun: --explain: unknown collective '{coll}' ({})",
                        known.join(", ")
                    );
                    2
                }
            }
        }
        Err(e) => {
            eprintln!("oxrun: {e}");
            2
        }
    }
}

/// The line `oxrun --version` prints.
pub fn version_line() -> String {
    format!(
        "oxrun (OxMPI) {} — PMI-1 and PMI-2 server",
        env!("CARGO_PKG_VERSION")
    )
}
