//! Matching of incoming messages to posted receives, following the MPI
//! standard (MPI-4.1 §3.5 "Semantics of Point-to-Point Communication",
//! §3.8 "Probe and Cancel").
//!
//! [`Matcher`] is a pure data structure: it performs no I/O and knows nothing
//! about buffers, requests or transports. A posted receive is an opaque
//! handle `P` (say, a request id) and an unexpected message is an opaque
//! handle `U` (say, where its eager bytes or its rendezvous descriptor live).
//!
//! # Rules
//!
//! - A message matches a receive when the contexts are equal, the receive's
//!   source is the message's source or [`SourceSel::Any`]
//!   (`MPI_ANY_SOURCE`), and its tag is the message's tag or
//!   [`TagSel::Any`] (`MPI_ANY_TAG`). Wildcards exist only on the receive
//!   side.
//! - [`TagSel::Any`] matches every tag, negative ones included. MPI user tags
//!   are `>= 0` (a send with a negative tag is rejected before it gets here)
//!   and internal traffic such as collectives runs on its own context ids, so
//!   no tag range is reserved at this level.
//! - `MPI_PROC_NULL` never reaches the matcher: a receive from it completes
//!   at once, above this layer.
//! - Non-overtaking, message side: among unexpected messages, a receive (or
//!   probe) takes the earliest-arrived one it matches. Messages from one
//!   source on one context therefore match in the order they were sent.
//! - Non-overtaking, receive side: an arriving message goes to the
//!   earliest-posted receive that matches it, whether that receive names the
//!   source or uses `MPI_ANY_SOURCE`.
//!
//! # Layout and complexity
//!
//! Every posted receive and every unexpected message gets a sequence number
//! from one counter, which orders candidates taken from different queues.
//! Per context the matcher keeps:
//!
//! - posted receives naming a source: one FIFO per source, in a vector
//!   indexed by the source's rank (no hashing when a receive is posted or
//!   a message arrives);
//! - posted `MPI_ANY_SOURCE` receives: one FIFO;
//! - unexpected messages: one FIFO per source (only sources with at least
//!   one message are kept, so wildcard scans skip quiet peers).
//!
//! A context's queues are found through a map, except for the context
//! looked up last, which is remembered: a stream of messages on one
//! communicator posts and matches without hashing.
//!
//! With `k` the number of entries skipped because their tag does not match
//! (zero when tags are consumed in order or `MPI_ANY_TAG` is used) and `S`
//! the number of sources with unexpected messages on the context:
//!
//! | operation                        | cost          |
//! |----------------------------------|---------------|
//! | [`Matcher::arrive`]              | O(1 + k)      |
//! | [`Matcher::post`], named source  | O(1 + k)      |
//! | [`Matcher::post`], any source    | O(S + k)      |
//! | [`Matcher::probe`], [`Matcher::take`] | as `post` |
//! | [`Matcher::cancel_posted`], [`Matcher::unexpected_mut`] | O(n) scan |
//! | [`Matcher::purge_context`]       | O(n log n) on that context |
//!
//! plus, when an entry is removed from the middle of a FIFO, the shift of
//! the shorter side (`VecDeque::remove`).
//!
//! A receive posted while no other receive is posted sits in a slot of
//! its own instead of the queues (a blocking receive, the common case):
//! an arrival then costs one pattern comparison, no table lookup. The
//! slot is moved into the queues as soon as a second receive is posted.
//!
//! Memory: a context's queues live until [`Matcher::purge_context`]; empty
//! posted FIFOs are kept (one per rank up to the largest source named), empty unexpected FIFOs are
//! dropped, so an unexpected message costs at most one small allocation,
//! next to the buffer it needs anyway.

use std::collections::VecDeque;

use crate::fast_hash::FastMap;
use std::ops::Deref;

/// What a message carries for matching.
///
/// See the example on [`Pattern`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Envelope {
    /// Context id of the communicator the message was sent on.
    pub context: u32,
    /// The sender's rank in that communicator.
    pub source: i32,
    /// The message tag.
    pub tag: i32,
}

/// The source a receive accepts.
///
/// See the example on [`Pattern`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceSel {
    /// Only messages from this rank of the communicator.
    Rank(i32),
    /// Messages from any rank (`MPI_ANY_SOURCE`).
    Any,
}

/// The tag a receive accepts.
///
/// See the example on [`Pattern`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TagSel {
    /// Only messages with this tag.
    Tag(i32),
    /// Messages with any tag (`MPI_ANY_TAG`).
    Any,
}

impl TagSel {
    fn admits(self, tag: i32) -> bool {
        match self {
            TagSel::Tag(t) => t == tag,
            TagSel::Any => true,
        }
    }
}

/// What a receive or a probe accepts.
///
/// ```
/// use oxmpi::p2p::matching::{Envelope, Pattern, SourceSel, TagSel};
/// let env = Envelope { context: 4, source: 1, tag: 7 };
/// let any = Pattern { context: 4, source: SourceSel::Any, tag: TagSel::Any };
/// let exact = Pattern { context: 4, source: SourceSel::Rank(1), tag: TagSel::Tag(7) };
/// assert!(any.matches(&env) && exact.matches(&env));
/// let other_comm = Pattern { context: 6, ..any };
/// assert!(!other_comm.matches(&env)); // contexts keep communicators apart
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pattern {
    /// Context id of the communicator the receive was posted on.
    pub context: u32,
    /// Accepted source.
    pub source: SourceSel,
    /// Accepted tag.
    pub tag: TagSel,
}

impl Pattern {
    /// Whether a message with envelope `env` matches this pattern.
    ///
    /// See the example on [`Pattern`].
    pub fn matches(&self, env: &Envelope) -> bool {
        let source = match self.source {
            SourceSel::Rank(r) => r == env.source,
            SourceSel::Any => true,
        };
        self.context == env.context && source && self.tag.admits(env.tag)
    }
}

/// A posted receive paired with the message it receives.
///
/// Both handles are given back, so that neither is lost when a match happens
/// on the spot.
///
/// Returned by [`Matcher::post`] and [`Matcher::arrive`]; see the example on [`Matcher`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match<P, U> {
    /// The receive.
    pub recv: P,
    /// The message's envelope (its source and tag go into `MPI_Status`).
    pub env: Envelope,
    /// The message.
    pub msg: U,
}

/// A queued item with its sequence number and what matching looks at.
#[derive(Debug)]
struct Entry<K, T> {
    seq: u64,
    key: K,
    item: T,
}

type Queue<K, T> = VecDeque<Entry<K, T>>;

/// The queues of one context.
#[derive(Debug)]
struct ContextQueues<P, U> {
    /// Posted receives that name a source, indexed by source rank (no
    /// hashing on the hot path; grown to the largest source named).
    posted: Vec<Queue<TagSel, P>>,
    /// Posted `MPI_ANY_SOURCE` receives.
    posted_any: Queue<TagSel, P>,
    /// Unexpected messages by source; never holds an empty queue.
    unexpected: FastMap<i32, Queue<Envelope, U>>,
}

impl<P, U> Default for ContextQueues<P, U> {
    fn default() -> Self {
        Self {
            posted: Vec::new(),
            posted_any: VecDeque::new(),
            unexpected: FastMap::default(),
        }
    }
}

/// The queues of every context: a slab found through a map, with the
/// last context looked up remembered, so that a stream of messages on one
/// communicator finds its queues with one comparison instead of a hash
/// look-up (on every post and every arrival). A freed slot keeps empty
/// queues until a new context takes it.
struct Contexts<P, U> {
    slots: Vec<ContextQueues<P, U>>,
    index: FastMap<u32, usize>,
    free: Vec<usize>,
    /// The context last looked up mutably, and its slot.
    hot: Option<(u32, usize)>,
}

impl<P, U> Contexts<P, U> {
    fn new() -> Self {
        Contexts {
            slots: Vec::new(),
            index: FastMap::default(),
            free: Vec::new(),
            hot: None,
        }
    }

    /// The slot of `context`, remembered for the next look-up.
    #[inline(always)]
    fn slot(&mut self, context: u32) -> Option<usize> {
        match self.hot {
            Some((c, i)) if c == context => Some(i),
            _ => self.look_up(context),
        }
    }

    #[inline(never)]
    fn look_up(&mut self, context: u32) -> Option<usize> {
        let i = *self.index.get(&context)?;
        self.hot = Some((context, i));
        Some(i)
    }

    fn get(&self, context: u32) -> Option<&ContextQueues<P, U>> {
        let i = match self.hot {
            Some((c, i)) if c == context => i,
            _ => *self.index.get(&context)?,
        };
        self.slots.get(i)
    }

    #[inline(always)]
    fn get_mut(&mut self, context: u32) -> Option<&mut ContextQueues<P, U>> {
        let i = self.slot(context)?;
        self.slots.get_mut(i)
    }

    #[inline(always)]
    fn get_or_default(&mut self, context: u32) -> &mut ContextQueues<P, U> {
        let i = match self.slot(context) {
            Some(i) => i,
            None => self.add(context),
        };
        &mut self.slots[i]
    }

    #[cold]
    fn add(&mut self, context: u32) -> usize {
        let i = self.free.pop().unwrap_or_else(|| {
            self.slots.push(ContextQueues::default());
            self.slots.len() - 1
        });
        self.index.insert(context, i);
        self.hot = Some((context, i));
        i
    }

    fn remove(&mut self, context: u32) -> Option<ContextQueues<P, U>> {
        let i = self.index.remove(&context)?;
        if self.hot.is_some_and(|(c, _)| c == context) {
            self.hot = None;
        }
        self.free.push(i);
        Some(std::mem::take(&mut self.slots[i]))
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut ContextQueues<P, U>> {
        self.slots.iter_mut()
    }
}

impl<P: std::fmt::Debug, U: std::fmt::Debug> std::fmt::Debug for Contexts<P, U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let live = self.index.iter().map(|(c, &i)| (c, &self.slots[i]));
        f.debug_map().entries(live).finish()
    }
}

/// Finds, across `queues`, the earliest entry (lowest sequence number)
/// accepted by `ok`; returns its queue and index.
fn earliest<K, T, Q: Deref<Target = Queue<K, T>>>(
    queues: impl IntoIterator<Item = Q>,
    mut ok: impl FnMut(&Entry<K, T>) -> bool,
) -> Option<(Q, usize)> {
    let mut best: Option<(Q, usize, u64)> = None;
    for q in queues {
        if let Some(i) = q.iter().position(&mut ok) {
            let seq = q[i].seq;
            let better = match &best {
                Some((_, _, best_seq)) => seq < *best_seq,
                None => true,
            };
            if better {
                best = Some((q, i, seq));
            }
        }
    }
    best.map(|(q, i, _)| (q, i))
}

/// Removes entry `i` of `q` (the front, the usual case, without shifting).
#[inline(always)]
fn remove_at<K, T>(q: &mut Queue<K, T>, i: usize) -> Option<Entry<K, T>> {
    if i == 0 {
        q.pop_front()
    } else {
        remove_inside(q, i)
    }
}

#[inline(never)]
fn remove_inside<K, T>(q: &mut Queue<K, T>, i: usize) -> Option<Entry<K, T>> {
    q.remove(i)
}

/// Posted-receive and unexpected-message queues, matched per the MPI rules
/// (see the module documentation).
///
/// `P` is a posted receive's handle, `U` an unexpected message's handle.
///
/// ```
/// use oxmpi::p2p::matching::{Envelope, Match, Matcher, Pattern, SourceSel, TagSel};
/// // Receives are named by &str, messages by u32 here.
/// let mut m: Matcher<&str, u32> = Matcher::new();
/// let pat = |tag| Pattern { context: 0, source: SourceSel::Any, tag: TagSel::Tag(tag) };
/// let env = |source, tag| Envelope { context: 0, source, tag };
/// assert!(m.post(pat(5), "recv A").is_none()); // nothing has arrived: queued
/// assert_eq!(m.posted_len(), 1);
/// let got: Option<Match<&str, u32>> = m.arrive(env(2, 5), 100);
/// assert_eq!(got, Some(Match { recv: "recv A", env: env(2, 5), msg: 100 }));
/// assert!(m.arrive(env(3, 9), 200).is_none()); // nobody waits for tag 9
/// assert_eq!((m.posted_len(), m.unexpected_len()), (0, 1));
/// ```
#[derive(Debug)]
pub struct Matcher<P, U> {
    contexts: Contexts<P, U>,
    /// The only posted receive, when exactly one is posted and it was
    /// posted while none was (then the queues hold no posted receive).
    lone: Option<(Pattern, P)>,
    next_seq: u64,
    posted_len: usize,
    unexpected_len: usize,
}

impl<P, U> Default for Matcher<P, U> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P, U> Matcher<P, U> {
    /// An empty matcher.
    ///
    /// See the example on [`Matcher`].
    pub fn new() -> Self {
        Self {
            contexts: Contexts::new(),
            lone: None,
            next_seq: 0,
            posted_len: 0,
            unexpected_len: 0,
        }
    }

    fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// A receive is posted. If an unexpected message matches, the
    /// earliest-arrived matching one is removed and returned with the
    /// receive; otherwise the receive is queued and `None` is returned.
    ///
    /// ```
    /// use oxmpi::p2p::matching::{Envelope, Matcher, Pattern, SourceSel, TagSel};
    /// let mut m: Matcher<u8, &str> = Matcher::new();
    /// m.arrive(Envelope { context: 0, source: 1, tag: 3 }, "first");
    /// m.arrive(Envelope { context: 0, source: 2, tag: 3 }, "second");
    /// // A receive takes the earliest-arrived message it matches.
    /// let any = Pattern { context: 0, source: SourceSel::Any, tag: TagSel::Tag(3) };
    /// assert_eq!(m.post(any, 1).map(|hit| hit.msg), Some("first"));
    /// ```
    pub fn post(&mut self, pattern: Pattern, recv: P) -> Option<Match<P, U>> {
        if self.unexpected_len > 0 {
            if let Some((env, msg)) = self.take(&pattern) {
                return Some(Match { recv, env, msg });
            }
        }
        if self.posted_len == 0 {
            self.lone = Some((pattern, recv));
        } else {
            // The lone receive was posted first: it joins the queues first.
            if let Some((earlier, item)) = self.lone.take() {
                self.enqueue_posted(earlier, item);
            }
            self.enqueue_posted(pattern, recv);
        }
        self.posted_len += 1;
        None
    }

    /// Appends a posted receive to its queue.
    fn enqueue_posted(&mut self, pattern: Pattern, recv: P) {
        let entry = Entry {
            seq: self.next_seq(),
            key: pattern.tag,
            item: recv,
        };
        let cq = self.contexts.get_or_default(pattern.context);
        match pattern.source {
            SourceSel::Rank(r) => {
                let r = r as usize;
                if cq.posted.len() <= r {
                    cq.posted.resize_with(r + 1, VecDeque::new);
                }
                cq.posted[r].push_back(entry);
            }
            SourceSel::Any => cq.posted_any.push_back(entry),
        }
    }

    /// A message arrives. The earliest-posted matching receive is removed
    /// and returned with the message; otherwise the message is queued as
    /// unexpected and `None` is returned.
    ///
    /// ```
    /// use oxmpi::p2p::matching::{Envelope, Matcher, Pattern, SourceSel, TagSel};
    /// let mut m: Matcher<&str, ()> = Matcher::new();
    /// m.post(Pattern { context: 0, source: SourceSel::Any, tag: TagSel::Any }, "wildcard");
    /// m.post(Pattern { context: 0, source: SourceSel::Rank(1), tag: TagSel::Tag(3) }, "exact");
    /// // A message goes to the earliest-posted receive that matches it.
    /// let hit = m.arrive(Envelope { context: 0, source: 1, tag: 3 }, ()).unwrap();
    /// assert_eq!(hit.recv, "wildcard");
    /// ```
    pub fn arrive(&mut self, env: Envelope, msg: U) -> Option<Match<P, U>> {
        // `msg` comes back with the match when a posted receive takes it.
        let mut slot = Some(msg);
        let recv = self.arrive_with(env, || slot.take().expect("made at most once"))?;
        Some(Match {
            recv,
            env,
            msg: slot.take()?,
        })
    }

    /// [`Matcher::arrive`] that makes the queued item only when no receive
    /// matches: returns the earliest matching posted receive (removed;
    /// `make` is not called), or queues `make()` as unexpected and returns
    /// `None`.
    ///
    /// ```
    /// use oxmpi::p2p::matching::{Envelope, Matcher, Pattern, SourceSel, TagSel};
    /// let mut m: Matcher<&str, Vec<u8>> = Matcher::new();
    /// let env = Envelope { context: 0, source: 2, tag: 5 };
    /// // No receive matches: the message is made and queued as unexpected.
    /// assert_eq!(m.arrive_with(env, || vec![0; 8]), None);
    /// assert_eq!(m.unexpected_len(), 1);
    /// m.post(Pattern { context: 0, source: SourceSel::Rank(2), tag: TagSel::Tag(6) }, "tag 6");
    /// // A posted receive matches: `make` is not called.
    /// let hit = m.arrive_with(Envelope { tag: 6, ..env }, || unreachable!());
    /// assert_eq!(hit, Some("tag 6"));
    /// ```
    pub fn arrive_with(&mut self, env: Envelope, make: impl FnOnce() -> U) -> Option<P> {
        let seq = self.next_seq();
        if self.posted_len > 0 {
            if let Some(recv) = self.take_posted(&env) {
                self.posted_len -= 1;
                return Some(recv);
            }
        }
        let cq = self.contexts.get_or_default(env.context);
        let entry = Entry {
            seq,
            key: env,
            item: make(),
        };
        cq.unexpected
            .entry(env.source)
            .or_default()
            .push_back(entry);
        self.unexpected_len += 1;
        None
    }

    /// Removes the earliest-posted receive that matches `env`.
    #[inline]
    fn take_posted(&mut self, env: &Envelope) -> Option<P> {
        if let Some((pattern, _)) = &self.lone {
            // The only posted receive: nothing in the queues.
            return match pattern.matches(env) {
                true => self.lone.take().map(|(_, item)| item),
                false => None,
            };
        }
        let cq = self.contexts.get_mut(env.context)?;
        let ok = |e: &Entry<TagSel, P>| e.key.admits(env.tag);
        let named = usize::try_from(env.source)
            .ok()
            .and_then(|r| cq.posted.get_mut(r));
        let (q, i) = if cq.posted_any.is_empty() {
            // No wildcard receives (the usual case): one queue to look at,
            // and in a stream its front matches: taken without building
            // the deque's two-slice iterator.
            let q = named?;
            if q.front().is_some_and(ok) {
                return q.pop_front().map(|e| e.item);
            }
            let i = q.iter().position(ok)?;
            (q, i)
        } else {
            earliest(named.into_iter().chain([&mut cq.posted_any]), ok)?
        };
        remove_at(q, i).map(|e| e.item)
    }

    /// Probe (`MPI_Iprobe`): the earliest-arrived unexpected message that
    /// matches `pattern`, left in place.
    ///
    /// ```
    /// use oxmpi::p2p::matching::{Envelope, Matcher, Pattern, SourceSel, TagSel};
    /// let mut m: Matcher<(), Vec<u8>> = Matcher::new();
    /// m.arrive(Envelope { context: 0, source: 4, tag: 1 }, vec![0; 64]);
    /// let pat = Pattern { context: 0, source: SourceSel::Rank(4), tag: TagSel::Any };
    /// let (env, msg) = m.probe(&pat).expect("a message from rank 4");
    /// assert_eq!((env.tag, msg.len()), (1, 64));
    /// assert_eq!(m.unexpected_len(), 1); // still there
    /// ```
    pub fn probe(&self, pattern: &Pattern) -> Option<(&Envelope, &U)> {
        let cq = self.contexts.get(pattern.context)?;
        let ok = |e: &Entry<Envelope, U>| pattern.tag.admits(e.key.tag);
        let (q, i) = match pattern.source {
            SourceSel::Rank(r) => earliest(cq.unexpected.get(&r), ok),
            SourceSel::Any => earliest(cq.unexpected.values(), ok),
        }?;
        Some((&q[i].key, &q[i].item))
    }

    /// Matched probe (`MPI_Improbe`, `MPI_Mprobe`): removes and returns the
    /// earliest-arrived unexpected message that matches `pattern`.
    ///
    /// ```
    /// use oxmpi::p2p::matching::{Envelope, Matcher, Pattern, SourceSel, TagSel};
    /// let mut m: Matcher<(), &str> = Matcher::new();
    /// m.arrive(Envelope { context: 0, source: 4, tag: 1 }, "payload");
    /// let pat = Pattern { context: 0, source: SourceSel::Any, tag: TagSel::Tag(1) };
    /// assert_eq!(m.take(&pat).map(|(_, msg)| msg), Some("payload"));
    /// assert!(m.take(&pat).is_none()); // removed: no receive can match it now
    /// ```
    pub fn take(&mut self, pattern: &Pattern) -> Option<(Envelope, U)> {
        let cq = self.contexts.get_mut(pattern.context)?;
        let ok = |e: &Entry<Envelope, U>| pattern.tag.admits(e.key.tag);
        let (q, i) = match pattern.source {
            SourceSel::Rank(r) => earliest(cq.unexpected.get_mut(&r), ok),
            SourceSel::Any => earliest(cq.unexpected.values_mut(), ok),
        }?;
        let entry = remove_at(q, i)?;
        if q.is_empty() {
            cq.unexpected.remove(&entry.key.source);
        }
        self.unexpected_len -= 1;
        Some((entry.key, entry.item))
    }

    /// Cancels a posted receive (`MPI_Cancel`): removes and returns the
    /// earliest-posted receive for which `pred` holds, if one is still
    /// posted. `None` means it was already matched (or never posted).
    ///
    /// ```
    /// use oxmpi::p2p::matching::{Matcher, Pattern, SourceSel, TagSel};
    /// let mut m: Matcher<u64, ()> = Matcher::new();
    /// let pat = Pattern { context: 0, source: SourceSel::Any, tag: TagSel::Any };
    /// m.post(pat, 10);
    /// m.post(pat, 11);
    /// assert_eq!(m.cancel_posted(|&id| id == 11), Some(11));
    /// assert_eq!(m.cancel_posted(|&id| id == 11), None); // already gone
    /// assert_eq!(m.posted_len(), 1);
    /// ```
    pub fn cancel_posted(&mut self, mut pred: impl FnMut(&P) -> bool) -> Option<P> {
        if let Some((_, item)) = &self.lone {
            let hit = pred(item);
            return match hit {
                true => {
                    self.posted_len -= 1;
                    self.lone.take().map(|(_, item)| item)
                }
                false => None,
            };
        }
        let queues = self.contexts.values_mut().flat_map(|cq| {
            cq.posted
                .iter_mut()
                .chain(std::iter::once(&mut cq.posted_any))
        });
        let (q, i) = earliest(queues, |e| pred(&e.item))?;
        let entry = remove_at(q, i)?;
        self.posted_len -= 1;
        Some(entry.item)
    }

    /// Mutable access to the earliest-arrived unexpected message for which
    /// `pred` holds (for example to append eager fragments as they arrive).
    ///
    /// ```
    /// use oxmpi::p2p::matching::{Envelope, Matcher};
    /// let mut m: Matcher<(), Vec<u8>> = Matcher::new();
    /// let env = Envelope { context: 0, source: 2, tag: 8 };
    /// m.arrive(env, b"first half, ".to_vec());
    /// // A later fragment of the same message is appended in place.
    /// let msg = m.unexpected_mut(|e, _| *e == env).unwrap();
    /// msg.extend_from_slice(b"second half");
    /// assert_eq!(m.unexpected_len(), 1);
    /// ```
    pub fn unexpected_mut(
        &mut self,
        mut pred: impl FnMut(&Envelope, &U) -> bool,
    ) -> Option<&mut U> {
        let queues = self
            .contexts
            .values_mut()
            .flat_map(|cq| cq.unexpected.values_mut());
        let (q, i) = earliest(queues, |e| pred(&e.key, &e.item))?;
        Some(&mut q[i].item)
    }

    /// Number of posted receives waiting for a message.
    ///
    /// See the example on [`Matcher`].
    pub fn posted_len(&self) -> usize {
        self.posted_len
    }

    /// Number of unexpected messages waiting for a receive.
    ///
    /// See the example on [`Matcher`].
    pub fn unexpected_len(&self) -> usize {
        self.unexpected_len
    }

    /// Drops everything queued on `context` (its communicator was freed):
    /// returns the posted receives in post order and the unexpected messages
    /// in arrival order.
    ///
    /// ```
    /// use oxmpi::p2p::matching::{Envelope, Matcher, Pattern, SourceSel, TagSel};
    /// let mut m: Matcher<&str, &str> = Matcher::new();
    /// m.post(Pattern { context: 8, source: SourceSel::Rank(0), tag: TagSel::Any }, "recv");
    /// m.arrive(Envelope { context: 8, source: 1, tag: 0 }, "msg");
    /// m.arrive(Envelope { context: 2, source: 1, tag: 0 }, "elsewhere");
    /// assert_eq!(m.purge_context(8), (vec!["recv"], vec!["msg"]));
    /// assert_eq!((m.posted_len(), m.unexpected_len()), (0, 1));
    /// ```
    pub fn purge_context(&mut self, context: u32) -> (Vec<P>, Vec<U>) {
        // A lone receive is the only posted one: the queues hold none.
        let mut posted = Vec::new();
        if self
            .lone
            .as_ref()
            .is_some_and(|(p, _)| p.context == context)
        {
            posted.extend(self.lone.take().map(|(_, item)| item));
        }
        let mut unexpected = Vec::new();
        if let Some(cq) = self.contexts.remove(context) {
            posted.extend(in_order(cq.posted.into_iter().chain([cq.posted_any])));
            unexpected = in_order(cq.unexpected.into_values());
        }
        self.posted_len -= posted.len();
        self.unexpected_len -= unexpected.len();
        (posted, unexpected)
    }
}

/// The items of `queues`, in sequence order.
fn in_order<K, T>(queues: impl Iterator<Item = Queue<K, T>>) -> Vec<T> {
    let mut entries: Vec<Entry<K, T>> = queues.flatten().collect();
    entries.sort_unstable_by_key(|e| e.seq);
    entries.into_iter().map(|e| e.item).collect()
}

#[cfg(test)]
mod tests;
