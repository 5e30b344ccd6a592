//! The status of a completed receive (or send): who, which tag, how much.

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
/// `MPI_UNDEFINED`: the split color of a rank that wants no new
/// communicator, and the rank of a process outside a group.
///
/// ```no_run
/// use oxmpi::UNDEFINED;
/// # let universe = oxmpi::init()?; let world = universe.world();
/// // Rank 0 stays out; everyone else gets a communicator of the others.
/// let color = if world.rank() == 0 { UNDEFINED } else { 1 };
/// let others = world.split(color, 0)?;
/// assert_eq!(others.is_none(), world.rank() == 0);
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub const UNDEFINED: i32 = -32766;
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
}
