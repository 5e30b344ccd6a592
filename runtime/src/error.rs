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
    /// A tunable's value could not be read (the message names the variable
    /// and the value).
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// Probing the host topology failed without an errno to report.
    #[error("{what}: {reason}")]
    Topology {
        /// What failed: the hwloc call, or "hwloc" itself.
        what: &'static str,
        /// Why, with the offending value.
        reason: String,
    },
    /// libfabric could not be loaded, or one of its calls failed.
    #[error("{what}: {reason}")]
    Fabric {
        /// What failed: the libfabric call, or "libfabric not loadable".
        what: &'static str,
        /// Why: libfabric's error text and code, or the loader's.
        reason: String,
    },
    /// An operating-system call failed.
    #[error("{call}: {source}")]
    Os {
        /// Which call.
        call: &'static str,
        /// The errno.
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigError;

    #[test]
    fn messages_say_what_failed_with_which_value() {
        let e = Error::from(ConfigError::NotUnicode { env: "OXMPI_CMA" });
        assert!(matches!(e, Error::Config(_)));
        assert_eq!(e.to_string(), "OXMPI_CMA is set but is not valid UTF-8");
        let e = Error::Fabric {
            what: "fi_getinfo",
            reason: "Function not implemented (-38)".into(),
        };
        assert_eq!(e.to_string(), "fi_getinfo: Function not implemented (-38)");
        let e = Error::Topology {
            what: "hwloc_get_nbobjs_by_type",
            reason: "hwloc reported 0 PUs".into(),
        };
        assert_eq!(
            e.to_string(),
            "hwloc_get_nbobjs_by_type: hwloc reported 0 PUs"
        );
    }
}
