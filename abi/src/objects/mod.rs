//! The objects behind handles, as data: what the tables of
//! [`crate::state`] hold. Below the state (nothing here takes its lock) and
//! above [`crate::handles`]; the calls that make and use these objects are
//! in [`crate::api`] and [`crate::requests`].

pub mod datatype;
pub mod detached;
pub mod generalized;
pub mod info;
pub mod launch;
pub mod pair;
pub mod request;
pub mod stage;
pub mod table;
