//! The status of a completed receive (or send): who, which tag, how much.

use crate::datatype::Datatype;
use crate::error::Error;

/// `MPI_ANY_SOURCE`.
///
/// ```no_run
/// use oxmpi::{ANY_SOURCE, ANY_TAG};
/// # let universe = oxmpi::init()?; let world = universe.world();
/// if world.rank() == 0 {
///     for _ in 1..world.size() {
///         let mut v = [0i32];
///         let st = world.recv(&mut v, ANY_SOURCE, ANY_TAG)?; // whoever comes first
///         println!("{} from rank {} (tag {})", v[0], st.source, st.tag);
///     }
/// } else {
///     world.send(&[world.rank()], 0, 5)?;
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub const ANY_SOURCE: i32 = -2;
/// `MPI_ANY_TAG`.
///
/// ```no_run
/// use oxmpi::ANY_TAG;
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let last = world.size() - 1;
/// if world.rank() == 0 {
///     world.send(&[1u8, 2, 3], last, 42)?;
/// }
/// if world.rank() == last {
///     let st = world.probe(0, ANY_TAG)?; // any tag from rank 0
///     let mut buf = vec![0u8; st.count];
///     world.recv(&mut buf, 0, st.tag)?;
///     assert_eq!(st.tag, 42);
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub const ANY_TAG: i32 = -1;
/// `MPI_PROC_NULL`: sends to it and receives from it complete at once.
///
/// ```no_run
/// use oxmpi::PROC_NULL;
/// # let universe = oxmpi::init()?; let world = universe.world();
/// // The last rank of a chain has no right neighbour: its send is a no-op.
/// let right = if world.rank() + 1 < world.size() { world.rank() + 1 } else { PROC_NULL };
/// world.send(&[1u8], right, 0)?;
/// let st = world.recv(&mut [0u8], PROC_NULL, 0)?;
/// assert_eq!((st.source, st.count), (PROC_NULL, 0));
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub const PROC_NULL: i32 = -1;
/// Largest tag a program may use (`MPI_TAG_UB`).
///
/// ```
/// assert_eq!(oxmpi::TAG_UB, (1 << 30) - 1);
/// assert!(oxmpi::TAG_UB >= 32767); // the least MPI allows
/// ```
pub const TAG_UB: i32 = (1 << 30) - 1;

/// Result of a completed operation, as `MPI_Status` carries it.
///
/// ```
/// use oxmpi::{Status, ANY_TAG, PROC_NULL};
/// let st = Status { source: 3, tag: 7, count: 24, cancelled: false, truncated_from: None };
/// assert_eq!(st.count_of(8), Some(3)); // three f64
/// assert_eq!(st.count_of(16), None); // not a whole number of 16-byte elements
/// let none = Status::empty();
/// assert_eq!((none.source, none.tag, none.count), (PROC_NULL, ANY_TAG, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// Sender's rank in the communicator (`MPI_SOURCE`).
    pub source: i32,
    /// Message tag (`MPI_TAG`).
    pub tag: i32,
    /// Bytes received (or the message size for a probe).
    pub count: usize,
    /// The receive was cancelled.
    pub cancelled: bool,
    /// Set when the message was longer than the buffer: `count` bytes were
    /// stored and the rest discarded (`MPI_ERR_TRUNCATE`).
    pub truncated_from: Option<usize>,
}

impl Status {
    /// The status of an operation with no message (e.g. with `PROC_NULL`).
    ///
    /// See the example on [`Status`].
    pub fn empty() -> Status {
        Status {
            source: PROC_NULL,
            tag: ANY_TAG,
            count: 0,
            cancelled: false,
            truncated_from: None,
        }
    }

    /// Number of whole elements of `elem_size` bytes (`MPI_Get_count`);
    /// `None` when the byte count is not a multiple (`MPI_UNDEFINED`).
    ///
    /// See the example on [`Status`].
    pub fn count_of(&self, elem_size: usize) -> Option<usize> {
        if elem_size == 0 {
            return Some(0);
        }
        self.count
            .is_multiple_of(elem_size)
            .then_some(self.count / elem_size)
    }

    /// Whole elements of `datatype` received (`MPI_Get_count`): the byte
    /// count is in packed bytes, whatever the layout of the buffer; `None`
    /// (`MPI_UNDEFINED`) when it ends inside an element.
    ///
    /// ```
    /// use oxmpi::datatype::{BasicType, Datatype};
    /// use oxmpi::Status;
    /// let d = Datatype::basic(BasicType::Double);
    /// let col = Datatype::vector(3, 1, 4, &d)?; // 3 doubles, 24 packed bytes
    /// let st = Status { source: 0, tag: 0, count: 48, cancelled: false, truncated_from: None };
    /// assert_eq!((st.count_in(&col), st.elements_in(&col)), (Some(2), Some(6)));
    /// let part = Status { count: 32, ..st };
    /// assert_eq!((part.count_in(&col), part.elements_in(&col)), (None, Some(4)));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn count_in(&self, datatype: &Datatype) -> Option<usize> {
        datatype.get_count(self.count)
    }

    /// Basic elements received, counted through `datatype`'s type
    /// signature (`MPI_Get_elements`); `None` when the byte count ends
    /// inside a basic element.
    ///
    /// See the example on [`Status::count_in`].
    pub fn elements_in(&self, datatype: &Datatype) -> Option<usize> {
        datatype.get_elements(self.count)
    }

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
