//! Derived datatypes as the table behind `MPI_Datatype` handles keeps them:
//! each with its layout, name and how it was made.

use std::collections::BTreeMap;
use std::ffi::c_int;
use std::sync::Arc;

use oxmpi::datatype::Datatype;

use super::table::Table;
use crate::handles::MPI_Datatype;

/// `MPI_COMBINER_*` values (MPICH's).
pub mod combiner {
    use std::ffi::c_int;
    /// A predefined type.
    pub const NAMED: c_int = 1;
    /// `MPI_Type_dup`.
    pub const DUP: c_int = 2;
    /// `MPI_Type_contiguous`.
    pub const CONTIGUOUS: c_int = 3;
    /// `MPI_Type_vector`.
    pub const VECTOR: c_int = 4;
    /// `MPI_Type_create_hvector`.
    pub const HVECTOR: c_int = 6;
    /// `MPI_Type_indexed`.
    pub const INDEXED: c_int = 7;
    /// `MPI_Type_create_hindexed`.
    pub const HINDEXED: c_int = 9;
    /// `MPI_Type_create_indexed_block`.
    pub const INDEXED_BLOCK: c_int = 10;
    /// `MPI_Type_create_struct`.
    pub const STRUCT: c_int = 12;
    /// `MPI_Type_create_subarray`.
    pub const SUBARRAY: c_int = 13;
    /// `MPI_Type_create_darray`.
    pub const DARRAY: c_int = 14;
    /// `MPI_Type_create_f90_real`.
    pub const F90_REAL: c_int = 15;
    /// `MPI_Type_create_f90_complex`.
    pub const F90_COMPLEX: c_int = 16;
    /// `MPI_Type_create_f90_integer`.
    pub const F90_INTEGER: c_int = 17;
    /// `MPI_Type_create_resized`.
    pub const RESIZED: c_int = 18;
    /// `MPI_Type_create_hindexed_block`.
    pub const HINDEXED_BLOCK: c_int = 19;
}

/// How a derived type was made, for `MPI_Type_get_envelope` / `_contents`.
pub struct Contents {
    /// `MPI_COMBINER_*`.
    pub combiner: c_int,
    /// The integer arguments, in the standard's order.
    pub ints: Vec<i64>,
    /// The address arguments.
    pub addrs: Vec<i64>,
    /// The count arguments of a large-count (`_c`) constructor, which
    /// `MPI_Type_get_contents_c` reports apart (MPI 4.0, section 5.1.13).
    pub large: Vec<i64>,
    /// The datatype arguments.
    pub types: Vec<Child>,
}

impl Contents {
    /// The record a large-count (`_c`) constructor keeps: its `MPI_Count`
    /// arguments move from `ints` and `addrs` (the classic form's order)
    /// to `large`, in the order MPI 4.0's table of combiners gives.
    pub fn into_large(mut self) -> Contents {
        use combiner::*;
        match self.combiner {
            CONTIGUOUS | VECTOR | INDEXED | INDEXED_BLOCK => {
                self.large = std::mem::take(&mut self.ints);
            }
            HVECTOR | HINDEXED | HINDEXED_BLOCK | STRUCT => {
                let mut large = std::mem::take(&mut self.ints);
                large.append(&mut self.addrs);
                self.large = large;
            }
            RESIZED => self.large = std::mem::take(&mut self.addrs),
            SUBARRAY if !self.ints.is_empty() => {
                // ndims, sizes, subsizes, starts, order.
                let n = self.ints.len() - 2;
                self.large = self.ints.drain(1..1 + n).collect();
            }
            DARRAY if self.ints.len() >= 4 => {
                // size, rank, ndims, gsizes, distribs, dargs, psizes, order.
                let n = (self.ints.len() - 4) / 4;
                self.large = self.ints.drain(3..3 + n).collect();
            }
            _ => {}
        }
        self
    }
}

/// A datatype argument of a constructor, kept alive with its type.
#[derive(Clone)]
pub enum Child {
    /// A predefined type: its handle.
    Named(MPI_Datatype),
    /// A derived type (it may have been freed since; this keeps it).
    Derived(TypeEntry),
}

/// A derived datatype.
#[derive(Clone)]
pub struct TypeEntry {
    /// The layout.
    pub dt: Datatype,
    /// `MPI_Type_set_name`.
    pub name: String,
    /// How it was made.
    pub contents: Arc<Contents>,
}

impl TypeEntry {
    /// Whether this is a type of `MPI_Type_create_f90_*`: predefined in the
    /// standard's sense (never freed, given back as itself by
    /// `MPI_Type_get_contents`), though it lives in the table.
    pub fn is_f90(&self) -> bool {
        matches!(
            self.contents.combiner,
            combiner::F90_REAL | combiner::F90_COMPLEX | combiner::F90_INTEGER
        )
    }
}

/// The derived datatypes, and names given to predefined ones.
pub struct TypeTable {
    /// Derived types by slot ([`crate::handles::derived_type_handle`]).
    pub entries: Table<TypeEntry>,
    /// `MPI_Type_set_name` on predefined types.
    pub names: BTreeMap<MPI_Datatype, String>,
    /// The types `MPI_Type_create_f90_*` gave out, by (combiner, p, r):
    /// the same arguments give the same handle.
    pub f90: BTreeMap<(c_int, c_int, c_int), MPI_Datatype>,
}

impl TypeTable {
    /// An empty table.
    pub const fn new() -> TypeTable {
        TypeTable {
            entries: Table::new(),
            names: BTreeMap::new(),
            f90: BTreeMap::new(),
        }
    }
}

impl Default for TypeTable {
    fn default() -> Self {
        TypeTable::new()
    }
}
