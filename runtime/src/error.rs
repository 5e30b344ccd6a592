//! The runtime's error type; the one place errors are classified.

use thiserror::Error as ThisError;

/// Everything that can go wrong in the runtime, with what was wrong and with which value.
#[derive(Debug, ThisError)]
#[non_exhaustive]
pub enum Error {
    /// Talking to the process manager failed.
    #[error("bootstrap: {0}")]
    Bootstrap(String),
    /// A PMI message could not be parsed or encoded.
    #[error(transparent)]
    Wire(#[from] crate::bootstrap::wire::WireError),
    /// An operating-system call failed.
    #[error("{call}: {source}")]
    Os {
        /// Which call.
        call: &'static str,
        /// The errno.
        source: std::io::Error,
    },
}
