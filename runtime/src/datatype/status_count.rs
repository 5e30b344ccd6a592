//! Element counts of a status (`MPI_Get_count`, `MPI_Get_elements`):
//! the status holds bytes, the datatype knows what elements they are.

use super::Datatype;
use crate::status::Status;

impl Status {
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
}
