//! The architecture, checked on the source text of every crate in the workspace: no import
//! cycle between files, no source file of 40 KB or more, and the layer table (which top-level
//! module may name which; only `src/ui/` knows the terminal). std only: comments and literals
//! are blanked, the rest tokenized, and every `crate::`, `super::` or `self::` path (use trees
//! included) is resolved against the crate's module tree of files and inline `mod NAME {`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// The layer table: (crate the module lives in, top-level module, what it may import).
/// Names are the paths code uses (`crate::engine`), so a re-exported module (core's `glob`,
/// the product's `sim`) keeps its row whichever crate names it. Test code is exempt.
#[rustfmt::skip]
const LAYERS: &[(&str, &str, &str)] = &[
    // Leaves: shared by every layer, knowing none.
    ("helmdeck-formats", "text", ""),
    ("helmdeck-formats", "time", ""),
    ("helmdeck-formats", "glob", ""),
    ("helmdeck-core", "signals", ""),
    ("helmdeck-core", "cli", ""),
    ("helmdeck-core", "exit", ""),
    ("helmdeck-core", "advice", ""),
    // Files written whole or not at all (reports, JUnit, saved values).
    ("helmdeck-core", "atomic", "validate"),
    // Pure judgement and helm's formats (`helm::release` is helmdeck-formats' codec).
    ("helmdeck-core", "rollout", "glob"),
    ("helmdeck-core", "helm", "text time"),
    // The rules input is held to (helm parses its own --set flags).
    ("helmdeck-core", "validate", "helm text"),
    // Talking to Kubernetes.
    ("helmdeck-core", "cluster", "helm text time advice"),
    // The plan, then the engine that runs it.
    ("helmdeck-core", "config", "cli glob time text validate"),
    ("helmdeck-core", "engine", "atomic cli config glob helm rollout cluster text time advice validate exit"),
    ("helmdeck-core", "inspect", "cli cluster engine glob helm rollout text time advice record"),
    // Records of runs, read back for replay.
    ("helmdeck-core", "record", "engine helm text time"),
    // The allocator's pages handed back between follow passes (a leaf).
    ("helmdeck", "memory", ""),
    // Renderers: the formats CI reads, then the terminal.
    ("helmdeck", "junit", "atomic engine text validate"),
    ("helmdeck", "gha", "engine text"),
    ("helmdeck", "headless", "engine gha helm record text time signals"),
    ("helmdeck", "ui", "engine headless helm inspect memory record signals text time"),
];

/// Modules on top of everything, which may import anything.
const TOP: &[&str] = &["main", "demo", "lib"];
/// Packages the layer table is applied to; the others are kept apart by Cargo's dependencies.
const LAYERED: &[&str] = &["helmdeck", "helmdeck-core"];
/// Crates only `src/ui/` may name: the terminal belongs to the TUI.
const TERMINAL: &[&str] = &["ratatui", "crossterm"];
/// Past this a file is too big to read in one sitting.
const MAX_FILE_BYTES: u64 = 40 * 1024;

/// One source file of a crate.
struct Source {
    /// Relative to the crate's root directory (`engine/verdict.rs`): it names the module.
    rel: String,
    /// Relative to the workspace, for messages.
    shown: String,
    text: String,
}

/// A crate: a root file and the files reachable from it through `mod NAME;`.
struct Crate {
    name: String,
    package: String,
    root: String,
    files: Vec<Source>,
}

/// A character of an identifier or number, for the stripper and the tokenizer alike.
fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A token that can be a path segment.
fn is_ident(t: &str) -> bool {
    t.starts_with(|c: char| c.is_alphabetic() || c == '_')
}

/// Source text with comments and string/char literals replaced by spaces (newlines kept, so
/// line numbers survive): a path in a string is not an import, a `{` in a char literal does
/// not open a block.
fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        match skip_end(&c, i) {
            Some(end) => {
                let end = end.min(c.len());
                out.extend(
                    c[i..end]
                        .iter()
                        .map(|&x| if x == '\n' { '\n' } else { ' ' }),
                );
                i = end;
            }
            None => {
                out.push(c[i]);
                i += 1;
            }
        }
    }
    out
}

/// Where the comment or literal starting at `i` ends (exclusive), if one starts there.
fn skip_end(c: &[char], i: usize) -> Option<usize> {
    let at = |k: usize| c.get(k).copied().unwrap_or('\0');
    match (at(i), at(i + 1)) {
        ('/', '/') => Some((i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len())),
        ('/', '*') => Some(block_comment_end(c, i)),
        ('"', _) => Some(quoted_end(c, i + 1, '"')),
        ('\'', _) => char_literal_end(c, i),
        ('r' | 'b' | 'c', _) if i == 0 || !is_ident_char(c[i - 1]) => prefixed_literal_end(c, i),
        _ => None,
    }
}

/// The end of a block comment; they nest.
fn block_comment_end(c: &[char], i: usize) -> usize {
    let (mut depth, mut k) = (0, i);
    while k + 1 < c.len() {
        match (c[k], c[k + 1]) {
            ('/', '*') => depth += 1,
            ('*', '/') => depth -= 1,
            _ => {
                k += 1;
                continue;
            }
        }
        k += 2;
        if depth == 0 {
            return k;
        }
    }
    c.len()
}

/// The end of an escaped literal whose body starts at `k` and that `close` ends.
fn quoted_end(c: &[char], mut k: usize, close: char) -> usize {
    while k < c.len() {
        match c[k] {
            '\\' => k += 2,
            x if x == close => return k + 1,
            _ => k += 1,
        }
    }
    c.len()
}

/// A char literal (`'{'`, `'\''`, `'\u{7f}'`), or None for a lifetime or a label (`'a`).
fn char_literal_end(c: &[char], i: usize) -> Option<usize> {
    match (c.get(i + 1), c.get(i + 2)) {
        (Some('\\'), _) => Some(quoted_end(c, i + 1, '\'')),
        (Some(_), Some('\'')) => Some(i + 3),
        _ => None,
    }
}

/// Byte, C and raw strings (`b"…"`, `c"…"`, `r##"…"##`, `br"…"`); None for anything else
/// starting with those letters (an identifier, `r#raw_ident`, `b'x'`, which `'` handles).
fn prefixed_literal_end(c: &[char], i: usize) -> Option<usize> {
    let mut k = i + usize::from(c[i] != 'r');
    let raw = c.get(k) == Some(&'r');
    if !raw {
        return (c.get(k) == Some(&'"')).then(|| quoted_end(c, k + 1, '"'));
    }
    k += 1;
    let hashes = c[k..].iter().take_while(|&&x| x == '#').count();
    k += hashes;
    if c.get(k) != Some(&'"') {
        return None;
    }
    let close: Vec<char> = std::iter::once('"')
        .chain(std::iter::repeat_n('#', hashes))
        .collect();
    let end = (k + 1..c.len()).find(|&e| c[e..].starts_with(&close));
    Some(end.map_or(c.len(), |e| e + close.len()))
}

/// Splits stripped code into tokens, each with its 1-based line: identifiers (and numbers),
/// `::`, and single punctuation characters.
fn tokenize(code: &str) -> Vec<(String, usize)> {
    let c: Vec<char> = code.chars().collect();
    let (mut toks, mut line, mut i) = (Vec::new(), 1, 0);
    while i < c.len() {
        let len = match c[i] {
            x if x.is_whitespace() => 0,
            x if is_ident_char(x) => c[i..].iter().take_while(|&&x| is_ident_char(x)).count(),
            ':' if c.get(i + 1) == Some(&':') => 2,
            _ => 1,
        };
        if len == 0 {
            line += usize::from(c[i] == '\n');
            i += 1;
            continue;
        }
        toks.push((c[i..i + len].iter().collect(), line));
        i += len;
    }
    toks
}

/// A path found in code, as written, with where it was written.
struct Found {
    /// The segments, `crate`/`super`/`self` first, `*` last for a glob; groups expanded.
    segs: Vec<String>,
    /// The module it is written in, inline modules included: what `super::` climbs from.
    at: Vec<String>,
    line: usize,
    /// In test code: a `#[cfg(test)]` item (a test module, a helper), or a file only test
    /// code declares.
    test: bool,
}

/// What one file's code holds.
#[derive(Default)]
struct Scan {
    paths: Vec<Found>,
    /// Inline modules (`mod tests { … }`), as absolute module paths.
    inline: Vec<Vec<String>>,
    /// `mod NAME;` declarations: the child module, and whether test code declares it.
    decls: Vec<(Vec<String>, bool)>,
    /// Names of terminal crates, with their lines.
    terminal: Vec<(usize, String)>,
}

/// A `{ … }` block being scanned.
struct Frame {
    module: bool,
    test: bool,
}

/// The state of one pass over a file's tokens.
#[derive(Default)]
struct Scanner {
    toks: Vec<(String, usize)>,
    i: usize,
    at: Vec<String>,
    frames: Vec<Frame>,
    /// Nesting of `(`, `[` and `{`: where an item marked `#[cfg(test)]` ends.
    depth: usize,
    /// The depth of an item under `#[cfg(test)]` whose body has not opened yet.
    pending: Option<usize>,
    next_mod: Option<String>,
    file_test: bool,
    out: Scan,
}

/// Scans one file that holds module `module`.
fn scan(text: &str, module: &[String]) -> Scan {
    let (toks, at) = (tokenize(&strip(text)), module.to_vec());
    let mut s = Scanner {
        toks,
        at,
        ..Scanner::default()
    };
    while s.i < s.toks.len() {
        s.step();
    }
    s.out
}

impl Scanner {
    fn tok(&self, k: usize) -> &str {
        self.toks.get(k).map_or("", |t| t.0.as_str())
    }

    fn line(&self) -> usize {
        self.toks.get(self.i).map_or(0, |t| t.1)
    }

    /// Whether the current token is test code.
    fn test(&self) -> bool {
        self.file_test || self.pending.is_some() || self.frames.last().is_some_and(|f| f.test)
    }

    /// One token: blocks, attributes and `mod`s are tracked, paths handed to `tree`.
    fn step(&mut self) {
        let i = self.i;
        match self.tok(i) {
            "#" => return self.attribute(),
            "mod" if is_ident(self.tok(i + 1)) => return self.module(),
            "crate" | "super" | "self" if self.path_start(i) => return self.tree(Vec::new()),
            "{" => self.open(),
            "}" => self.close(),
            "(" | "[" => self.depth += 1,
            ")" | "]" => self.unnest(),
            ";" => self.end_item(),
            t if TERMINAL.contains(&t) => {
                let hit = (self.line(), t.to_string());
                self.out.terminal.push(hit);
            }
            _ => {}
        }
        self.i += 1;
    }

    /// A path starts here, unless it is the tail of another path or `pub(in crate::x)`,
    /// which is a visibility, not an import.
    fn path_start(&self, i: usize) -> bool {
        let before = |n: usize| if i >= n { self.tok(i - n) } else { "" };
        self.tok(i + 1) == "::"
            && before(1) != "::"
            && !(before(1) == "in" && before(2) == "(" && before(3) == "pub")
    }

    /// `#[cfg(test)]` marks the next item as test code, `#![cfg(test)]` the enclosing one.
    /// Other attributes are plain tokens.
    fn attribute(&mut self) {
        let inner = self.tok(self.i + 1) == "!";
        let from = self.i + 1 + usize::from(inner);
        let cfg_test = (from..from + 6).map(|k| self.tok(k));
        if !cfg_test.eq(["[", "cfg", "(", "test", ")", "]"]) {
            self.i += 1;
            return;
        }
        match (inner, self.frames.last_mut()) {
            (false, _) => self.pending = self.pending.or(Some(self.depth)),
            (true, Some(frame)) => frame.test = true,
            (true, None) => self.file_test = true,
        }
        self.i = from + 6;
    }

    /// `mod NAME;` declares a file module; `mod NAME {` opens an inline one.
    fn module(&mut self) {
        let name = self.tok(self.i + 1).to_string();
        if self.tok(self.i + 2) == "{" {
            self.next_mod = Some(name);
        } else {
            let child = [self.at.as_slice(), &[name]].concat();
            let test = self.test();
            self.out.decls.push((child, test));
        }
        self.i += 2;
    }

    /// A `;` or the `{` of its body ends the head of an item under `#[cfg(test)]`.
    fn end_item(&mut self) {
        if self.pending == Some(self.depth) {
            self.pending = None;
        }
    }

    /// A `{`: the body of an item under `#[cfg(test)]` is test code, and so is all inside.
    fn open(&mut self) {
        let test = self.test();
        self.end_item();
        let module = self.next_mod.take();
        if let Some(name) = &module {
            self.at.push(name.clone());
            self.out.inline.push(self.at.clone());
        }
        self.frames.push(Frame {
            module: module.is_some(),
            test,
        });
        self.depth += 1;
    }

    fn close(&mut self) {
        if self.frames.pop().is_some_and(|f| f.module) {
            self.at.pop();
        }
        self.unnest();
    }

    /// Leaving a nesting level ends a `#[cfg(test)]` item that started inside it.
    fn unnest(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        if self.pending.is_some_and(|d| self.depth < d) {
            self.pending = None;
        }
    }

    /// One path or use tree from `self.i` on, recording each leaf with `prefix` in front.
    fn tree(&mut self, mut prefix: Vec<String>) {
        let mut line = self.line();
        while is_ident(self.tok(self.i)) && self.tok(self.i) != "as" {
            prefix.push(self.tok(self.i).to_string());
            line = self.line();
            self.i += 1;
            if self.tok(self.i) != "::" {
                break;
            }
            match self.tok(self.i + 1) {
                "{" => {
                    self.i += 1;
                    return self.group(&prefix);
                }
                "*" => {
                    self.i += 2;
                    prefix.push("*".into());
                    return self.record(prefix, line);
                }
                _ => self.i += 1,
            }
        }
        if self.tok(self.i) == "as" {
            self.i += 2;
        }
        self.record(prefix, line);
    }

    /// A `{ … }` use group at `self.i`: each comma-separated tree under `prefix`. Always
    /// consumes through the closing brace, so blocks stay balanced.
    fn group(&mut self, prefix: &[String]) {
        self.i += 1;
        while self.i < self.toks.len() {
            match self.tok(self.i) {
                "}" => {
                    self.i += 1;
                    return;
                }
                "{" => self.group(prefix),
                "*" => {
                    let glob = [prefix, &["*".to_string()]].concat();
                    self.record(glob, self.line());
                    self.i += 1;
                }
                t if is_ident(t) => self.tree(prefix.to_vec()),
                _ => self.i += 1,
            }
        }
    }

    fn record(&mut self, segs: Vec<String>, line: usize) {
        if !segs.is_empty() {
            let (at, test) = (self.at.clone(), self.test());
            self.out.paths.push(Found {
                segs,
                at,
                line,
                test,
            });
        }
    }
}

/// The module a file holds: `engine/steps/init.rs` is `engine::steps::init`, `a/mod.rs` is
/// `a`, the root file is the crate.
fn module_of_file(rel: &str, root: &str) -> Vec<String> {
    let path = rel.trim_end_matches(".rs");
    let path = path.strip_suffix("/mod").unwrap_or(path);
    let segs = path.split('/').map(String::from);
    if rel == root {
        Vec::new()
    } else {
        segs.collect()
    }
}

/// A resolved path: what it names, and the file holding the longest module prefix of that.
struct Use {
    path: Found,
    abs: Vec<String>,
    to: Option<usize>,
}

/// A crate's files understood: modules, test-only files, resolved paths, terminal names.
struct Analysis {
    modules: Vec<Vec<String>>,
    uses: Vec<Vec<Use>>,
    terminal: Vec<Vec<(usize, String)>>,
}

/// The core of every check: scans each file, builds the module tree (files and inline
/// modules), and resolves every path against it.
fn analyze(k: &Crate) -> Analysis {
    let (mut modules, mut scans) = (Vec::new(), Vec::new());
    for file in &k.files {
        let module = module_of_file(&file.rel, &k.root);
        scans.push(scan(&file.text, &module));
        modules.push(module);
    }
    let mut owner: BTreeMap<Vec<String>, usize> = modules.iter().cloned().zip(0..).collect();
    for (f, s) in scans.iter().enumerate() {
        for m in &s.inline {
            owner.entry(m.clone()).or_insert(f);
        }
    }
    let file_test = test_files(&modules, &scans, &owner);
    let (mut uses, mut terminal) = (Vec::new(), Vec::new());
    for (s, in_test_file) in scans.into_iter().zip(file_test) {
        terminal.push(s.terminal);
        let resolved = s.paths.into_iter().filter_map(|mut path| {
            let (abs, to) = resolve(&path, &owner)?;
            path.test |= in_test_file;
            Some(Use { path, abs, to })
        });
        uses.push(resolved.collect());
    }
    Analysis {
        modules,
        uses,
        terminal,
    }
}

/// Which files are test-only: declared by test code (`#[cfg(test)] mod x;`) or by a test-only
/// file. Parents are settled first: their module paths are shorter.
fn test_files(
    modules: &[Vec<String>],
    scans: &[Scan],
    owner: &BTreeMap<Vec<String>, usize>,
) -> Vec<bool> {
    let mut order: Vec<usize> = (0..modules.len()).collect();
    order.sort_by_key(|&f| modules[f].len());
    let mut test = vec![false; modules.len()];
    for f in order {
        let m = &modules[f];
        let Some((_, parent)) = m.split_last() else {
            continue;
        };
        let Some(&p) = owner.get(parent) else {
            continue;
        };
        let declared = scans[p].decls.iter().any(|(c, t)| c == m && *t);
        test[f] = test[p] || declared;
    }
    test
}

/// The absolute path a path names, and the file holding its longest prefix that is a module
/// (none only in a synthetic crate without a root). None if `super::` climbs past the root.
fn resolve(
    p: &Found,
    owner: &BTreeMap<Vec<String>, usize>,
) -> Option<(Vec<String>, Option<usize>)> {
    let mut abs = p.at.clone();
    let mut segs = p.segs.iter().map(String::as_str).peekable();
    if segs.next_if_eq(&"crate").is_some() {
        abs.clear();
    }
    while let Some(s) = segs.next_if(|s| *s == "self" || *s == "super") {
        if s == "super" {
            abs.pop()?;
        }
    }
    abs.extend(segs.filter(|&s| s != "self" && s != "*").map(String::from));
    let to = (0..=abs.len()).rev().find_map(|n| owner.get(&abs[..n]));
    Some((abs, to.copied()))
}

/// The file graph: every edge F -> G (F ≠ G) with the uses that make it.
struct Graph<'a> {
    edges: BTreeMap<(usize, usize), Vec<&'a Use>>,
    adj: Vec<Vec<usize>>,
}

fn graph(a: &Analysis) -> Graph<'_> {
    let mut edges: BTreeMap<(usize, usize), Vec<&Use>> = BTreeMap::new();
    for (f, uses) in a.uses.iter().enumerate() {
        for u in uses {
            if let Some(to) = u.to.filter(|&t| t != f) {
                edges.entry((f, to)).or_default().push(u);
            }
        }
    }
    let mut adj = vec![Vec::new(); a.uses.len()];
    for &(f, g) in edges.keys() {
        adj[f].push(g);
    }
    Graph { edges, adj }
}

/// Depth-first from `v`, pushing each file once all it reaches is done (Kosaraju's order).
fn finish(adj: &[Vec<usize>], v: usize, seen: &mut [bool], out: &mut Vec<usize>) {
    if !std::mem::replace(&mut seen[v], true) {
        for &w in &adj[v] {
            finish(adj, w, seen, out);
        }
        out.push(v);
    }
}

/// Strongly connected components of more than one file (Kosaraju: finishing order on the
/// graph, then reachability on the reversed graph): each holds at least one import cycle.
fn cyclic_components(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = adj.len();
    let mut reversed = vec![Vec::new(); n];
    for (v, ws) in adj.iter().enumerate() {
        ws.iter().for_each(|&w| reversed[w].push(v));
    }
    let (mut seen, mut order) = (vec![false; n], Vec::new());
    (0..n).for_each(|v| finish(adj, v, &mut seen, &mut order));
    let (mut seen, mut found) = (vec![false; n], Vec::new());
    for &v in order.iter().rev() {
        let mut component = Vec::new();
        finish(&reversed, v, &mut seen, &mut component);
        component.sort_unstable();
        found.push(component);
    }
    found.retain(|c| c.len() > 1);
    found.sort();
    found
}

/// A shortest cycle through the component's first file, staying inside the component.
fn cycle_through(component: &[usize], adj: &[Vec<usize>]) -> Vec<usize> {
    let start = component[0];
    let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in &adj[v] {
            if w == start {
                let mut path = vec![v];
                while let Some(&p) = prev.get(path.last().unwrap_or(&start)) {
                    path.push(p);
                }
                path.reverse();
                return path;
            }
            if component.contains(&w) && !prev.contains_key(&w) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    vec![start]
}

/// One edge for the reader: the files, then each line that makes it.
fn describe_edge(k: &Crate, (from, to): (usize, usize), uses: &[&Use]) -> String {
    let mut s = format!("  {} -> {}\n", k.files[from].rel, k.files[to].rel);
    let mut lines: Vec<&&Use> = uses.iter().collect();
    lines.dedup_by_key(|u| u.path.line);
    for u in lines.iter().map(|u| &u.path) {
        let shown = &k.files[from].shown;
        s += &format!("      {shown}:{}  {}\n", u.line, u.segs.join("::"));
    }
    s
}

/// Every cycle of a crate, each as its files, one concrete cycle through it edge by edge,
/// and the component's other edges (any of which may be the one to cut).
fn cycle_reports(k: &Crate, a: &Analysis) -> Vec<String> {
    let g = graph(a);
    let mut reports = Vec::new();
    for component in cyclic_components(&g.adj) {
        let names: Vec<&str> = component.iter().map(|&f| k.files[f].rel.as_str()).collect();
        let mut s = format!("cycle in {}: {}\n", k.name, names.join(", "));
        let path = cycle_through(&component, &g.adj);
        let on_path: Vec<(usize, usize)> = (0..path.len())
            .map(|n| (path[n], path[(n + 1) % path.len()]))
            .collect();
        for edge in &on_path {
            s += &describe_edge(k, *edge, &g.edges[edge]);
        }
        let others = g.edges.iter().filter(|((f, t), _)| {
            component.contains(f) && component.contains(t) && !on_path.contains(&(*f, *t))
        });
        for (n, (edge, uses)) in others.enumerate() {
            s += ["", "  other edges inside it:\n"][usize::from(n == 0)];
            s += &describe_edge(k, *edge, uses);
        }
        reports.push(s);
    }
    reports
}

/// The layer a file is in: its top-level module, `lib` for a library root, `main` for a
/// binary's files.
fn layer_of<'a>(k: &Crate, module: &'a [String]) -> &'a str {
    match module.first() {
        _ if k.root == "main.rs" => "main",
        Some(m) => m,
        None => "lib",
    }
}

/// What the table lets `module` of `package` import, if the table has it.
fn allowed(package: &str, module: &str) -> Option<Vec<&'static str>> {
    let row = LAYERS
        .iter()
        .find(|(c, m, _)| *c == package && *m == module);
    row.map(|(_, _, may)| may.split_whitespace().collect())
}

/// Terminal crates named outside `src/ui/`, test code included: nothing else has a reason to.
fn terminal_violations(k: &Crate, a: &Analysis) -> Vec<String> {
    let mut found = Vec::new();
    for (f, file) in k.files.iter().enumerate() {
        let module = layer_of(k, &a.modules[f]);
        for (line, name) in a.terminal[f]
            .iter()
            .filter(|_| !file.shown.starts_with("src/ui/"))
        {
            found.push(format!(
                "{}:{line}: {module} may not import {name}",
                file.shown
            ));
        }
    }
    found
}

/// Every import the layer table forbids in a crate's non-test code, as
/// `file:line: MODULE may not import TARGET`; also terminal crates outside `src/ui/`.
fn layer_violations(k: &Crate, a: &Analysis) -> Vec<String> {
    let mut found = terminal_violations(k, a);
    if !LAYERED.contains(&k.package.as_str()) {
        return found;
    }
    let top_level: BTreeSet<&str> = a
        .modules
        .iter()
        .filter(|m| m.len() == 1)
        .map(|m| m[0].as_str())
        .collect();
    let known = |t: &str| top_level.contains(t) || LAYERS.iter().any(|(_, m, _)| *m == t);
    for (f, file) in k.files.iter().enumerate() {
        let module = layer_of(k, &a.modules[f]);
        let production: Vec<&Use> = a.uses[f].iter().filter(|u| !u.path.test).collect();
        if TOP.contains(&module) || production.is_empty() {
            continue;
        }
        let (shown, may) = (&file.shown, allowed(&k.package, module));
        let Some(may) = may else {
            found.push(format!(
                "{shown}:1: module {module} is not in the layer table"
            ));
            continue;
        };
        for (u, target) in production.iter().filter_map(|u| Some((u, u.abs.first()?))) {
            if target != module && known(target) && !may.contains(&target.as_str()) {
                let v = format!("{shown}:{}: {module} may not import {target}", u.path.line);
                if found.last() != Some(&v) {
                    found.push(v);
                }
            }
        }
    }
    found
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The file `mod NAME;` loads for module `child`: `a/b.rs`, else `a/b/mod.rs`.
fn child_file(dir: &Path, child: &[String]) -> String {
    let flat = format!("{}.rs", child.join("/"));
    if dir.join(&flat).is_file() {
        flat
    } else {
        format!("{}/mod.rs", child.join("/"))
    }
}

/// A crate read from disk: its root and every file reachable through `mod NAME;`, so a
/// binary's files and its library's are told apart by declaration, not by folder.
fn load_crate(name: &str, package: &str, dir: &str, root: &str) -> Crate {
    let base = workspace().join(dir);
    let mut files = Vec::new();
    let mut queue = VecDeque::from([root.to_string()]);
    while let Some(rel) = queue.pop_front() {
        let path = base.join(&rel);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {} (declared by `mod`): {e}", path.display()));
        for (child, _) in scan(&text, &module_of_file(&rel, root)).decls {
            queue.push_back(child_file(&base, &child));
        }
        let shown = format!("{dir}/{rel}");
        files.push(Source { rel, shown, text });
    }
    let (name, package, root) = (name.into(), package.into(), root.into());
    Crate {
        name,
        package,
        root,
        files,
    }
}

/// A directory's entries, sorted so reports come out in a stable order.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let listing = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .map(|e| e.expect("reading a directory entry").path());
    let mut paths: Vec<PathBuf> = listing.collect();
    paths.sort();
    paths
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The product: the root package's library and binary, and every crate under `crates/`.
fn product_crates() -> Vec<Crate> {
    let mut crates = vec![
        load_crate("helmdeck (lib)", "helmdeck", "src", "lib.rs"),
        load_crate("helmdeck (bin)", "helmdeck", "src", "main.rs"),
    ];
    for dir in entries(&workspace().join("crates")) {
        let package = file_name(&dir);
        let src = format!("crates/{package}/src");
        if dir.join("src/lib.rs").is_file() {
            crates.push(load_crate(&package, &package, &src, "lib.rs"));
        }
    }
    crates
}

/// Test and bench targets (`tests/x.rs`, `tests/x/main.rs`, and so in `benches/`): the cycle
/// rule covers all code.
fn target_crates() -> Vec<Crate> {
    let mut crates = Vec::new();
    for kind in ["tests", "benches"] {
        let dir = workspace().join(kind);
        if !dir.is_dir() {
            continue;
        }
        for path in entries(&dir) {
            let name = file_name(&path);
            let sub = format!("{kind}/{name}");
            if name.ends_with(".rs") {
                crates.push(load_crate(&sub, kind, kind, &name));
            } else if path.join("main.rs").is_file() {
                crates.push(load_crate(&sub, kind, &sub, "main.rs"));
            }
        }
    }
    crates
}

/// Every `.rs` file under `dir`, skipping build output and hidden folders.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for path in entries(dir) {
        let name = file_name(&path);
        if path.is_dir() && name != "target" && !name.starts_with('.') {
            rust_files(&path, out);
        } else if path.is_file() && name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_import_cycles_between_files() {
    let crates = product_crates().into_iter().chain(target_crates());
    let reports: Vec<String> = crates
        .flat_map(|k| cycle_reports(&k, &analyze(&k)))
        .collect();
    assert!(
        reports.is_empty(),
        "{} import cycle(s) between files; cut one edge of each:\n\n{}",
        reports.len(),
        reports.join("\n")
    );
}

/// Whether a file of `bytes` is past what one reads in one sitting.
fn too_big(bytes: u64) -> bool {
    bytes >= MAX_FILE_BYTES
}

#[test]
fn every_source_file_is_under_40_kb() {
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut over = Vec::new();
    for path in files {
        let meta = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("reading the size of {}: {e}", path.display()));
        if too_big(meta.len()) {
            let shown = path.strip_prefix(&root).unwrap_or(&path).display();
            over.push(format!("{shown}: {} bytes", meta.len()));
        }
    }
    assert!(
        over.is_empty(),
        "files of {MAX_FILE_BYTES} bytes or more; split them:\n{}",
        over.join("\n")
    );
}

#[test]
fn every_module_imports_only_what_its_layer_may() {
    let crates = product_crates();
    let found: Vec<String> = crates
        .iter()
        .flat_map(|k| layer_violations(k, &analyze(k)))
        .collect();
    assert!(
        found.is_empty(),
        "imports the layering (ARCHITECTURE.md) does not allow:\n{}",
        found.join("\n")
    );
}

/// Self-tests: the checks on synthetic crates, so a checker that sees nothing cannot pass.
mod self_tests {
    #[test]
    fn forty_kb_is_too_big_and_a_byte_less_is_not() {
        assert!(super::too_big(40 * 1024));
        assert!(!super::too_big(40 * 1024 - 1));
    }

    use super::*;

    /// A crate of in-memory files, rooted at `lib.rs` (which it may lack).
    fn krate(package: &str, files: &[(&str, &str)]) -> Crate {
        let file = |&(rel, text): &(&str, &str)| Source {
            rel: rel.into(),
            shown: rel.into(),
            text: text.into(),
        };
        let (name, root) = ("synthetic".into(), "lib.rs".into());
        let (package, files) = (package.into(), files.iter().map(file).collect());
        Crate {
            name,
            package,
            root,
            files,
        }
    }

    /// Each cycle's files, and every file edge (`from -> to`).
    fn graph_of(files: &[(&str, &str)]) -> (Vec<Vec<String>>, Vec<String>) {
        let k = krate("synthetic", files);
        let (a, rel) = (analyze(&k), |f: usize| k.files[f].rel.clone());
        let g = graph(&a);
        let cycles = cyclic_components(&g.adj).into_iter();
        let edges = g
            .edges
            .keys()
            .map(|&(f, t)| format!("{} -> {}", rel(f), rel(t)));
        (
            cycles.map(|c| c.into_iter().map(rel).collect()).collect(),
            edges.collect(),
        )
    }

    fn violations(files: &[(&str, &str)]) -> Vec<String> {
        let k = krate("helmdeck-core", files);
        layer_violations(&k, &analyze(&k))
    }

    #[test]
    fn a_planted_cycle_is_found() {
        let (cycles, _) = graph_of(&[("a.rs", "use crate::b::X;"), ("b.rs", "use crate::{a::Y};")]);
        assert_eq!(cycles, [["a.rs", "b.rs"]]);
    }

    #[test]
    fn a_super_edge_from_a_child_file_closes_a_cycle() {
        let files = [
            ("p.rs", "fn f() -> crate::p::q::Z {}"),
            ("p/q.rs", "use super::X;"),
        ];
        assert_eq!(graph_of(&files).0, [["p.rs", "p/q.rs"]]);
        let k = krate("synthetic", &files);
        let report = cycle_reports(&k, &analyze(&k)).concat();
        assert!(report.contains("p.rs:1  crate::p::q::Z\n"), "{report}");
        assert!(report.contains("p/q.rs:1  super::X\n"), "{report}");
    }

    #[test]
    fn paths_in_strings_comments_and_visibilities_are_not_imports() {
        let a = "let s = \"use crate::b::X\"; // use crate::b::X\n/* /* */ crate::b */ let c = '{';\n\
                 let r = r##\"crate::b::X\"# \"##; let q = '\\''; let b = b\"crate::b\";\n\
                 fn f<'a>(x: &'a str) {} pub(crate) fn g() {} pub(in crate::b) fn h() {}\n\
                 pub(super) struct S; mod inner { const C: char = '}'; }";
        let (cycles, edges) = graph_of(&[("a.rs", a), ("b.rs", "use crate::a::Y;")]);
        assert!(cycles.is_empty());
        assert_eq!(edges, ["b.rs -> a.rs"]);
        assert_eq!(scan(a, &["a".into()]).inline, [["a", "inner"]]);
    }

    #[test]
    fn super_inside_an_inline_test_module_is_the_same_file() {
        let y = "pub struct Z;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::Z;\n}";
        let (cycles, edges) = graph_of(&[("x.rs", "use crate::x::y::Z;"), ("x/y.rs", y)]);
        assert!(cycles.is_empty());
        assert_eq!(edges, ["x.rs -> x/y.rs"]);
    }

    #[test]
    fn nested_groups_reach_every_file() {
        let a = "use crate::{x::{A, y::B}};";
        let (_, edges) = graph_of(&[("a.rs", a), ("x.rs", ""), ("x/y.rs", "")]);
        assert_eq!(edges, ["a.rs -> x.rs", "a.rs -> x/y.rs"]);
    }

    #[test]
    fn a_forbidden_import_is_found_plain_grouped_or_through_super() {
        let plain = violations(&[("rollout.rs", "\nuse crate::engine::run;")]);
        assert_eq!(plain, ["rollout.rs:2: rollout may not import engine"]);
        let grouped = violations(&[("rollout.rs", "use crate::{glob::G, cluster::{C, D}};")]);
        assert_eq!(grouped, ["rollout.rs:1: rollout may not import cluster"]);
        let climbed = violations(&[("rollout/budget.rs", "use super::super::helm::X;")]);
        assert_eq!(
            climbed,
            ["rollout/budget.rs:1: rollout may not import helm"]
        );
    }

    #[test]
    fn only_test_code_may_break_the_table() {
        let code = "#[cfg(test)]\nmod tests {\n    use crate::engine::E;\n}\n\
                    #[cfg(test)]\nfn helper() -> crate::engine::F {}\nuse crate::cluster::C;";
        let found = violations(&[("rollout.rs", code)]);
        assert_eq!(found, ["rollout.rs:7: rollout may not import cluster"]);
        let files = [
            ("lib.rs", "pub mod rollout;"),
            ("rollout/mod.rs", "#[cfg(test)]\nmod tests;\nmod prod;"),
            ("rollout/tests.rs", "use crate::engine::E;"),
            ("rollout/prod.rs", "use crate::engine::E;"),
        ];
        let found = violations(&files);
        assert_eq!(found, ["rollout/prod.rs:1: rollout may not import engine"]);
    }

    #[test]
    fn the_terminal_is_named_only_in_code() {
        let code = "// ratatui\nlet s = \"crossterm\";\nuse ratatui::Frame;";
        let found = violations(&[("helm.rs", code)]);
        assert_eq!(found, ["helm.rs:3: helm may not import ratatui"]);
    }
}
