//! A file view (MPI 4.0 section 14.3): a displacement, an etype, a
//! filetype tiled from the displacement on, and a data representation.
//! The view's data is a stream of bytes (positions in etypes times the
//! etype's size); [`FileView::runs`] maps a range of that stream to the
//! file's byte ranges lazily, through the filetype's segment iterator, so
//! no list of the whole view is ever built.

use crate::datatype::{BasicType, Datatype, Segments};
use crate::error::{Error, ErrorClass};

use super::file_err;

/// A data representation (`datarep` of `MPI_File_set_view`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datarep {
    /// `"native"`: memory's bytes as they are.
    Native,
    /// `"internal"`: the implementation's choice, here the same as native.
    Internal,
    /// `"external32"`: big-endian, the standard's sizes (MPI 4.0 section 14.5.2).
    External32,
}

impl Datarep {
    /// The representation a name gives (`MPI_ERR_UNSUPPORTED_DATAREP` otherwise).
    pub fn parse(name: &str) -> Result<Datarep, Error> {
        match name {
            "native" => Ok(Datarep::Native),
            "internal" => Ok(Datarep::Internal),
            "external32" => Ok(Datarep::External32),
            _ => Err(file_err(
                ErrorClass::UnsupportedDatarep,
                format!(
                    "invalid `datarep` {name:?}: \"native\", \"internal\" and \"external32\" \
                     are supported"
                ),
            )),
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Datarep::Native => "native",
            Datarep::Internal => "internal",
            Datarep::External32 => "external32",
        }
    }
}

/// A file view.
#[derive(Debug, Clone)]
pub struct FileView {
    /// Bytes from the start of the file where the view begins.
    pub disp: u64,
    /// The elementary type: positions and counts are in these.
    pub etype: Datatype,
    /// What each tile of the view holds.
    pub filetype: Datatype,
    /// The data representation.
    pub datarep: Datarep,
}

impl Default for FileView {
    fn default() -> FileView {
        let byte = Datatype::basic(BasicType::Byte);
        FileView {
            disp: 0,
            etype: byte.clone(),
            filetype: byte,
            datarep: Datarep::Native,
        }
    }
}

impl FileView {
    /// A view, checked: committed types, a filetype made of etypes, typemaps
    /// that stay inside the file, and (for external32) types whose
    /// external32 form has their native layout.
    pub fn new(
        disp: u64,
        etype: Datatype,
        filetype: Datatype,
        datarep: Datarep,
    ) -> Result<FileView, Error> {
        let esize = etype.size();
        if esize == 0 {
            return Err(Error::InvalidDatatype(format!(
                "invalid `etype` {etype:?}: an etype must hold data"
            )));
        }
        if !filetype.size().is_multiple_of(esize) {
            return Err(Error::InvalidDatatype(format!(
                "invalid `filetype` {filetype:?}: its {} bytes are not a whole number of \
                 etypes of {esize} bytes",
                filetype.size()
            )));
        }
        if filetype.size() > 0 && filetype.extent() <= 0 {
            return Err(file_err(
                ErrorClass::Io,
                format!("invalid `filetype` {filetype:?}: a filetype needs a positive extent"),
            ));
        }
        // A contiguous filetype's file layout is the stream itself, in any
        // representation; another's would have to be laid out anew where
        // its types change size in external32.
        let linear = filetype.is_contiguous() && filetype.size() as isize == filetype.extent();
        for (t, arg) in [(&etype, "etype"), (&filetype, "filetype")] {
            t.segments(0)?; // committed
            if datarep == Datarep::External32 && t.external32_size(1)? != t.size() && !linear {
                return Err(file_err(
                    ErrorClass::UnsupportedDatarep,
                    format!(
                        "`{arg}` {t:?} changes size in external32 (long, wchar_t or long \
                         double): only contiguous filetypes of such types are supported"
                    ),
                ));
            }
        }
        Ok(FileView {
            disp,
            etype,
            filetype,
            datarep,
        })
    }

    /// Checks the typemaps of the etype and the filetype (MPI 4.0 section
    /// 14.3): displacements non-negative and monotonically non-decreasing,
    /// and, unless the file is read-only, no overlapping data
    /// (`MPI_ERR_IO` otherwise).
    pub fn check_layout(&self, read_only: bool) -> Result<(), Error> {
        for (t, arg) in [(&self.etype, "etype"), (&self.filetype, "filetype")] {
            let bad = |why: String| {
                Err(file_err(
                    ErrorClass::Io,
                    format!("invalid `{arg}` {t:?} for a file view: {why}"),
                ))
            };
            let mut prev: Option<(isize, isize)> = None;
            for s in t.segments(1)? {
                let end = s.offset + s.len as isize;
                if s.offset < 0 {
                    return bad(format!("negative displacement {}", s.offset));
                }
                if let Some((start, stop)) = prev {
                    if s.offset < start {
                        return bad(format!(
                            "displacements decrease ({} after {start})",
                            s.offset
                        ));
                    }
                    if s.offset < stop && !read_only {
                        return bad(format!("data overlaps at byte {}", s.offset));
                    }
                }
                prev = Some((s.offset, end.max(prev.map_or(end, |p| p.1))));
            }
        }
        Ok(())
    }

    /// Bytes of one etype in the file (its external32 size in external32).
    pub fn esize(&self) -> u64 {
        match self.datarep {
            Datarep::External32 => self.etype.external32_size(1).unwrap_or(self.etype.size()),
            _ => self.etype.size(),
        }
        .max(1) as u64
    }

    fn stream_contiguous(&self) -> bool {
        let f = &self.filetype;
        f.is_contiguous() && f.size() as isize == f.extent()
    }

    /// The file's byte ranges, as `(offset, len)`, holding stream bytes
    /// `pos .. pos + len` of the view, in stream order.
    pub fn runs(&self, pos: u64, len: u64) -> Result<Runs, Error> {
        if len == 0 {
            return Ok(Runs::Empty);
        }
        let f = &self.filetype;
        if self.stream_contiguous() {
            let at = self.disp + f.true_lb() as u64 + pos;
            return Ok(Runs::One(Some((at, len))));
        }
        let size = f.size() as u64;
        if size == 0 {
            return Err(file_err(
                ErrorClass::Io,
                "the view's filetype holds no data: nothing can be accessed through it",
            ));
        }
        let end = pos + len;
        let tiles = end.div_ceil(size);
        let too_big = |_| file_err(ErrorClass::Io, "access beyond the addressable view");
        let tiles = usize::try_from(tiles).map_err(too_big)?;
        let range =
            usize::try_from(pos).map_err(too_big)?..usize::try_from(end).map_err(too_big)?;
        Ok(Runs::Tiled {
            disp: self.disp,
            segs: f.segments_range(tiles, range)?,
        })
    }

    /// Etypes of the view that lie before byte `file_size` of the file
    /// (the end of the file, in the view's terms).
    pub fn etypes_before(&self, file_size: u64) -> Result<u64, Error> {
        let f = &self.filetype;
        let below = file_size.saturating_sub(self.disp + f.true_lb().max(0) as u64);
        if below == 0 {
            return Ok(0);
        }
        if self.stream_contiguous() {
            return Ok(below / self.esize());
        }
        let (size, extent) = (f.size() as u64, f.extent() as u64);
        if size == 0 {
            return Ok(0);
        }
        let rel = file_size - self.disp;
        let tiles = rel / extent;
        let mut bytes = tiles * size;
        let left = rel - tiles * extent;
        for s in f.segments(1)? {
            let (o, n) = (s.offset as u64, s.len as u64);
            if o >= left {
                break;
            }
            bytes += n.min(left - o);
        }
        Ok(bytes / self.esize())
    }

    /// `MPI_File_get_byte_offset`: where etype `offset` of the view lies in
    /// the file.
    pub fn byte_offset(&self, offset: u64) -> Result<u64, Error> {
        let pos = offset * self.esize();
        match self.runs(pos, 1)?.next() {
            Some((at, _)) => Ok(at),
            None => Ok(self.disp),
        }
    }
}

/// Iterator over `(file offset, length)` runs of a view's stream range.
#[derive(Debug)]
pub enum Runs {
    /// Nothing to access.
    Empty,
    /// A contiguous view: one run.
    One(Option<(u64, u64)>),
    /// A tiled filetype.
    Tiled {
        /// The view's displacement.
        disp: u64,
        /// The filetype's segments over the range.
        segs: Segments,
    },
}

impl Iterator for Runs {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        match self {
            Runs::Empty => None,
            Runs::One(r) => r.take(),
            Runs::Tiled { disp, segs } => {
                segs.next().map(|s| (*disp + s.offset as u64, s.len as u64))
            }
        }
    }
}
