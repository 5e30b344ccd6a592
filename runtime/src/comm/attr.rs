//! Attributes: values attached to a communicator under a [`Keyval`]
//! (`MPI_Comm_create_keyval`, `MPI_Comm_set_attr`, ...).
//!
//! The keyval table is process-wide. An entry holds how to copy a value
//! when its communicator is duplicated ([`CopyPolicy`]) and what to run
//! when a value is deleted (a [`DeleteFn`]). Callbacks are boxed closures,
//! so a C front end stores C function pointers by wrapping them with their
//! `extra_state` in a closure; C's `void *` attribute values are
//! [`AttrValue::Word`]s. Callbacks run without any lock held, so they may
//! call back into the library.
//!
//! Predefined keyval: [`Keyval::TAG_UB`], readable on every communicator,
//! never set nor deleted.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::{lock, Comm, CommId};
use crate::error::Error;
use crate::status::TAG_UB;

/// An attribute value: a machine word (what C programs store, `void *`)
/// or any shared Rust value.
///
/// ```
/// use oxmpi::AttrValue;
/// let c_style = AttrValue::Word(0xdead);
/// assert_eq!(c_style.word(), Some(0xdead));
/// let rusty = AttrValue::new(String::from("solver settings"));
/// assert_eq!(rusty.downcast_ref::<String>().map(|s| s.as_str()), Some("solver settings"));
/// assert_eq!(rusty.downcast_ref::<u32>(), None); // not a u32
/// assert_eq!(rusty.word(), None);
/// ```
#[derive(Clone)]
pub enum AttrValue {
    /// A pointer-sized word, copied as is by [`CopyPolicy::Dup`].
    Word(usize),
    /// A Rust value; [`CopyPolicy::Dup`] shares it between the communicators.
    Shared(Arc<dyn Any + Send + Sync>),
}

impl AttrValue {
    /// Wraps a Rust value.
    ///
    /// See the example on [`AttrValue`].
    pub fn new<T: Any + Send + Sync>(value: T) -> AttrValue {
        AttrValue::Shared(Arc::new(value))
    }

    /// The word, for a [`AttrValue::Word`].
    ///
    /// See the example on [`AttrValue`].
    pub fn word(&self) -> Option<usize> {
        match self {
            AttrValue::Word(w) => Some(*w),
            AttrValue::Shared(_) => None,
        }
    }

    /// The Rust value, if it is a `T`.
    ///
    /// See the example on [`AttrValue`].
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        match self {
            AttrValue::Word(_) => None,
            AttrValue::Shared(v) => v.downcast_ref(),
        }
    }
}

impl fmt::Debug for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Word(w) => write!(f, "Word({w:#x})"),
            AttrValue::Shared(_) => f.write_str("Shared(..)"),
        }
    }
}

/// A copy callback: gets the communicator being duplicated, the keyval and
/// the value; returns the new communicator's value, or `None` to leave the
/// attribute off it. An error makes the duplication fail.
///
/// ```no_run
/// use oxmpi::{AttrValue, CopyPolicy, Keyval};
/// # let universe = oxmpi::init()?; let world = universe.world();
/// // Each duplicate gets a counter one higher than its parent's.
/// let depth = Keyval::create(
///     CopyPolicy::Call(Box::new(|_parent: &oxmpi::Comm, _key: Keyval, v: &AttrValue| {
///         Ok(Some(AttrValue::new(v.downcast_ref::<u32>().copied().unwrap_or(0) + 1)))
///     })),
///     None,
/// );
/// world.set_attr(depth, AttrValue::new(0u32))?;
/// let child = world.dup()?;
/// let v = child.get_attr(depth)?.unwrap();
/// assert_eq!(v.downcast_ref::<u32>(), Some(&1));
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub type CopyFn =
    dyn Fn(&Comm, Keyval, &AttrValue) -> Result<Option<AttrValue>, Error> + Send + Sync;

/// A delete callback: runs when a value is deleted, replaced, or its
/// communicator freed; gets the communicator's id, the keyval and the value.
/// An error is returned by the call that deleted it.
///
/// ```no_run
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// use oxmpi::{AttrValue, CopyPolicy, Keyval};
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let deleted = Arc::new(AtomicUsize::new(0));
/// let seen = deleted.clone();
/// let key = Keyval::create(
///     CopyPolicy::Never,
///     Some(Box::new(move |_comm: oxmpi::CommId, _key: Keyval, _value: &AttrValue| {
///         seen.fetch_add(1, Ordering::Relaxed);
///         Ok(())
///     })),
/// );
/// let dup = world.dup()?;
/// dup.set_attr(key, AttrValue::Word(1))?;
/// dup.free()?; // runs the delete callback
/// assert_eq!(deleted.load(Ordering::Relaxed), 1);
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub type DeleteFn = dyn Fn(CommId, Keyval, &AttrValue) -> Result<(), Error> + Send + Sync;

/// What duplicating a communicator does with an attribute.
///
/// ```
/// use oxmpi::{AttrValue, CopyPolicy, Keyval};
/// let local_only = Keyval::create(CopyPolicy::Never, None);
/// let shared = Keyval::create(CopyPolicy::Dup, None);
/// let custom = Keyval::create(
///     CopyPolicy::Call(Box::new(|_: &oxmpi::Comm, _: Keyval, v: &AttrValue| {
///         Ok(Some(AttrValue::Word(v.word().unwrap_or(0) * 2)))
///     })),
///     None,
/// );
/// for k in [local_only, shared, custom] {
///     k.free()?;
/// }
/// # Ok::<(), oxmpi::Error>(())
/// ```
pub enum CopyPolicy {
    /// Leave it off the new communicator (`MPI_COMM_NULL_COPY_FN`).
    Never,
    /// Give the new communicator the same value (`MPI_COMM_DUP_FN`).
    Dup,
    /// Ask a callback.
    Call(Box<CopyFn>),
}

/// An attribute key (`MPI_Comm_create_keyval`).
///
/// ```no_run
/// use oxmpi::comm::{AttrValue, CopyPolicy, Keyval};
/// # let universe = oxmpi::init()?; let world = universe.world();
/// let key = Keyval::create(CopyPolicy::Dup, None);
/// world.set_attr(key, AttrValue::new(42u32))?;
/// let dup = world.dup()?;
/// let v = dup.get_attr(key)?.expect("copied by dup");
/// assert_eq!(v.downcast_ref::<u32>(), Some(&42));
/// # Ok::<(), oxmpi::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Keyval(i32);

pub(crate) struct Entry {
    copy: CopyPolicy,
    delete: Option<Box<DeleteFn>>,
}

fn table() -> &'static Mutex<HashMap<i32, Arc<Entry>>> {
    static TABLE: OnceLock<Mutex<HashMap<i32, Arc<Entry>>>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

/// Next keyval number; numbers are never reused.
static NEXT: AtomicI32 = AtomicI32::new(1);

impl Keyval {
    /// `MPI_TAG_UB`: its value is [`crate::TAG_UB`] as an [`AttrValue::Word`].
    ///
    /// ```no_run
    /// use oxmpi::Keyval;
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let ub = world.get_attr(Keyval::TAG_UB)?.and_then(|v| v.word());
    /// assert_eq!(ub, Some(oxmpi::TAG_UB as usize));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub const TAG_UB: Keyval = Keyval(0);

    /// A new keyval with its copy and delete behaviour.
    ///
    /// ```
    /// use oxmpi::{CopyPolicy, Keyval};
    /// let a = Keyval::create(CopyPolicy::Dup, None);
    /// let b = Keyval::create(CopyPolicy::Dup, None);
    /// assert_ne!(a, b); // numbers are never reused
    /// a.free()?;
    /// b.free()?;
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn create(copy: CopyPolicy, delete: Option<Box<DeleteFn>>) -> Keyval {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        lock(table()).insert(id, Arc::new(Entry { copy, delete }));
        Keyval(id)
    }

    /// Frees the keyval (`MPI_Comm_free_keyval`): it can no longer be set;
    /// values still attached stay readable, deletable and copied by dups
    /// (with their callbacks) until they are deleted.
    ///
    /// ```
    /// use oxmpi::{CopyPolicy, Keyval};
    /// let k = Keyval::create(CopyPolicy::Never, None);
    /// k.free()?;
    /// assert!(k.free().is_err()); // not live any more
    /// assert!(Keyval::TAG_UB.free().is_err()); // predefined
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn free(self) -> Result<(), Error> {
        if self.is_predefined() {
            return Err(bad(self, "is predefined and cannot be freed"));
        }
        match lock(table()).remove(&self.0) {
            Some(_) => Ok(()),
            None => Err(bad(self, "is not a live keyval")),
        }
    }

    /// The keyval's number (for the C front end's handles).
    ///
    /// ```
    /// use oxmpi::{CopyPolicy, Keyval};
    /// let k = Keyval::create(CopyPolicy::Never, None);
    /// let handle: i32 = k.raw(); // what a C front end hands out
    /// assert_eq!(Keyval::from_raw(handle), k);
    /// assert_eq!(Keyval::TAG_UB.raw(), 0);
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn raw(self) -> i32 {
        self.0
    }

    /// The keyval with number `raw` (not checked until used).
    ///
    /// See the example on [`Keyval::raw`].
    pub fn from_raw(raw: i32) -> Keyval {
        Keyval(raw)
    }

    fn is_predefined(self) -> bool {
        self == Keyval::TAG_UB
    }

    fn entry(self) -> Result<Arc<Entry>, Error> {
        if self.is_predefined() {
            return Err(bad(
                self,
                "is predefined: its value cannot be set or deleted",
            ));
        }
        lock(table())
            .get(&self.0)
            .cloned()
            .ok_or_else(|| bad(self, "is not a live keyval (never created, or freed)"))
    }
}

fn bad(k: Keyval, why: &str) -> Error {
    Error::InvalidArgument {
        arg: "keyval",
        reason: format!("keyval {} {why}", k.0),
    }
}

/// One attached value, with its keyval's callbacks.
pub(crate) type Attr = (Keyval, Arc<Entry>, AttrValue);

/// The attributes of one communicator, in the order they were set.
#[derive(Default)]
pub(crate) struct Attrs {
    list: Vec<Attr>,
}

impl Attrs {
    /// Deletes every value; runs every delete callback and returns the first error.
    pub(crate) fn delete_all(self, comm: CommId) -> Result<(), Error> {
        let mut result = Ok(());
        for (k, entry, value) in self.list.into_iter().rev() {
            if let Some(del) = &entry.delete {
                let r = del(comm, k, &value);
                if result.is_ok() {
                    result = r;
                }
            }
        }
        result
    }
}

impl Comm {
    /// Attaches `value` under `keyval` (`MPI_Comm_set_attr`), replacing
    /// (and deleting, through the delete callback) any value there.
    ///
    /// ```no_run
    /// use oxmpi::{AttrValue, CopyPolicy, Keyval};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let key = Keyval::create(CopyPolicy::Never, None);
    /// world.set_attr(key, AttrValue::Word(1))?;
    /// world.set_attr(key, AttrValue::Word(2))?; // replaces the first value
    /// assert_eq!(world.get_attr(key)?.and_then(|v| v.word()), Some(2));
    /// assert!(world.set_attr(Keyval::TAG_UB, AttrValue::Word(0)).is_err()); // read-only
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn set_attr(&self, keyval: Keyval, value: AttrValue) -> Result<(), Error> {
        self.check_live()?;
        let entry = keyval.entry()?;
        let old = self.take_attr(keyval);
        if let Some((_, old_entry, old_value)) = &old {
            if let Some(del) = &old_entry.delete {
                if let Err(e) = del(self.id(), keyval, old_value) {
                    // The old value stays, as if the call never happened.
                    self.put_attr(old.expect("checked"));
                    return Err(e);
                }
            }
        }
        self.put_attr((keyval, entry, value));
        Ok(())
    }

    /// The value under `keyval` (`MPI_Comm_get_attr`), `None` when unset.
    ///
    /// ```no_run
    /// use oxmpi::{AttrValue, CopyPolicy, Keyval};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let key = Keyval::create(CopyPolicy::Never, None);
    /// assert!(world.get_attr(key)?.is_none()); // unset
    /// world.set_attr(key, AttrValue::new(vec![1.0f64, 2.0]))?;
    /// let v = world.get_attr(key)?.unwrap();
    /// assert_eq!(v.downcast_ref::<Vec<f64>>().map(Vec::len), Some(2));
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn get_attr(&self, keyval: Keyval) -> Result<Option<AttrValue>, Error> {
        if keyval == Keyval::TAG_UB {
            return Ok(Some(AttrValue::Word(TAG_UB as usize)));
        }
        // A keyval freed while attached stays usable for its values.
        let found = lock(&self.inner.attrs)
            .list
            .iter()
            .find(|(k, ..)| *k == keyval)
            .map(|(.., v)| v.clone());
        if found.is_none() {
            keyval.entry()?;
        }
        Ok(found)
    }

    /// Removes the value under `keyval` (`MPI_Comm_delete_attr`), running
    /// its delete callback; nothing to do when unset. If the callback fails
    /// the value stays and its error is returned.
    ///
    /// ```no_run
    /// use oxmpi::{AttrValue, CopyPolicy, Keyval};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let key = Keyval::create(CopyPolicy::Never, None);
    /// world.set_attr(key, AttrValue::Word(7))?;
    /// world.delete_attr(key)?;
    /// assert!(world.get_attr(key)?.is_none());
    /// world.delete_attr(key)?; // deleting an unset value is fine
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn delete_attr(&self, keyval: Keyval) -> Result<(), Error> {
        self.check_live()?;
        let Some(old) = self.take_attr(keyval) else {
            keyval.entry()?;
            return Ok(());
        };
        if let Some(del) = &old.1.delete {
            if let Err(e) = del(self.id(), keyval, &old.2) {
                self.put_attr(old);
                return Err(e);
            }
        }
        Ok(())
    }

    fn take_attr(&self, keyval: Keyval) -> Option<(Keyval, Arc<Entry>, AttrValue)> {
        let mut attrs = lock(&self.inner.attrs);
        let i = attrs.list.iter().position(|(k, ..)| *k == keyval)?;
        Some(attrs.list.remove(i))
    }

    fn put_attr(&self, a: (Keyval, Arc<Entry>, AttrValue)) {
        lock(&self.inner.attrs).list.push(a);
    }

    /// Deletes every attribute, running the delete callbacks (done on free,
    /// and on the predefined communicators at finalize). A front end whose
    /// callbacks call back into MPI runs this for `MPI_COMM_SELF` and
    /// `MPI_COMM_WORLD` before it starts tearing down (MPI's finalize hook).
    ///
    /// ```no_run
    /// use oxmpi::{AttrValue, CopyPolicy, Keyval};
    /// # let universe = oxmpi::init()?; let world = universe.world();
    /// let key = Keyval::create(CopyPolicy::Never, None);
    /// world.set_attr(key, AttrValue::Word(7))?;
    /// world.delete_all_attrs()?; // what finalize does first
    /// assert!(world.get_attr(key)?.is_none());
    /// # Ok::<(), oxmpi::Error>(())
    /// ```
    pub fn delete_all_attrs(&self) -> Result<(), Error> {
        let attrs = std::mem::take(&mut *lock(&self.inner.attrs));
        attrs.delete_all(self.id())
    }

    /// Copies this communicator's attributes onto `new` (a dup of it) as
    /// their copy policies say.
    pub(crate) fn copy_attrs_to(&self, new: &Comm) -> Result<(), Error> {
        for a in self.copied_attrs()? {
            new.put_attr(a);
        }
        Ok(())
    }

    /// The attributes a dup of this communicator gets, as their copy
    /// policies say (copy callbacks run now). On a callback's error the
    /// values already copied are deleted (their delete callbacks run).
    pub(crate) fn copied_attrs(&self) -> Result<Vec<Attr>, Error> {
        let snapshot: Vec<_> = lock(&self.inner.attrs)
            .list
            .iter()
            .map(|(k, e, v)| (*k, e.clone(), v.clone()))
            .collect();
        let mut out = Attrs::default();
        for (k, entry, value) in snapshot {
            let copied = match &entry.copy {
                CopyPolicy::Never => None,
                CopyPolicy::Dup => Some(value),
                CopyPolicy::Call(f) => match f(self, k, &value) {
                    Ok(v) => v,
                    Err(e) => {
                        let _ = out.delete_all(self.id());
                        return Err(e);
                    }
                },
            };
            if let Some(v) = copied {
                out.list.push((k, entry, v));
            }
        }
        Ok(out.list)
    }

    /// Attaches attributes made by [`Comm::copied_attrs`].
    pub(crate) fn put_attrs(&self, attrs: Vec<Attr>) {
        lock(&self.inner.attrs).list.extend(attrs);
    }
}
