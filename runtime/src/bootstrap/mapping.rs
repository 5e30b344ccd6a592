//! `PMI_process_mapping`: encode and decode the `(vector,(X,Y,Z),...)` blocks.
//!
//! Each block `(X,Y,Z)` says "Y nodes, starting at node id X, with Z ranks
//! each", assigned block-wise: the first Z ranks go to node X, the next Z to
//! node X+1, and so on. Blocks apply in order; if together they cover fewer
//! ranks than the job has, the description repeats from its first block
//! (so round-robin 4 ranks over 2 nodes is `(vector,(0,2,1))`).
//!
//! Decoding is linear in the text length plus the job size: blocks that cover
//! no rank are dropped before the wrap-around loop, and the job size is
//! bounded by `MAX_RANKS` (2^24).

use super::wire::WireError;

/// Largest job size [`decode`] accepts (bounds the work a hostile peer can cause).
pub(crate) const MAX_RANKS: usize = 1 << 24;

/// One `(X,Y,Z)` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Block {
    first_node: usize,
    nodes: usize,
    ranks_per_node: usize,
}

/// Encodes the node id of every rank (index = rank) in the compact vector form.
///
/// Runs of ranks on one node become blocks; consecutive runs of equal length on
/// consecutive nodes merge into one block. If the layout is periodic (e.g.
/// round-robin) and describing one period takes fewer blocks, that shorter
/// description is emitted and relies on the wrap-around rule.
///
/// ```
/// use oxmpi::bootstrap::mapping::encode;
/// assert_eq!(encode(&[0, 0, 1, 1]), "(vector,(0,2,2))"); // 2 nodes from 0, 2 ranks each
/// assert_eq!(encode(&[0, 1, 0, 1]), "(vector,(0,2,1))"); // round robin: one period
/// ```
pub fn encode(node_of_rank: &[usize]) -> String {
    let full = blocks_of(node_of_rank);
    let period = smallest_period(node_of_rank);
    let blocks = if period < node_of_rank.len() {
        let short = blocks_of(&node_of_rank[..period]);
        if short.len() < full.len() {
            short
        } else {
            full
        }
    } else {
        full
    };
    let mut out = String::from("(vector");
    for b in blocks {
        out.push_str(&format!(
            ",({},{},{})",
            b.first_node, b.nodes, b.ranks_per_node
        ));
    }
    out.push(')');
    out
}

/// Runs of equal node ids, merged into blocks without wrap-around.
fn blocks_of(node_of_rank: &[usize]) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut i = 0;
    while i < node_of_rank.len() {
        let node = node_of_rank[i];
        let run = node_of_rank[i..].iter().take_while(|&&n| n == node).count();
        i += run;
        if let Some(last) = blocks.last_mut() {
            if last.ranks_per_node == run && last.first_node.checked_add(last.nodes) == Some(node) {
                last.nodes += 1;
                continue;
            }
        }
        blocks.push(Block {
            first_node: node,
            nodes: 1,
            ranks_per_node: run,
        });
    }
    blocks
}

/// Smallest `p` with `x[i] == x[i - p]` for all `i >= p` (KMP failure function).
fn smallest_period(x: &[usize]) -> usize {
    if x.is_empty() {
        return 0;
    }
    let mut fail = vec![0usize; x.len()];
    let mut k = 0;
    for i in 1..x.len() {
        while k > 0 && x[i] != x[k] {
            k = fail[k - 1];
        }
        if x[i] == x[k] {
            k += 1;
        }
        fail[i] = k;
    }
    x.len() - fail[x.len() - 1]
}

/// Decodes `text` into the node id of each of `size` ranks.
///
/// Whitespace anywhere is ignored. Errors name what was wrong: a missing
/// `(vector` header, a block that is not three decimal numbers, node ids that
/// overflow, a description covering no rank while `size > 0`, or `size`
/// above `MAX_RANKS` (2^24). Blocks covering more ranks than `size` are cut short.
///
/// ```
/// use oxmpi::bootstrap::mapping::decode;
/// assert_eq!(decode("(vector,(0,2,2))", 4)?, [0, 0, 1, 1]);
/// assert_eq!(decode("(vector,(0,2,1))", 5)?, [0, 1, 0, 1, 0]); // wraps around
/// assert!(decode("(0,2,2)", 4).is_err()); // no (vector header
/// # Ok::<(), oxmpi::bootstrap::wire::WireError>(())
/// ```
pub fn decode(text: &str, size: usize) -> Result<Vec<usize>, WireError> {
    if size > MAX_RANKS {
        return Err(bad(format!("job size {size} exceeds {MAX_RANKS}")));
    }
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let blocks = parse_blocks(&compact)?;
    let blocks: Vec<Block> = blocks
        .into_iter()
        .filter(|b| b.nodes > 0 && b.ranks_per_node > 0)
        .collect();
    if blocks.is_empty() {
        return if size == 0 {
            Ok(Vec::new())
        } else {
            Err(bad(format!("{text:?} assigns no rank to any node")))
        };
    }
    let mut out = Vec::with_capacity(size);
    'fill: loop {
        for b in &blocks {
            for j in 0..b.nodes {
                let node = b.first_node + j; // checked in parse_blocks
                for _ in 0..b.ranks_per_node {
                    if out.len() == size {
                        break 'fill;
                    }
                    out.push(node);
                }
            }
        }
    }
    Ok(out)
}

fn bad(why: String) -> WireError {
    WireError::Malformed(format!("PMI_process_mapping: {why}"))
}

/// Parses `(vector,(X,Y,Z),...)` with whitespace already removed.
fn parse_blocks(s: &str) -> Result<Vec<Block>, WireError> {
    let body = s
        .strip_prefix("(vector")
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| bad(format!("{s:?} is not of the form (vector,(X,Y,Z),...)")))?;
    let mut blocks = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let after_comma = rest
            .strip_prefix(",(")
            .ok_or_else(|| bad(format!("expected \",(\" at {rest:?}")))?;
        let (inner, after) = after_comma
            .split_once(')')
            .ok_or_else(|| bad(format!("unterminated block at {rest:?}")))?;
        blocks.push(parse_block(inner)?);
        rest = after;
    }
    Ok(blocks)
}

fn parse_block(inner: &str) -> Result<Block, WireError> {
    let mut nums = [0usize; 3];
    let mut parts = inner.split(',');
    for slot in &mut nums {
        let part = parts
            .next()
            .ok_or_else(|| bad(format!("block ({inner}) has fewer than 3 numbers")))?;
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad(format!("{part:?} in block ({inner}) is not a number")));
        }
        *slot = part
            .parse()
            .map_err(|_| bad(format!("{part:?} in block ({inner}) is too large")))?;
    }
    if parts.next().is_some() {
        return Err(bad(format!("block ({inner}) has more than 3 numbers")));
    }
    let [first_node, nodes, ranks_per_node] = nums;
    if nodes > 0 && first_node.checked_add(nodes - 1).is_none() {
        return Err(bad(format!("node ids of block ({inner}) overflow")));
    }
    Ok(Block {
        first_node,
        nodes,
        ranks_per_node,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn documented_examples() {
        assert_eq!(encode(&[0, 0]), "(vector,(0,1,2))");
        assert_eq!(encode(&[0, 0, 1, 1]), "(vector,(0,2,2))");
        assert_eq!(encode(&[0, 1, 0, 1]), "(vector,(0,2,1))");
        assert_eq!(encode(&[0]), "(vector,(0,1,1))");
        assert_eq!(encode(&[]), "(vector)");
        assert_eq!(
            encode(&[0, 0, 0, 1, 2, 2]),
            "(vector,(0,1,3),(1,1,1),(2,1,2))"
        );
        assert_eq!(decode("(vector,(0,2,2))", 4).unwrap(), vec![0, 0, 1, 1]);
        assert_eq!(decode("(vector,(0,1,2))", 2).unwrap(), vec![0, 0]);
    }

    #[test]
    fn wrap_around_and_truncation() {
        assert_eq!(decode("(vector,(0,2,1))", 5).unwrap(), vec![0, 1, 0, 1, 0]);
        assert_eq!(decode("(vector,(0,4,2))", 3).unwrap(), vec![0, 0, 1]);
        assert_eq!(decode("(vector,(0,0,5),(3,1,1))", 2).unwrap(), vec![3, 3]);
        assert_eq!(decode("(vector)", 0).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn whitespace_is_ignored() {
        let got = decode(" ( vector , (0, 2,2) ,\n(5,1,1) )\n", 5).unwrap();
        assert_eq!(got, vec![0, 0, 1, 1, 5]);
    }

    #[test]
    fn garbage_is_rejected_with_reason() {
        for (text, needle) in [
            ("", "not of the form"),
            ("(vector,(0,1))", "fewer than 3"),
            ("(vector,(0,1,2,3))", "more than 3"),
            ("(vector,(0,-1,2))", "not a number"),
            ("(vector,(0,1,2)", "unterminated"),
            ("(vector,(0,1,2)x)", "expected"),
            ("(vector,(0,1,99999999999999999999999))", "too large"),
            ("(vector,(18446744073709551615,2,1))", "overflow"),
            ("(vector,(0,0,1))", "no rank"),
            ("(vector)", "no rank"),
            ("(explicit,(0,1,2))", "not of the form"),
        ] {
            let err = decode(text, 2).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
        assert!(decode("(vector,(0,1,1))", MAX_RANKS + 1).is_err());
    }

    fn layouts() -> impl Strategy<Value = Vec<usize>> {
        prop_oneof![
            prop::collection::vec(0usize..4, 0..40),
            (1usize..6, 1usize..6, 0usize..3)
                .prop_map(|(n, p, base)| { (0..n * p).map(|r| base + r / p).collect() }),
            (1usize..6, 1usize..30).prop_map(|(n, size)| (0..size).map(|r| r % n).collect()),
        ]
    }

    proptest! {
        #[test]
        fn decode_inverts_encode(x in layouts()) {
            let text = encode(&x);
            prop_assert_eq!(decode(&text, x.len()).unwrap(), x);
        }

        #[test]
        fn decode_never_panics(text in "[()vector,0-9 ]{0,40}", size in 0usize..64) {
            if let Ok(v) = decode(&text, size) {
                prop_assert_eq!(v.len(), size);
            }
        }
    }
}
