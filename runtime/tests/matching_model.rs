//! The matcher against a deliberately simple reference model: two vectors
//! scanned front to back. Random interleavings of arrivals, posts (with
//! wildcards), probes, takes, cancels, in-place edits and purges must give
//! identical results at every step. Also scale checks.

use std::time::{Duration, Instant};

use oxmpi::p2p::matching::{Envelope, Match, Matcher, Pattern, SourceSel, TagSel};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// A posted receive is its id; an unexpected message is its id plus a count
/// of in-place edits (to check `unexpected_mut` hits the right one).
type Msg = (u64, u32);

/// The reference: posted receives in post order, unexpected messages in
/// arrival order, each scanned linearly.
#[derive(Default)]
struct Model {
    posted: Vec<(Pattern, u64)>,
    unexpected: Vec<(Envelope, Msg)>,
}

fn model_matches(p: &Pattern, e: &Envelope) -> bool {
    p.context == e.context
        && (p.source == SourceSel::Any || p.source == SourceSel::Rank(e.source))
        && (p.tag == TagSel::Any || p.tag == TagSel::Tag(e.tag))
}

impl Model {
    fn post(&mut self, p: Pattern, recv: u64) -> Option<Match<u64, Msg>> {
        match self.take(&p) {
            Some((env, msg)) => Some(Match { recv, env, msg }),
            None => {
                self.posted.push((p, recv));
                None
            }
        }
    }

    fn arrive(&mut self, env: Envelope, msg: Msg) -> Option<Match<u64, Msg>> {
        match self.posted.iter().position(|(p, _)| model_matches(p, &env)) {
            Some(i) => Some(Match {
                recv: self.posted.remove(i).1,
                env,
                msg,
            }),
            None => {
                self.unexpected.push((env, msg));
                None
            }
        }
    }

    fn probe(&self, p: &Pattern) -> Option<(Envelope, Msg)> {
        self.unexpected
            .iter()
            .find(|(e, _)| model_matches(p, e))
            .copied()
    }

    fn take(&mut self, p: &Pattern) -> Option<(Envelope, Msg)> {
        let i = self
            .unexpected
            .iter()
            .position(|(e, _)| model_matches(p, e))?;
        Some(self.unexpected.remove(i))
    }

    fn cancel(&mut self, pred: impl Fn(u64) -> bool) -> Option<u64> {
        let i = self.posted.iter().position(|(_, r)| pred(*r))?;
        Some(self.posted.remove(i).1)
    }

    fn edit(&mut self, pred: impl Fn(&Envelope, &Msg) -> bool) -> Option<Msg> {
        let (_, msg) = self.unexpected.iter_mut().find(|(e, m)| pred(e, m))?;
        let before = *msg;
        msg.1 += 1;
        Some(before)
    }

    fn purge(&mut self, context: u32) -> (Vec<u64>, Vec<Msg>) {
        let posted = self.posted.iter().filter(|(p, _)| p.context == context);
        let unexpected = self.unexpected.iter().filter(|(e, _)| e.context == context);
        let out = (
            posted.map(|(_, r)| *r).collect(),
            unexpected.map(|(_, m)| *m).collect(),
        );
        self.posted.retain(|(p, _)| p.context != context);
        self.unexpected.retain(|(e, _)| e.context != context);
        out
    }
}

#[derive(Clone, Debug)]
enum Op {
    Arrive(Envelope),
    Post(Pattern),
    Probe(Pattern),
    Take(Pattern),
    /// Cancel the receive with this id (it may be matched already).
    CancelId(u64),
    /// Cancel the earliest-posted receive whose id is `r` modulo 3.
    CancelMod(u64),
    /// Edit the earliest unexpected message from this source and tag.
    Edit(i32, i32),
    Purge(u32),
}

const CONTEXTS: u32 = 3;
const SOURCES: i32 = 4;
const TAGS: i32 = 3;

fn envelope() -> impl Strategy<Value = Envelope> {
    (0..CONTEXTS, 0..SOURCES, 0..TAGS).prop_map(|(context, source, tag)| Envelope {
        context,
        source,
        tag,
    })
}

fn pattern() -> impl Strategy<Value = Pattern> {
    let source = prop_oneof![
        2 => (0..SOURCES).prop_map(SourceSel::Rank),
        1 => Just(SourceSel::Any),
    ];
    let tag = prop_oneof![
        2 => (0..TAGS).prop_map(TagSel::Tag),
        1 => Just(TagSel::Any),
    ];
    (0..CONTEXTS, source, tag).prop_map(|(context, source, tag)| Pattern {
        context,
        source,
        tag,
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => envelope().prop_map(Op::Arrive),
        8 => pattern().prop_map(Op::Post),
        2 => pattern().prop_map(Op::Probe),
        2 => pattern().prop_map(Op::Take),
        1 => (0..64u64).prop_map(Op::CancelId),
        1 => (0..3u64).prop_map(Op::CancelMod),
        1 => (0..SOURCES, 0..TAGS).prop_map(|(s, t)| Op::Edit(s, t)),
        1 => (0..CONTEXTS).prop_map(Op::Purge),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn matcher_agrees_with_model(ops in proptest::collection::vec(op(), 0..200)) {
        let mut real: Matcher<u64, Msg> = Matcher::new();
        let mut model = Model::default();
        for (id, op) in (0u64..).zip(ops) {
            match op {
                Op::Arrive(e) => {
                    prop_assert_eq!(real.arrive(e, (id, 0)), model.arrive(e, (id, 0)));
                }
                Op::Post(p) => prop_assert_eq!(real.post(p, id), model.post(p, id)),
                Op::Probe(p) => {
                    let got = real.probe(&p).map(|(e, m)| (*e, *m));
                    prop_assert_eq!(got, model.probe(&p));
                }
                Op::Take(p) => prop_assert_eq!(real.take(&p), model.take(&p)),
                Op::CancelId(k) => {
                    prop_assert_eq!(real.cancel_posted(|r| *r == k), model.cancel(|r| r == k));
                }
                Op::CancelMod(k) => {
                    let got = real.cancel_posted(|r| *r % 3 == k);
                    prop_assert_eq!(got, model.cancel(|r| r % 3 == k));
                }
                Op::Edit(s, t) => {
                    let pred = |e: &Envelope, _: &Msg| e.source == s && e.tag == t;
                    let got = real.unexpected_mut(pred).map(|m| {
                        let before = *m;
                        m.1 += 1;
                        before
                    });
                    prop_assert_eq!(got, model.edit(pred));
                }
                Op::Purge(c) => prop_assert_eq!(real.purge_context(c), model.purge(c)),
            }
            prop_assert_eq!(real.posted_len(), model.posted.len());
            prop_assert_eq!(real.unexpected_len(), model.unexpected.len());
        }
    }
}

fn env(source: i32, tag: i32) -> Envelope {
    Envelope {
        context: 7,
        source,
        tag,
    }
}

/// 20,000 unexpected messages from 8 sources, then 20,000 `MPI_ANY_SOURCE`
/// receives: each must get the next message in arrival order.
#[test]
fn many_unexpected_any_source_receives() {
    let start = Instant::now();
    let mut m: Matcher<u32, u32> = Matcher::new();
    for i in 0..20_000u32 {
        let source = ((i * 5) % 8) as i32;
        assert!(m.arrive(env(source, (i % 3) as i32), i).is_none());
    }
    assert_eq!(m.unexpected_len(), 20_000);
    let any = Pattern {
        context: 7,
        source: SourceSel::Any,
        tag: TagSel::Any,
    };
    for i in 0..20_000u32 {
        let hit = m.post(any, i).expect("a message is waiting");
        assert_eq!(hit.msg, i);
    }
    assert_eq!((m.posted_len(), m.unexpected_len()), (0, 0));
    let took = start.elapsed();
    assert!(took < Duration::from_secs(1), "took {took:?}");
    eprintln!("20,000 arrivals + 20,000 ANY_SOURCE receives: {took:?}");
}

/// 512 receives, each naming a source and a tag, matched by arrivals in
/// reverse post order.
#[test]
fn preposted_receives_matched_in_reverse() {
    let start = Instant::now();
    let mut m: Matcher<u32, u32> = Matcher::new();
    for i in 0..512u32 {
        let p = Pattern {
            context: 7,
            source: SourceSel::Rank((i % 4) as i32),
            tag: TagSel::Tag(i as i32),
        };
        assert!(m.post(p, i).is_none());
    }
    for i in (0..512u32).rev() {
        let hit = m.arrive(env((i % 4) as i32, i as i32), i).expect("posted");
        assert_eq!(hit.recv, i);
    }
    assert_eq!((m.posted_len(), m.unexpected_len()), (0, 0));
    let took = start.elapsed();
    assert!(took < Duration::from_secs(1), "took {took:?}");
    eprintln!("512 pre-posted receives matched in reverse: {took:?}");
}
