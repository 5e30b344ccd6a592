//! One test per matching rule; the randomized comparison with a reference
//! model lives in `tests/matching_model.rs`.

use super::*;

type M = Matcher<&'static str, &'static str>;

fn env(context: u32, source: i32, tag: i32) -> Envelope {
    Envelope {
        context,
        source,
        tag,
    }
}

fn pat(context: u32, source: Option<i32>, tag: Option<i32>) -> Pattern {
    Pattern {
        context,
        source: source.map_or(SourceSel::Any, SourceSel::Rank),
        tag: tag.map_or(TagSel::Any, TagSel::Tag),
    }
}

fn recv_of(m: Option<Match<&'static str, &'static str>>) -> Option<&'static str> {
    m.map(|m| m.recv)
}

fn msg_of(m: Option<Match<&'static str, &'static str>>) -> Option<&'static str> {
    m.map(|m| m.msg)
}

#[test]
fn exact_match_needs_context_source_and_tag() {
    let mut m = M::new();
    assert!(m.post(pat(1, Some(2), Some(3)), "r").is_none());
    assert!(m.arrive(env(0, 2, 3), "other context").is_none());
    assert!(m.arrive(env(1, 1, 3), "other source").is_none());
    assert!(m.arrive(env(1, 2, 4), "other tag").is_none());
    let got = m.arrive(env(1, 2, 3), "hit").unwrap();
    assert_eq!(
        got,
        Match {
            recv: "r",
            env: env(1, 2, 3),
            msg: "hit"
        }
    );
    assert_eq!((m.posted_len(), m.unexpected_len()), (0, 3));
}

#[test]
fn wildcards_match_any_source_and_tag_but_not_other_context() {
    let mut m = M::new();
    assert!(m.arrive(env(1, 5, -7), "internal-looking tag").is_none());
    assert!(m.post(pat(0, None, None), "wrong context").is_none());
    assert_eq!(
        msg_of(m.post(pat(1, None, None), "r")),
        Some("internal-looking tag")
    );
    assert_eq!(msg_of(m.post(pat(1, Some(5), None), "x")), None);
    assert_eq!(recv_of(m.arrive(env(1, 5, 9), "m")), Some("x"));
}

#[test]
fn same_source_messages_match_in_arrival_order() {
    let mut m = M::new();
    m.arrive(env(0, 1, 7), "first");
    m.arrive(env(0, 1, 8), "second");
    m.arrive(env(0, 1, 7), "third");
    assert_eq!(msg_of(m.post(pat(0, Some(1), None), "a")), Some("first"));
    assert_eq!(msg_of(m.post(pat(0, Some(1), Some(7)), "b")), Some("third"));
    assert_eq!(msg_of(m.post(pat(0, None, None), "c")), Some("second"));
    assert_eq!(m.unexpected_len(), 0);
}

#[test]
fn any_source_receive_takes_earliest_arrival_across_sources() {
    let mut m = M::new();
    m.arrive(env(0, 3, 1), "s3 first");
    m.arrive(env(0, 1, 2), "s1");
    m.arrive(env(0, 3, 2), "s3 second");
    m.arrive(env(0, 2, 2), "s2");
    assert_eq!(msg_of(m.post(pat(0, None, Some(2)), "a")), Some("s1"));
    assert_eq!(
        msg_of(m.post(pat(0, None, Some(2)), "b")),
        Some("s3 second")
    );
    assert_eq!(msg_of(m.post(pat(0, None, None), "c")), Some("s3 first"));
    assert_eq!(msg_of(m.post(pat(0, None, None), "d")), Some("s2"));
    assert!(m.post(pat(0, None, None), "e").is_none());
}

#[test]
fn earliest_posted_receive_wins_between_specific_and_any_source() {
    let mut m = M::new();
    m.post(pat(0, Some(1), Some(5)), "specific 1");
    m.post(pat(0, None, None), "any 1");
    m.post(pat(0, Some(1), None), "specific 2");
    m.post(pat(0, None, Some(5)), "any 2");
    assert_eq!(recv_of(m.arrive(env(0, 1, 5), "m1")), Some("specific 1"));
    assert_eq!(recv_of(m.arrive(env(0, 1, 5), "m2")), Some("any 1"));
    assert_eq!(recv_of(m.arrive(env(0, 2, 5), "m3")), Some("any 2"));
    assert_eq!(recv_of(m.arrive(env(0, 1, 0), "m4")), Some("specific 2"));
    assert_eq!(m.posted_len(), 0);
}

#[test]
fn probe_leaves_message_and_take_removes_it() {
    let mut m = M::new();
    m.arrive(env(0, 1, 4), "a");
    m.arrive(env(0, 2, 4), "b");
    let p = pat(0, None, Some(4));
    assert_eq!(m.probe(&p), Some((&env(0, 1, 4), &"a")));
    assert_eq!(m.probe(&p), Some((&env(0, 1, 4), &"a")));
    assert_eq!(m.probe(&pat(0, Some(2), None)), Some((&env(0, 2, 4), &"b")));
    assert_eq!(m.probe(&pat(1, None, None)), None);
    assert_eq!(m.take(&p), Some((env(0, 1, 4), "a")));
    assert_eq!(m.take(&p), Some((env(0, 2, 4), "b")));
    assert_eq!(m.take(&p), None);
    assert_eq!(m.unexpected_len(), 0);
}

#[test]
fn probe_ignores_posted_receives() {
    let mut m = M::new();
    m.post(pat(0, None, None), "r");
    assert_eq!(m.probe(&pat(0, None, None)), None);
    assert_eq!(m.take(&pat(0, None, None)), None);
    assert_eq!(m.posted_len(), 1);
}

#[test]
fn cancel_removes_only_a_still_posted_receive() {
    let mut m = M::new();
    m.post(pat(0, Some(1), None), "a");
    m.post(pat(0, None, None), "b");
    m.post(pat(3, Some(1), None), "c");
    assert_eq!(m.cancel_posted(|r| *r == "b"), Some("b"));
    assert_eq!(m.cancel_posted(|r| *r == "b"), None);
    assert_eq!(recv_of(m.arrive(env(0, 1, 0), "m")), Some("a"));
    assert_eq!(m.cancel_posted(|r| *r == "a"), None);
    // Several candidates: the earliest-posted goes.
    m.post(pat(0, Some(1), None), "d");
    assert_eq!(m.cancel_posted(|_| true), Some("c"));
    assert_eq!(m.posted_len(), 1);
}

#[test]
fn unexpected_mut_edits_in_place() {
    let mut m: Matcher<u32, Vec<u8>> = Matcher::new();
    m.arrive(env(0, 1, 0), vec![1]);
    m.arrive(env(0, 2, 0), vec![2]);
    m.unexpected_mut(|e, _| e.source == 2).unwrap().push(3);
    assert!(m.unexpected_mut(|e, _| e.source == 9).is_none());
    assert_eq!(
        m.take(&pat(0, Some(2), None)),
        Some((env(0, 2, 0), vec![2, 3]))
    );
    // Several candidates: the earliest-arrived one.
    m.arrive(env(0, 3, 0), vec![4]);
    m.unexpected_mut(|_, _| true).unwrap().push(5);
    assert_eq!(m.take(&pat(0, Some(1), None)).unwrap().1, vec![1, 5]);
}

#[test]
fn purge_drops_one_context_in_order() {
    let mut m = M::new();
    m.post(pat(1, Some(2), None), "r1");
    m.post(pat(1, None, Some(9)), "r2");
    m.post(pat(1, Some(0), None), "r3");
    m.post(pat(2, None, None), "keep r");
    m.arrive(env(1, 4, 0), "m1");
    m.arrive(env(1, 3, 0), "m2");
    m.arrive(env(2, 3, 0), "keep m");
    m.arrive(env(2, 3, 0), "keep m2");
    assert_eq!(
        m.purge_context(1),
        (vec!["r1", "r2", "r3"], vec!["m1", "m2"])
    );
    assert_eq!((m.posted_len(), m.unexpected_len()), (0, 1));
    assert_eq!(m.purge_context(1), (vec![], vec![]));
    assert_eq!(m.purge_context(2), (vec![], vec!["keep m2"]));
    assert_eq!((m.posted_len(), m.unexpected_len()), (0, 0));
}

#[test]
fn pattern_matches_agrees_with_rules() {
    let e = env(4, 1, 2);
    assert!(pat(4, None, None).matches(&e));
    assert!(pat(4, Some(1), Some(2)).matches(&e));
    assert!(!pat(5, None, None).matches(&e));
    assert!(!pat(4, Some(0), None).matches(&e));
    assert!(!pat(4, None, Some(3)).matches(&e));
}

#[test]
fn a_purged_context_slot_reused_by_another_context_keeps_them_apart() {
    let mut m = M::new();
    // Two receives on context 5: both in the queues (the lone slot holds one).
    m.post(pat(5, Some(0), Some(1)), "r5a");
    m.post(pat(5, Some(0), Some(1)), "r5b");
    assert_eq!(m.purge_context(5), (vec!["r5a", "r5b"], vec![]));
    // Context 9 takes the freed slot; context 5, remembered last, is gone.
    m.post(pat(9, Some(0), Some(1)), "r9a");
    m.post(pat(9, Some(0), Some(1)), "r9b");
    assert_eq!(recv_of(m.arrive(env(5, 0, 1), "m5")), None);
    assert_eq!(recv_of(m.arrive(env(9, 0, 1), "m9")), Some("r9a"));
    assert_eq!(m.purge_context(5), (vec![], vec!["m5"]));
    assert_eq!(m.purge_context(9), (vec!["r9b"], vec![]));
    assert_eq!((m.posted_len(), m.unexpected_len()), (0, 0));
}

#[test]
fn alternating_contexts_each_find_their_own_queues() {
    let mut m = M::new();
    for c in [1, 2, 1, 2] {
        assert!(m
            .arrive(env(c, 3, 0), if c == 1 { "a" } else { "b" })
            .is_none());
    }
    assert_eq!(msg_of(m.post(pat(2, Some(3), None), "x")), Some("b"));
    assert_eq!(msg_of(m.post(pat(1, Some(3), None), "y")), Some("a"));
    assert_eq!(m.unexpected_len(), 2);
}
