//! The runtime's error type; the one place errors are classified.

use thiserror::Error as ThisError;

use crate::status::{Status, TAG_UB};

/// Everything that can go wrong in the runtime, with what was wrong and with which value.
///
/// ```
/// use oxmpi::{Error, ErrorClass};
/// let err = oxmpi::dims_create(0, &mut [0, 0]).unwrap_err();
/// assert!(matches!(err, Error::InvalidArgument { arg: "nnodes", .. }));
/// assert_eq!(err.to_string(), "invalid argument `nnodes`: 0 processes: need at least 1");
/// assert_eq!(err.class(), ErrorClass::Dims);
/// let e = Error::InvalidRank { arg: "dest", value: 9, size: 4 };
/// assert_eq!(e.to_string(), "invalid rank 9 for argument `dest`: the communicator has 4 ranks");
/// assert_eq!(e.class(), ErrorClass::Rank);
/// ```
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
    /// Probing the host's hardware (`crate::machine`) failed without an
    /// errno to report.
    #[error("{what}: {reason}")]
    Machine {
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
    /// The CUDA driver or NVRTC failed on a device buffer.
    #[error("{what}: {reason}")]
    Device {
        /// The driver call or step that failed (e.g. "cuMemcpy").
        what: &'static str,
        /// The driver's error name and code, or why the device path is unavailable.
        reason: String,
    },
    /// A rank argument is outside the communicator.
    #[error("invalid rank {value} for argument `{arg}`: the communicator has {size} ranks")]
    InvalidRank {
        /// Which argument (`dest`, `source`, `root`).
        arg: &'static str,
        /// The value given.
        value: i32,
        /// Ranks in the communicator.
        size: i32,
    },
    /// A tag argument is out of range.
    #[error("invalid tag {value} for argument `{arg}`: tags are 0..={ub}{wild}", ub = TAG_UB, wild = if *.allows_any { " or ANY_TAG" } else { "" })]
    InvalidTag {
        /// Which argument.
        arg: &'static str,
        /// The value given.
        value: i32,
        /// Whether `ANY_TAG` would have been accepted here.
        allows_any: bool,
    },
    /// Some other argument is wrong.
    #[error("invalid argument `{arg}`: {reason}")]
    InvalidArgument {
        /// Which argument.
        arg: &'static str,
        /// What is wrong with its value.
        reason: String,
    },
    /// A reduction operation cannot be applied (e.g. `MPI_BAND` on `MPI_FLOAT`).
    #[error("invalid operation: {reason}")]
    InvalidOp {
        /// What is wrong, naming the operation and the type.
        reason: String,
    },
    /// A datatype cannot be used for the call (e.g. it is not committed).
    #[error("invalid datatype: {0}")]
    InvalidDatatype(String),
    /// A message was longer than the receive buffer; `status` says what was stored.
    #[error(
        "message of {message_len} bytes truncated to the receive buffer of {buffer_len} bytes"
    )]
    Truncated {
        /// Length of the message sent.
        message_len: usize,
        /// Bytes stored.
        buffer_len: usize,
        /// The receive's status (count = bytes stored).
        status: Status,
    },
    /// The operation is not supported (yet), with what would be needed.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The name service refused a publish or unpublish (`MPI_ERR_SERVICE`).
    #[error("name service: {0}")]
    Service(String),
    /// The launcher could not start spawned processes (`MPI_ERR_SPAWN`).
    #[error("spawn: {0}")]
    Spawn(String),
    /// No port is published under a service name (`MPI_ERR_NAME`).
    #[error("name service: {0}")]
    NameNotPublished(String),
    /// The library is not in a state that allows the call.
    #[error("{0}")]
    State(String),
    /// A communicator cannot be used for this call (freed, predefined, or
    /// without the topology the call needs), with why.
    #[error("invalid communicator: {0}")]
    InvalidComm(String),
    /// A virtual topology argument or state is wrong (`MPI_ERR_TOPOLOGY`).
    #[error("invalid topology: {0}")]
    InvalidTopology(String),
    /// No context id is free on every rank of the parent communicator.
    #[error(
        "too many communicators: no context id is free on every rank of the parent \
         communicator (each process can hold {limit} communicators at once; this one has \
         {free_here} ids free); free communicators that are no longer needed"
    )]
    ContextIdsExhausted {
        /// Communicators a process can hold at once (world and self included).
        limit: usize,
        /// Ids still free on this rank.
        free_here: usize,
    },
    /// A program's callback (an attribute copy or delete function, ...)
    /// returned an error code, which a front end reports unchanged.
    #[error("{what} returned error code {code}")]
    Callback {
        /// Which callback, for which object.
        what: String,
        /// The code it returned.
        code: i32,
    },
    /// A one-sided communication call is wrong for its window (range,
    /// epoch, lock type, assertion, ...): `class` says which MPI class.
    #[error("{reason}")]
    Rma {
        /// The MPI error class (`ErrorClass::RmaRange`, `RmaSync`, `Win`, ...).
        class: ErrorClass,
        /// What is wrong, naming the argument and its value.
        reason: String,
    },
    /// A file (MPI-IO) call failed: `class` says which MPI class
    /// (`ErrorClass::NoSuchFile`, `Amode`, `Io`, ...).
    #[error("{reason}")]
    File {
        /// The MPI error class.
        class: ErrorClass,
        /// What is wrong, naming the argument or file and the value.
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

/// MPI error classes (values of the MPICH ABI), for the C front end.
///
/// ```
/// use oxmpi::{Error, ErrorClass};
/// let e = Error::InvalidRank { arg: "root", value: -3, size: 4 };
/// assert_eq!(e.class(), ErrorClass::Root);
/// assert_eq!(ErrorClass::Root as i32, 7); // MPI_ERR_ROOT in the MPICH ABI
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum ErrorClass {
    /// MPI_ERR_BUFFER
    Buffer = 1,
    /// MPI_ERR_COUNT
    Count = 2,
    /// MPI_ERR_TYPE
    Type = 3,
    /// MPI_ERR_TAG
    Tag = 4,
    /// MPI_ERR_COMM
    Comm = 5,
    /// MPI_ERR_RANK
    Rank = 6,
    /// MPI_ERR_ROOT
    Root = 7,
    /// MPI_ERR_OP
    Op = 9,
    /// MPI_ERR_GROUP
    Group = 8,
    /// MPI_ERR_TOPOLOGY
    Topology = 10,
    /// MPI_ERR_DIMS
    Dims = 11,
    /// MPI_ERR_ARG
    Arg = 12,
    /// MPI_ERR_TRUNCATE
    Truncate = 14,
    /// MPI_ERR_OTHER
    Other = 15,
    /// MPI_ERR_INTERN
    Intern = 16,
    /// MPI_ERR_UNSUPPORTED_OPERATION
    UnsupportedOperation = 44,
    /// MPI_ERR_PORT
    Port = 38,
    /// MPI_ERR_NAME
    Name = 33,
    /// MPI_ERR_SERVICE
    Service = 41,
    /// MPI_ERR_SPAWN
    Spawn = 42,
    /// MPI_ERR_KEYVAL
    Keyval = 48,
    /// MPI_ERR_NO_MEM
    NoMem = 34,
    /// MPI_ERR_INFO_VALUE
    InfoValue = 30,
    /// MPI_ERR_WIN
    Win = 45,
    /// MPI_ERR_BASE
    Base = 46,
    /// MPI_ERR_LOCKTYPE
    LockType = 47,
    /// MPI_ERR_RMA_CONFLICT
    RmaConflict = 49,
    /// MPI_ERR_RMA_SYNC
    RmaSync = 50,
    /// MPI_ERR_SIZE
    Size = 51,
    /// MPI_ERR_DISP
    Disp = 52,
    /// MPI_ERR_ASSERT
    Assert = 53,
    /// MPI_ERR_RMA_RANGE
    RmaRange = 55,
    /// MPI_ERR_RMA_ATTACH
    RmaAttach = 56,
    /// MPI_ERR_RMA_SHARED
    RmaShared = 57,
    /// MPI_ERR_RMA_FLAVOR
    RmaFlavor = 58,
    /// MPI_ERR_ACCESS
    Access = 20,
    /// MPI_ERR_AMODE
    Amode = 21,
    /// MPI_ERR_BAD_FILE
    BadFile = 22,
    /// MPI_ERR_CONVERSION
    Conversion = 23,
    /// MPI_ERR_DUP_DATAREP
    DupDatarep = 24,
    /// MPI_ERR_FILE_EXISTS
    FileExists = 25,
    /// MPI_ERR_FILE_IN_USE
    FileInUse = 26,
    /// MPI_ERR_FILE
    File = 27,
    /// MPI_ERR_IO
    Io = 32,
    /// MPI_ERR_NOT_SAME
    NotSame = 35,
    /// MPI_ERR_NO_SPACE
    NoSpace = 36,
    /// MPI_ERR_NO_SUCH_FILE
    NoSuchFile = 37,
    /// MPI_ERR_QUOTA
    Quota = 39,
    /// MPI_ERR_READ_ONLY
    ReadOnly = 40,
    /// MPI_ERR_UNSUPPORTED_DATAREP
    UnsupportedDatarep = 43,
}

impl Error {
    /// The MPI error class of this error.
    ///
    /// See the examples on [`Error`] and [`ErrorClass`].
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::InvalidRank { arg: "root", .. } => ErrorClass::Root,
            Error::InvalidRank { .. } => ErrorClass::Rank,
            Error::InvalidTag { .. } => ErrorClass::Tag,
            Error::InvalidArgument { arg: "count", .. } => ErrorClass::Count,
            Error::InvalidArgument {
                arg: "buf" | "sendbuf" | "recvbuf",
                ..
            } => ErrorClass::Buffer,
            Error::InvalidArgument {
                arg: "group" | "group1" | "group2",
                ..
            } => ErrorClass::Group,
            Error::InvalidArgument {
                arg: "dims" | "nnodes" | "ndims",
                ..
            } => ErrorClass::Dims,
            Error::InvalidArgument { arg: "keyval", .. } => ErrorClass::Keyval,
            Error::InvalidArgument {
                arg: "port_name", ..
            } => ErrorClass::Port,
            Error::InvalidArgument { .. } => ErrorClass::Arg,
            Error::InvalidComm(_) => ErrorClass::Comm,
            Error::InvalidTopology(_) => ErrorClass::Topology,
            Error::InvalidDatatype(_) => ErrorClass::Type,
            Error::Truncated { .. } => ErrorClass::Truncate,
            Error::InvalidOp { .. } => ErrorClass::Op,
            Error::Unsupported(_) => ErrorClass::UnsupportedOperation,
            Error::Service(_) => ErrorClass::Service,
            Error::Spawn(_) => ErrorClass::Spawn,
            Error::NameNotPublished(_) => ErrorClass::Name,
            Error::Rma { class, .. } | Error::File { class, .. } => *class,
            Error::Bootstrap(_) | Error::Wire(_) | Error::Os { .. } => ErrorClass::Intern,
            _ => ErrorClass::Other,
        }
    }
}

// `Status::check` lives with the error it returns (status sits below error).
impl Status {
    /// `Err(Error::Truncated)` when the message did not fit.
    ///
    /// ```
    /// use oxmpi::{Error, Status};
    /// let st = Status { source: 0, tag: 1, count: 8, cancelled: false, truncated_from: None };
    /// assert_eq!(st.check()?, st);
    /// let cut = Status { truncated_from: Some(16), ..st };
    /// let err = cut.check().unwrap_err();
    /// assert!(matches!(err, Error::Truncated { message_len: 16, buffer_len: 8, .. }));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    #[inline]
    pub fn check(self) -> Result<Status, Error> {
        match self.truncated_from {
            Some(len) => Err(Error::Truncated {
                message_len: len,
                buffer_len: self.count,
                status: self,
            }),
            None => Ok(self),
        }
    }
}

/// The message a panic carried (`panic!("...")` gives a `&str` or a
/// `String`), for turning a caught panic into an error.
///
/// ```
/// let caught = std::panic::catch_unwind(|| panic!("bad {}", 1)).unwrap_err();
/// assert_eq!(oxmpi::error::panic_message(caught.as_ref()), "bad 1");
/// ```
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// The error of a collective whose user operation panicked with `payload`
/// (a non-blocking call fails instead of unwinding).
pub(crate) fn user_op_panicked(payload: &(dyn std::any::Any + Send)) -> Error {
    Error::InvalidOp {
        reason: format!("the user operation panicked: {}", panic_message(payload)),
    }
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
        let e = Error::Machine {
            what: "hwloc_get_nbobjs_by_type",
            reason: "hwloc reported 0 PUs".into(),
        };
        assert_eq!(
            e.to_string(),
            "hwloc_get_nbobjs_by_type: hwloc reported 0 PUs"
        );
    }

    #[test]
    fn argument_errors_name_argument_and_value() {
        let e = Error::InvalidRank {
            arg: "dest",
            value: 9,
            size: 4,
        };
        assert_eq!(
            e.to_string(),
            "invalid rank 9 for argument `dest`: the communicator has 4 ranks"
        );
        assert_eq!(e.class(), ErrorClass::Rank);
        let e = Error::InvalidTag {
            arg: "tag",
            value: -5,
            allows_any: true,
        };
        assert!(e.to_string().contains("invalid tag -5 for argument `tag`"));
        assert!(e.to_string().ends_with("or ANY_TAG"));
        assert_eq!(e.class(), ErrorClass::Tag);
    }
}
