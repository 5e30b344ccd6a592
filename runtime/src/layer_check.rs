//! The layer check (issue 20): a module names only modules of lower layers.
//!
//! The layers are the `layers` block of `docs/ARCHITECTURE.md`, one layer a
//! line, lowest first; an entry is a module path (`coll`, `coll::algos`),
//! and a file belongs to the longest entry its module path starts with.
//! This test reads that table and every source file of the crate, finds
//! each path into the crate (`crate::`, `super::`, `self::`, a child
//! module's name; `use` groups expanded; re-exports followed to the module
//! that defines the item) and fails, naming file and line, where a file
//! names a module of its own layer (other than its own entry) or of a
//! higher one. Test code is held to the same rule.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// A module path from the crate root (`["coll", "algos"]`).
type ModPath = Vec<String>;

/// One layer entry: a module and its layer (0 = lowest).
#[derive(Debug, Clone)]
struct Entry {
    module: ModPath,
    layer: usize,
}

/// Reads the `layers` block of `doc`.
fn parse_table(doc: &str) -> Result<Vec<Entry>, String> {
    let start = doc
        .find("```layers\n")
        .ok_or("no ```layers block in docs/ARCHITECTURE.md")?;
    let body = &doc[start + "```layers\n".len()..];
    let body = &body[..body
        .find("```")
        .ok_or("the ```layers block is not closed")?];
    let mut entries = Vec::new();
    for (layer, line) in body
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        for name in line.split_whitespace() {
            entries.push(Entry {
                module: name.split("::").map(str::to_owned).collect(),
                layer,
            });
        }
    }
    Ok(entries)
}

/// The entry `path` belongs to: the longest that starts it.
fn entry_of<'a>(table: &'a [Entry], path: &[String]) -> Option<&'a Entry> {
    table
        .iter()
        .filter(|e| path.starts_with(&e.module))
        .max_by_key(|e| e.module.len())
}

/// `text` with comments and string and character literals blanked out
/// (newlines kept, so lines still count).
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let blank = |out: &mut Vec<u8>, s: &[u8]| {
        out.extend(s.iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }))
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        let end = if rest.starts_with(b"//") {
            rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            let mut depth = 0;
            let mut j = 0;
            while j < rest.len() {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            j
        } else if rest[0] == b'r'
            && (rest.starts_with(b"r\"") || rest.starts_with(b"r#"))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            let hashes = rest[1..].iter().take_while(|&&c| c == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                out.push(rest[0]);
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let from = 2 + hashes;
            rest[from..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(rest.len(), |p| from + p + close.len())
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            (j + 1).min(rest.len())
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime.
            match rest.iter().skip(1).take(12).position(|&c| c == b'\'') {
                _ if rest.get(1) == Some(&b'\\') => {
                    // An escape: the closing quote comes after the escaped byte.
                    rest.iter()
                        .skip(3)
                        .position(|&c| c == b'\'')
                        .map_or(1, |p| p + 4)
                }
                Some(p) if p == 1 || !is_ident(rest[1]) => p + 2,
                _ => 1,
            }
        } else {
            out.push(rest[0]);
            i += 1;
            continue;
        };
        blank(&mut out, &rest[..end]);
        i += end;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// A token and the line it is on.
#[derive(Debug, Clone, PartialEq)]
struct Token {
    text: String,
    line: usize,
}

fn tokens(text: &str) -> Vec<Token> {
    let b = text.as_bytes();
    let (mut out, mut line, mut i) = (Vec::new(), 1, 0);
    while i < b.len() {
        let c = b[i];
        let len = if c == b'\n' {
            line += 1;
            i += 1;
            continue;
        } else if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if is_ident(c) {
            b[i..].iter().take_while(|&&c| is_ident(c)).count()
        } else if b[i..].starts_with(b"::") {
            2
        } else {
            1
        };
        out.push(Token {
            text: text[i..i + len].to_owned(),
            line,
        });
        i += len;
    }
    out
}

/// A path into the crate as written, made absolute, with its line.
#[derive(Debug, Clone)]
struct Named {
    path: ModPath,
    line: usize,
    /// The name it is bound to, for `use` items (re-exports).
    binding: Option<String>,
}

/// Reads the rest of a path after `base` at `toks[i]` (just past a `::`),
/// expanding `{...}` groups; returns the paths and the index after them.
fn read_path(toks: &[Token], mut i: usize, base: ModPath, out: &mut Vec<Named>) -> usize {
    let mut path = base;
    loop {
        let Some(t) = toks.get(i) else { return i };
        if t.text == "{" {
            i += 1;
            loop {
                match toks.get(i).map(|t| t.text.as_str()) {
                    Some("}") => return i + 1,
                    Some(",") => i += 1,
                    Some(_) => i = read_path(toks, i, path.clone(), out),
                    None => return i,
                }
            }
        }
        if t.text == "*" {
            return i + 1;
        }
        if !is_ident(t.text.as_bytes()[0]) {
            return i;
        }
        let line = t.line;
        if t.text == "self" && toks.get(i + 1).map(|t| t.text.as_str()) != Some("::") {
            // `use a::{self}`: the module itself.
            let binding = path.last().cloned();
            out.push(Named {
                path: path.clone(),
                line,
                binding,
            });
            return i + 1;
        }
        path.push(t.text.clone());
        i += 1;
        if toks.get(i).map(|t| t.text.as_str()) == Some("::") {
            i += 1;
            continue;
        }
        let mut binding = path.last().cloned();
        if toks.get(i).map(|t| t.text.as_str()) == Some("as") {
            binding = toks.get(i + 1).map(|t| t.text.clone());
            i += 2;
        }
        out.push(Named {
            path,
            line,
            binding,
        });
        return i;
    }
}

/// A source file: its module, its stripped text's tokens.
struct Source {
    file: PathBuf,
    module: ModPath,
    toks: Vec<Token>,
}

/// Every `.rs` file under `dir`, with its module path.
fn sources(root: &Path, dir: &Path, skip: &Path, out: &mut Vec<Source>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(root, &p, skip, out);
        } else if p.extension().is_some_and(|x| x == "rs") && p != skip {
            let rel = p.strip_prefix(root).expect("under the root");
            let mut module: ModPath = rel
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod" || m == "lib") {
                module.pop();
            }
            let text = std::fs::read_to_string(&p).expect("readable source");
            out.push(Source {
                file: rel.to_owned(),
                module,
                toks: tokens(&strip(&text)),
            });
        }
    }
}

/// Paths into the crate named by `src`: (paths, whether each is in a
/// `pub use` at the file's top level).
fn named(src: &Source, modules: &HashSet<ModPath>) -> Vec<(Named, bool)> {
    let toks = &src.toks;
    let mut out = Vec::new();
    // Inline modules (`mod tests { ... }`) open at a brace depth.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    // Within a `pub use` at depth 0 (re-exports).
    let mut in_pub_use = false;
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i].text.as_str();
        let next = toks.get(i + 1).map(|t| t.text.as_str());
        let prev = i.checked_sub(1).map(|p| toks[p].text.as_str());
        match t {
            "{" => depth += 1,
            "}" => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            ";" => in_pub_use = false,
            "use" if depth == 0 && inline.is_empty() => {
                // `pub use`, `pub(crate) use`, `pub(super) use`.
                let back = |k: usize| i.checked_sub(k).map(|p| toks[p].text.as_str());
                in_pub_use = prev == Some("pub")
                    || (prev == Some(")") && back(3) == Some("(") && back(4) == Some("pub"));
            }
            "mod"
                if next.is_some_and(|n| is_ident(n.as_bytes()[0]))
                    && toks.get(i + 2).is_some_and(|t| t.text == "{") =>
            {
                inline.push((next.unwrap_or_default().to_owned(), depth));
            }
            _ => {}
        }
        let starts_path =
            next == Some("::") && !matches!(prev, Some("::" | ".")) && is_ident(t.as_bytes()[0]);
        if starts_path {
            let mut here = src.module.clone();
            here.extend(inline.iter().map(|(m, _)| m.clone()));
            // The module the path starts from, and where its segments start.
            let start = match t {
                "crate" => Some((Vec::new(), i + 2)),
                "self" => Some((here, i + 2)),
                "super" => {
                    let mut base = here;
                    let mut j = i;
                    base.pop();
                    while toks.get(j + 2).is_some_and(|t| t.text == "super")
                        && toks.get(j + 3).is_some_and(|t| t.text == "::")
                    {
                        base.pop();
                        j += 2;
                    }
                    Some((base, j + 2))
                }
                // A child module's name (2018 paths); anything else
                // (`std::`, `Self::`, a type) is not a path into the crate.
                child => {
                    let mut b = here.clone();
                    b.push(child.to_owned());
                    modules.contains(&b).then_some((here, i))
                }
            };
            if let Some((base, from)) = start {
                let mut found = Vec::new();
                i = read_path(toks, from, base, &mut found);
                out.extend(found.into_iter().map(|n| (n, in_pub_use)));
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Where each re-exported name of each module leads.
type Reexports = HashMap<ModPath, HashMap<String, ModPath>>;

/// The module that defines the item `path` names (following re-exports).
fn resolve(path: &[String], modules: &HashSet<ModPath>, reexports: &Reexports) -> ModPath {
    let mut path = path.to_vec();
    'follow: for _ in 0..16 {
        let mut cur: ModPath = Vec::new();
        for (k, seg) in path.iter().enumerate() {
            let mut next = cur.clone();
            next.push(seg.clone());
            if modules.contains(&next) {
                cur = next;
                continue;
            }
            if let Some(target) = reexports.get(&cur).and_then(|m| m.get(seg)) {
                let mut t = target.clone();
                t.extend(path[k + 1..].iter().cloned());
                path = t;
                continue 'follow;
            }
            return cur;
        }
        return cur;
    }
    path
}

/// Every upward or sideways reference in the crate under `root`, as
/// `file:line: ...` lines; errors in the table itself come first.
fn violations(root: &Path, table: &[Entry], skip: &Path) -> Vec<String> {
    let mut srcs = Vec::new();
    sources(root, root, skip, &mut srcs);
    let mut modules: HashSet<ModPath> = srcs.iter().map(|s| s.module.clone()).collect();
    for s in &srcs {
        for k in 1..s.module.len() {
            modules.insert(s.module[..k].to_vec());
        }
    }
    let mut found = Vec::new();
    for e in table {
        if !modules.contains(&e.module) {
            found.push(format!(
                "docs/ARCHITECTURE.md: the layer table names `{}`, which is not a module",
                e.module.join("::")
            ));
        }
    }
    let names: Vec<Vec<(Named, bool)>> = srcs.iter().map(|s| named(s, &modules)).collect();
    let mut reexports = Reexports::new();
    for (s, ns) in srcs.iter().zip(&names) {
        for (n, _) in ns.iter().filter(|(_, public)| *public) {
            if let Some(b) = &n.binding {
                let m = reexports.entry(s.module.clone()).or_default();
                m.insert(b.clone(), n.path.clone());
            }
        }
    }
    for (s, ns) in srcs.iter().zip(&names) {
        if s.module.is_empty() {
            continue; // lib.rs: the facade above every layer
        }
        let file = Path::new("runtime/src").join(&s.file);
        let Some(mine) = entry_of(table, &s.module) else {
            found.push(format!(
                "{}: module `{}` is in no layer of the table in docs/ARCHITECTURE.md",
                file.display(),
                s.module.join("::")
            ));
            continue;
        };
        for (n, _) in ns {
            let target = resolve(&n.path, &modules, &reexports);
            let Some(theirs) = entry_of(table, &target) else {
                continue;
            };
            if theirs.module == mine.module || theirs.layer < mine.layer {
                continue;
            }
            let how = if theirs.layer == mine.layer {
                "in the same layer"
            } else {
                "in a higher layer"
            };
            found.push(format!(
                "{}:{}: `{}` (layer {}) names `{}`, {how} ({}: `{}`)",
                file.display(),
                n.line,
                mine.module.join("::"),
                mine.layer + 1,
                n.path.join("::"),
                theirs.layer + 1,
                theirs.module.join("::"),
            ));
        }
    }
    found
}

fn layer_table() -> Vec<Entry> {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/ARCHITECTURE.md");
    let text = std::fs::read_to_string(&doc).expect("docs/ARCHITECTURE.md");
    parse_table(&text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn no_module_names_a_higher_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&root, &layer_table(), &root.join("layer_check.rs"));
    assert!(
        found.is_empty(),
        "modules name modules of their own or a higher layer (see the layer table in \
         docs/ARCHITECTURE.md; where a lower layer needs a callback, a trait in the lower \
         layer says so):\n{}",
        found.join("\n")
    );
}

#[test]
fn an_upward_reference_is_found_with_file_and_line() {
    let dir = std::env::temp_dir().join(format!("oxmpi-layer-check-{}", std::process::id()));
    let files = [
        (
            "lib.rs",
            "pub mod low;\npub mod high;\npub use high::Top;\n",
        ),
        (
            "low/mod.rs",
            "mod inner;\npub use inner::Thing;\n// crate::high in a comment is fine\n\
             const S: &str = \"crate::high\";\nfn f() -> crate::Top {\n    todo!()\n}\n",
        ),
        ("low/inner.rs", "pub struct Thing;\n"),
        (
            "high/mod.rs",
            "use crate::{low::{self, Thing}, low::inner};\npub struct Top;\n\
             #[cfg(test)]\nmod tests {\n    use super::super::low::Thing;\n}\n",
        ),
    ];
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("temp dir");
        std::fs::write(p, text).expect("temp file");
    }
    let layered = parse_table("```layers\nlow  # below\nhigh\n```\n").expect("a table");
    let upward = violations(&dir, &layered, Path::new(""));
    // One layer for both: each names the other, sideways.
    let flat = parse_table("```layers\nlow high\n```\n").expect("a table");
    let sideways = violations(&dir, &flat, Path::new(""));
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(
        upward,
        ["runtime/src/low/mod.rs:5: `low` (layer 1) names `Top`, in a higher layer (2: `high`)"],
        "only the real path (through the root's re-export) counts"
    );
    assert_eq!(sideways.len(), 5, "{sideways:#?}");
    assert!(sideways.iter().all(|f| f.contains("in the same layer")));
    assert!(sideways
        .iter()
        .any(|f| f.starts_with("runtime/src/high/mod.rs:5:")));
}

#[test]
fn comments_and_literals_are_blanked_keeping_lines() {
    let s = strip("a // crate::x\nb /* crate::y\n */ c \"crate::z\" r#\"crate::w\"# 'c' '\\'' crate::kept &'a T\n");
    assert_eq!(s.matches("crate").count(), 1, "{s}");
    assert!(s.contains("crate::kept"), "code after literals stays: {s}");
    assert_eq!(s.lines().count(), 3);
    assert!(s.contains("a T"), "a lifetime's name stays: {s}");
}
