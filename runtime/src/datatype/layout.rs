//! How a type is made from its children: size, bounds, alignment, the
//! single-run shortcut and the signature (computed once, at construction);
//! and the flattened `(offset, len)` form (computed at commit).

use super::signature::SigBuilder;
use super::{BasicType, Datatype, Inner, Signature};
use crate::error::Error;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

/// How a type was constructed; children are held by `Datatype` (shared).
pub(super) enum Kind {
    /// A predefined type.
    Basic(BasicType),
    /// `count` copies of `child`, back to back.
    Contiguous { count: usize, child: Datatype },
    /// `count` blocks of `blocklen` children, `stride` bytes apart.
    Vector {
        count: usize,
        blocklen: usize,
        stride: isize,
        child: Datatype,
        name: &'static str,
    },
    /// Blocks of `(displacement in bytes, blocklength)` children.
    Indexed {
        blocks: Box<[(isize, usize)]>,
        child: Datatype,
        name: &'static str,
    },
    /// Blocks of `(displacement, blocklength, type)`.
    Struct {
        blocks: Box<[(isize, usize, Datatype)]>,
    },
    /// `child` with explicit bounds.
    Resized(Datatype),
    /// A copy of `child` (`MPI_Type_dup`).
    Dup(Datatype),
}

/// One closure call per block: (byte displacement, copies, child type).
type BlockFn<'a> = dyn FnMut(isize, usize, &Datatype) -> Result<(), Error> + 'a;

impl Kind {
    /// The MPI name or combiner, for messages.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Kind::Basic(b) => b.name(),
            Kind::Contiguous { .. } => "contiguous",
            Kind::Vector { name, .. } | Kind::Indexed { name, .. } => name,
            Kind::Struct { .. } => "struct",
            Kind::Resized(_) => "resized",
            Kind::Dup(_) => "dup",
        }
    }

    /// Walks the blocks in type-map order. Each block is `k` copies of the
    /// child, one child extent apart, starting at the displacement.
    fn for_each_block(&self, f: &mut BlockFn<'_>) -> Result<(), Error> {
        match self {
            Kind::Basic(_) => Ok(()),
            Kind::Contiguous { count, child } => f(0, *count, child),
            Kind::Vector {
                count,
                blocklen,
                stride,
                child,
                ..
            } => (0..*count).try_for_each(|i| f(i as isize * stride, *blocklen, child)),
            Kind::Indexed { blocks, child, .. } => {
                blocks.iter().try_for_each(|&(d, k)| f(d, k, child))
            }
            Kind::Struct { blocks } => blocks.iter().try_for_each(|(d, k, c)| f(*d, *k, c)),
            Kind::Resized(c) | Kind::Dup(c) => f(0, 1, c),
        }
    }
}

/// Lower / upper bounds, true bounds, and whether lb / ub are explicit
/// (set by `resized`, and inherited by types built from it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Bounds {
    pub lb: isize,
    pub ub: isize,
    pub true_lb: isize,
    pub true_ub: isize,
    pub sticky_lb: bool,
    pub sticky_ub: bool,
}

fn inner(kind: Kind, size: usize, bounds: Bounds, align: usize) -> Inner {
    Inner {
        kind,
        size,
        bounds,
        align,
        run: None,
        signature: Signature::default(),
        committed: AtomicBool::new(false),
        flat: OnceLock::new(),
    }
}

/// The predefined type `b`.
pub(super) fn basic(b: BasicType) -> Datatype {
    let bounds = Bounds {
        ub: b.extent() as isize,
        true_ub: b.true_extent() as isize,
        ..Bounds::default()
    };
    let mut t = inner(Kind::Basic(b), b.size(), bounds, b.align());
    let mut sig = SigBuilder::default();
    match b.pair() {
        Some((x, off, y)) => {
            sig.push(x, 1);
            sig.push(y, 1);
            t.run = (off == x.size()).then_some((0, b.size()));
        }
        None => {
            sig.push(b, 1);
            t.run = Some((0, b.size()));
        }
    }
    t.signature = sig.finish();
    t.committed = AtomicBool::new(true);
    Datatype(Arc::new(t))
}

/// `child` with bounds `lb .. lb + extent`, marked explicit.
pub(super) fn resized(child: &Datatype, lb: isize, ub: isize) -> Datatype {
    let c = &child.0;
    let bounds = Bounds {
        lb,
        ub,
        sticky_lb: true,
        sticky_ub: true,
        ..c.bounds
    };
    let mut t = inner(Kind::Resized(child.clone()), c.size, bounds, c.align);
    t.run = c.run;
    t.signature = c.signature.clone();
    Datatype(Arc::new(t))
}

/// A new type object with the same type map and committed state.
pub(super) fn dup(child: &Datatype) -> Datatype {
    let c = &child.0;
    let mut t = inner(Kind::Dup(child.clone()), c.size, c.bounds, c.align);
    t.run = c.run;
    t.signature = c.signature.clone();
    t.committed = AtomicBool::new(child.is_committed());
    Datatype(Arc::new(t))
}

/// Builds a derived type from its blocks (a vector's in O(1), whatever
/// its count).
pub(super) fn compose(kind: Kind) -> Result<Datatype, Error> {
    let mut acc = Acc::default();
    match &kind {
        Kind::Vector {
            count,
            blocklen,
            stride,
            child,
            ..
        } => acc.add_strided(0, *count, *stride, *blocklen, child)?,
        _ => kind.for_each_block(&mut |d, k, c| acc.add(d, k, c))?,
    }
    acc.finish(kind)
}

/// Per-element data layout seen so far, as one run or not.
#[derive(Default)]
enum Run {
    #[default]
    Empty,
    One(i128, i128),
    Many,
}

/// Accumulates blocks; arithmetic in i128 so that nothing wraps before the
/// final range check.
#[derive(Default)]
struct Acc {
    any: bool,
    size: i128,
    lb: Option<i128>,
    ub: Option<i128>,
    sticky_lb: Option<i128>,
    sticky_ub: Option<i128>,
    true_lb: Option<i128>,
    true_ub: Option<i128>,
    align: usize,
    run: Run,
    sig: SigBuilder,
}

fn lo(a: Option<i128>, b: i128) -> Option<i128> {
    Some(a.map_or(b, |a| a.min(b)))
}

fn hi(a: Option<i128>, b: i128) -> Option<i128> {
    Some(a.map_or(b, |a| a.max(b)))
}

fn fit(v: i128) -> Result<isize, Error> {
    isize::try_from(v).map_err(|_| Error::InvalidArgument {
        arg: "array_of_displacements",
        reason: format!("the type reaches byte {v}, beyond the address space"),
    })
}

impl Acc {
    fn add(&mut self, disp: isize, k: usize, child: &Datatype) -> Result<(), Error> {
        self.add_strided(disp, 1, 0, k, child)
    }

    /// Adds `count` blocks of `k` copies of `child`, block `i` at byte
    /// `disp + i * stride`: the first and the last block bound them, so
    /// this is O(1) in `count`.
    fn add_strided(
        &mut self,
        disp: isize,
        count: usize,
        stride: isize,
        k: usize,
        child: &Datatype,
    ) -> Result<(), Error> {
        if k == 0 || count == 0 {
            return Ok(());
        }
        let c = &child.0;
        let b = c.bounds;
        self.any = true;
        self.size += count as i128 * k as i128 * c.size as i128;
        if self.size > isize::MAX as i128 {
            return Err(Error::InvalidArgument {
                arg: "count",
                reason: format!("the type would hold {} bytes, too many", self.size),
            });
        }
        let ext = b.ub as i128 - b.lb as i128;
        let span = (k as i128 - 1) * ext;
        let blocks = (count as i128 - 1) * stride as i128;
        let below = span.min(0) + blocks.min(0);
        let above = span.max(0) + blocks.max(0);
        let d = disp as i128;
        let (blk_lb, blk_ub) = (d + b.lb as i128 + below, d + b.ub as i128 + above);
        self.lb = lo(self.lb, blk_lb);
        self.ub = hi(self.ub, blk_ub);
        if b.sticky_lb {
            self.sticky_lb = lo(self.sticky_lb, blk_lb);
        }
        if b.sticky_ub {
            self.sticky_ub = hi(self.sticky_ub, blk_ub);
        }
        self.align = self.align.max(c.align);
        if c.size == 0 {
            return Ok(());
        }
        self.true_lb = lo(self.true_lb, d + b.true_lb as i128 + below);
        self.true_ub = hi(self.true_ub, d + b.true_ub as i128 + above);
        let block = match c.run {
            Some((s, l)) if k == 1 || l as i128 == ext => {
                Some((d + s as i128, k as i128 * l as i128))
            }
            _ => None,
        };
        // Blocks one after another in memory make one run.
        let blocks = match block {
            Some(one) if count == 1 => Some(one),
            Some((s, l)) if stride as i128 == l => Some((s, count as i128 * l)),
            _ => None,
        };
        self.run = match (std::mem::take(&mut self.run), blocks) {
            (Run::Empty, Some((s, l))) => Run::One(s, l),
            (Run::One(s, l), Some((s2, l2))) if s + l == s2 => Run::One(s, l + l2),
            _ => Run::Many,
        };
        self.sig
            .extend_repeated(&c.signature, k.saturating_mul(count));
        Ok(())
    }

    fn finish(self, kind: Kind) -> Result<Datatype, Error> {
        let sticky = self.sticky_lb.is_some() || self.sticky_ub.is_some();
        if !self.any || (self.size == 0 && !sticky) {
            // MPICH's zero-length type: all bounds 0.
            return Ok(Datatype(Arc::new(inner(kind, 0, Bounds::default(), 1))));
        }
        let lb = self.sticky_lb.or(self.lb).unwrap_or(0);
        let mut ub = self.sticky_ub.or(self.ub).unwrap_or(0);
        if matches!(kind, Kind::Struct { .. }) && !sticky && self.align > 1 {
            let eps = (ub - lb).rem_euclid(self.align as i128);
            if eps != 0 {
                ub += self.align as i128 - eps;
            }
        }
        fit(ub - lb)?;
        let bounds = Bounds {
            lb: fit(lb)?,
            ub: fit(ub)?,
            true_lb: fit(self.true_lb.unwrap_or(0))?,
            true_ub: fit(self.true_ub.unwrap_or(0))?,
            sticky_lb: self.sticky_lb.is_some(),
            sticky_ub: self.sticky_ub.is_some(),
        };
        let mut t = inner(kind, self.size as usize, bounds, self.align.max(1));
        if let Run::One(s, l) = self.run {
            t.run = Some((fit(s)?, l as usize));
        }
        t.signature = self.sig.finish();
        Ok(Datatype(Arc::new(t)))
    }
}

/// Most nested repetitions a flattened form keeps; deeper ones are
/// written out into the pattern.
pub(super) const MAX_DIMS: usize = 6;

/// One element's data: a pattern of `(offset, len)` runs in type-map
/// order (adjacent runs merged, each with its position in the packed
/// stream), repeated over `dims`: `(count, byte step)` from the outermost
/// repetition to the innermost, unit `(i1, .., in)` at `sum(ik * stepk)`.
/// Vectors and contiguous types become dimensions, so a billion-element
/// vector is one dimension and one run, not a billion runs.
#[derive(Debug, Default)]
pub(super) struct Flat {
    pub dims: Box<[(usize, isize)]>,
    pub segs: Vec<FlatSeg>,
    /// Packed bytes of one repetition of the pattern.
    pub unit: usize,
}

impl Flat {
    /// Repetitions of the pattern in one element.
    pub(super) fn units(&self) -> usize {
        self.dims.iter().map(|d| d.0).product()
    }
}

/// A run of the pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FlatSeg {
    /// Byte offset from the repetition's start.
    pub disp: isize,
    /// Length in bytes (> 0).
    pub len: usize,
    /// Packed bytes before this run within the repetition.
    pub packed: usize,
}

/// A flattened form being built: repetitions and the runs of one.
#[derive(Default)]
struct Shape {
    dims: Vec<(usize, isize)>,
    runs: Vec<(isize, usize)>,
}

/// Builds the flattened form of `t`.
pub(super) fn flatten(t: &Datatype) -> Flat {
    let shape = shape(t);
    let mut packed = 0;
    let segs = shape
        .runs
        .into_iter()
        .map(|(disp, len)| {
            let s = FlatSeg { disp, len, packed };
            packed += len;
            s
        })
        .collect();
    Flat {
        dims: shape.dims.into(),
        segs,
        unit: packed,
    }
}

fn shape(t: &Datatype) -> Shape {
    let i = &t.0;
    if i.size == 0 {
        return Shape::default();
    }
    if let Some((s, l)) = i.run {
        return Shape {
            dims: Vec::new(),
            runs: vec![(s, l)],
        };
    }
    match &i.kind {
        Kind::Resized(c) | Kind::Dup(c) => shape(c),
        Kind::Contiguous { count, child } => repeated(&[(*count, child.extent())], child),
        Kind::Vector {
            count,
            blocklen,
            stride,
            child,
            ..
        } => repeated(&[(*count, *stride), (*blocklen, child.extent())], child),
        _ => {
            let mut runs = Vec::new();
            flatten_into(t, 0, &mut runs);
            Shape {
                dims: Vec::new(),
                runs,
            }
        }
    }
}

/// The shape of `child` repeated over `outer` (outermost first).
fn repeated(outer: &[(usize, isize)], child: &Datatype) -> Shape {
    let mut c = shape(child);
    let mut dims: Vec<_> = outer.iter().copied().filter(|d| d.0 != 1).collect();
    // A single run repeated right after itself is a longer run.
    while let (true, [(_, l)], Some(&(n, step))) = (c.dims.is_empty(), &mut c.runs[..], dims.last())
    {
        if step != *l as isize {
            break;
        }
        *l *= n;
        dims.pop();
    }
    dims.append(&mut c.dims);
    while dims.len() > MAX_DIMS {
        let (n, step) = dims.pop().expect("more than MAX_DIMS");
        let once = std::mem::take(&mut c.runs);
        for j in 0..n {
            for &(d, l) in &once {
                push(&mut c.runs, d + j as isize * step, l);
            }
        }
    }
    Shape { dims, runs: c.runs }
}

fn push(out: &mut Vec<(isize, usize)>, disp: isize, len: usize) {
    if len == 0 {
        return;
    }
    if let Some(last) = out.last_mut() {
        if last.0 + last.1 as isize == disp {
            last.1 += len;
            return;
        }
    }
    out.push((disp, len));
}

/// Appends the written-out runs of `t` at `base` (indexed and struct types,
/// and the reference the tests compare the repetitions with).
pub(super) fn flatten_into(t: &Datatype, base: isize, out: &mut Vec<(isize, usize)>) {
    let i = &t.0;
    if i.size == 0 {
        return;
    }
    if let Some((s, l)) = i.run {
        return push(out, base + s, l);
    }
    if let Kind::Basic(b) = i.kind {
        if let Some((x, off, y)) = b.pair() {
            push(out, base, x.size());
            push(out, base + off as isize, y.size());
        }
        return;
    }
    // Blocks cannot fail here: the closure never returns an error.
    let _ = i.kind.for_each_block(&mut |d, k, c| {
        let ext = c.extent();
        match c.0.run {
            _ if c.0.size == 0 => {}
            Some((s, l)) if k == 1 || l as isize == ext => push(out, base + d + s, k * l),
            _ => (0..k).for_each(|j| flatten_into(c, base + d + j as isize * ext, out)),
        }
        Ok(())
    });
}
