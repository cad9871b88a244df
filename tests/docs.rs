//! The docs cannot drift from the code: every relative link in README.md and docs/ resolves
//! (anchors included, as GitHub slugs its headings), every documented helmdeck command line
//! parses with the current CLI, the settings file reference lists exactly the keys the config
//! accepts, and the recipes (the CI jobs, the FLIP-shaped helmdeck.toml) are what they claim.
//! Fast, no cluster: the Makefile recipe runs in the e2e suite (`recipes::`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use helmdeck::cli::{Cli, Command};
use helmdeck::config::{DeployPlan, FileConfig};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/.
fn doc_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "md") {
                out.push(path);
            }
        }
    }
    let mut files = vec![repo().join("README.md")];
    walk(&repo().join("docs"), &mut files);
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn shown(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A Markdown file taken apart: the prose lines (fenced blocks blanked, so line numbers
/// stay) and each fenced block with its language and first line number.
struct Markdown {
    prose: Vec<String>,
    blocks: Vec<Block>,
}

struct Block {
    lang: String,
    /// (1-based line number, text)
    lines: Vec<(usize, String)>,
}

fn parse_markdown(text: &str) -> Markdown {
    let mut prose = Vec::new();
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => {
                let lang = line.trim_start().trim_start_matches('`').trim().to_string();
                open = Some(Block {
                    lang,
                    lines: Vec::new(),
                });
                prose.push(String::new());
            }
            (Some(_), true) => {
                blocks.extend(open.take());
                prose.push(String::new());
            }
            (Some(block), false) => {
                block.lines.push((i + 1, line.to_string()));
                prose.push(String::new());
            }
            (None, false) => prose.push(line.to_string()),
        }
    }
    blocks.extend(open);
    Markdown { prose, blocks }
}

/// The inline code spans of the prose: (line of the opening backticks, the span's text with
/// its line breaks as spaces). A span may run over lines within a paragraph, never past a
/// blank line.
fn inline_code(prose: &[String]) -> Vec<(usize, String)> {
    let mut spans = Vec::new();
    let mut paragraph: Vec<(usize, &str)> = Vec::new();
    let mut flush = |paragraph: &mut Vec<(usize, &str)>| {
        let mut text = String::new();
        let mut line_of = Vec::new();
        for (n, line) in paragraph.iter() {
            for _ in 0..=line.chars().count() {
                line_of.push(*n);
            }
            text.push_str(line);
            text.push('\n');
        }
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] != '`' {
                i += 1;
                continue;
            }
            let run = chars[i..].iter().take_while(|c| **c == '`').count();
            let start = i + run;
            let mut j = start;
            let mut close = None;
            while j < chars.len() {
                if chars[j] == '`' {
                    let r = chars[j..].iter().take_while(|c| **c == '`').count();
                    if r == run {
                        close = Some(j);
                        break;
                    }
                    j += r;
                } else {
                    j += 1;
                }
            }
            match close {
                Some(end) => {
                    let body: String = chars[start..end].iter().collect();
                    let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
                    spans.push((line_of[i], body));
                    i = end + run;
                }
                None => i = start,
            }
        }
        paragraph.clear();
    };
    for (i, line) in prose.iter().enumerate() {
        if line.trim().is_empty() {
            flush(&mut paragraph);
        } else {
            paragraph.push((i + 1, line));
        }
    }
    flush(&mut paragraph);
    spans
}

/// The prose with its inline code spans removed (a `[--set K=V]` in code is no link).
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The `[text](target)` and `![alt](target)` targets of a prose line.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code(line);
    let mut targets = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].trim();
        // `[text](url "title")`
        let target = target.split_whitespace().next().unwrap_or("");
        targets.push(target.to_string());
        rest = &after[end..];
    }
    targets
}

/// A heading's anchor as GitHub makes it: the rendered text (code, links and emphasis
/// reduced to their text) lower-cased, every character but letters, digits, `-`, `_` and
/// spaces dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // A link renders as its text.
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(close), Some(end)) if close < end => {
                text.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor of a Markdown file, duplicates numbered as GitHub numbers them.
fn anchors(path: &Path) -> BTreeSet<String> {
    let md = parse_markdown(&read(path));
    let mut seen = BTreeSet::new();
    for line in &md.prose {
        let trimmed = line.trim_start();
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !trimmed[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(trimmed[hashes..].trim());
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// Why a relative link does not resolve, if it does not.
fn broken(from: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, anchor) = match target.split_once('#') {
        Some((file, anchor)) => (file, Some(anchor)),
        None => (target, None),
    };
    let path = if file.is_empty() {
        from.to_path_buf()
    } else {
        from.parent().expect("a file in a directory").join(file)
    };
    if !path.exists() {
        return Some(format!("{} does not exist", shown(&path)));
    }
    let anchor = anchor?;
    if path.extension().is_none_or(|x| x != "md") {
        return Some(format!(
            "#{anchor} points into {}, not Markdown",
            shown(&path)
        ));
    }
    let known = anchors(&path);
    (!known.contains(anchor)).then(|| {
        format!(
            "{} has no heading #{anchor} (its anchors: {})",
            shown(&path),
            known.into_iter().collect::<Vec<_>>().join(", ")
        )
    })
}

fn broken_links() -> Vec<String> {
    let mut problems = Vec::new();
    for file in doc_files() {
        let md = parse_markdown(&read(&file));
        for (i, line) in md.prose.iter().enumerate() {
            for target in link_targets(line) {
                if let Some(why) = broken(&file, &target) {
                    problems.push(format!("{}:{}: ({target}): {why}", shown(&file), i + 1));
                }
            }
        }
    }
    problems
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let problems = broken_links();
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

/// A shell word that ends the command helmdeck is given (a pipe, a redirection, a list).
fn ends_the_command(word: &str) -> bool {
    matches!(word, "|" | "||" | "&&" | ";" | "&")
        || word.starts_with('>')
        || word.starts_with('<')
        || word.starts_with("2>")
        || word.starts_with('|')
}

/// A usage synopsis rather than a command: `[…]`, `...`, `…`, `<…>`, or a placeholder word in
/// capitals (`RELEASE`, `FILE.json`, `K=V`); flags themselves never count.
fn is_synopsis(line: &str) -> bool {
    if ["[", "...", "…", "<"].iter().any(|s| line.contains(s)) {
        return true;
    }
    line.split_whitespace()
        .skip(1)
        .filter(|w| !w.starts_with('-'))
        .any(|word| {
            word.split(|c: char| !c.is_ascii_alphabetic())
                .any(|run| !run.is_empty() && run.chars().all(|c| c.is_ascii_uppercase()))
        })
}

/// Whether `line` (a helmdeck command, or `helm deck …`, which runs it) parses with the CLI.
fn check_command(line: &str) -> Result<(), String> {
    let words = shlex::split(line).ok_or("does not split into shell words")?;
    let mut args: Vec<String> = words
        .into_iter()
        .take_while(|w| !ends_the_command(w))
        .collect();
    if args.first().is_some_and(|w| w == "helm") && args.get(1).is_some_and(|w| w == "deck") {
        args.splice(0..2, ["helmdeck".to_string()]);
    }
    if args.first().is_none_or(|w| w != "helmdeck") {
        return Err("not a helmdeck command".into());
    }
    let cli = Cli::command();
    // `helmdeck watch` in prose names the command.
    if args.len() == 2 && !args[1].starts_with('-') {
        return match cli.find_subcommand(&args[1]) {
            Some(_) => Ok(()),
            None => Err(format!("no subcommand {:?}", args[1])),
        };
    }
    match cli.try_get_matches_from(&args) {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e.to_string().trim().replace('\n', " / ")),
    }
}

fn is_helmdeck_line(line: &str) -> bool {
    line.starts_with("helmdeck ") || line.starts_with("helm deck ")
}

/// The command lines of a shell script (backslash continuations joined; a `$ ` prompt off)
/// that run helmdeck: (line number, command).
fn script_commands(lines: &[(usize, String)]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (n, line) in lines {
        let (start, mut text) = match pending.take() {
            Some((start, text)) => (start, text + " " + line.trim()),
            None => (*n, line.trim().to_string()),
        };
        if let Some(rest) = text.strip_suffix('\\') {
            text = rest.trim_end().to_string();
            pending = Some((start, text));
            continue;
        }
        let command = text.strip_prefix("$ ").unwrap_or(&text).trim().to_string();
        if is_helmdeck_line(&command) {
            out.push((start, command));
        }
    }
    out
}

/// Every documented helmdeck command: (where, command). Shell blocks' lines, and inline code
/// that is not a usage synopsis.
fn documented_commands() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for file in doc_files() {
        let md = parse_markdown(&read(&file));
        for block in &md.blocks {
            if !matches!(block.lang.as_str(), "sh" | "bash" | "console" | "shell") {
                continue;
            }
            for (n, command) in script_commands(&block.lines) {
                out.push((format!("{}:{n}", shown(&file)), command));
            }
        }
        for (n, span) in inline_code(&md.prose) {
            if is_helmdeck_line(&span) && !is_synopsis(&span) {
                out.push((format!("{}:{n}", shown(&file)), span));
            }
        }
    }
    out
}

fn unparsable(commands: &[(String, String)]) -> Vec<String> {
    commands
        .iter()
        .filter_map(|(at, command)| {
            check_command(command)
                .err()
                .map(|why| format!("{at}: {command}\n    {why}"))
        })
        .collect()
}

#[test]
fn every_documented_helmdeck_command_parses_with_the_cli() {
    let commands = documented_commands();
    // The README's own examples are among them: an extractor that finds nothing passes nothing.
    assert!(
        commands
            .iter()
            .filter(|(at, _)| at.starts_with("README.md"))
            .count()
            >= 5,
        "{commands:#?}"
    );
    let problems = unparsable(&commands);
    assert!(
        problems.is_empty(),
        "documented commands the CLI refuses:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_command_check_refuses_what_the_cli_refuses() {
    assert!(check_command("helmdeck deploy web ./chart -n apps --headless").is_ok());
    assert!(check_command("helm deck deploy web ./chart --help").is_ok());
    assert!(check_command("helmdeck replay --list web | head").is_ok());
    assert!(check_command("helmdeck deploy web ./chart --no-such-flag").is_err());
    assert!(check_command("helmdeck deploy web").is_err());
    assert!(check_command("helmdeck deplyo").is_err());
    assert!(is_synopsis("helmdeck deploy RELEASE CHART"));
    assert!(is_synopsis("helmdeck replay FILE.ndjson"));
    assert!(!is_synopsis("helmdeck deploy web ./chart --set a=b"));
}

/// Slugs as GitHub makes them, for the headings this guide uses.
#[test]
fn slugs_follow_github() {
    assert_eq!(
        slug("Recovery: `--recover-lock`, `--rollback-on-failure`, `--test`"),
        "recovery---recover-lock---rollback-on-failure---test"
    );
    assert_eq!(
        slug("Bad input (exit 2, one line, no cluster request)"),
        "bad-input-exit-2-one-line-no-cluster-request"
    );
    assert_eq!(slug("Share a deploy: --cast"), "share-a-deploy---cast");
}

/// A deserializer that answers nothing but records the field names a struct asks for.
mod fields {
    use serde::de::{self, Visitor};

    #[derive(Debug)]
    pub enum Captured {
        Fields(&'static [&'static str]),
        Other(String),
    }

    impl std::fmt::Display for Captured {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                Captured::Fields(names) => write!(f, "fields {names:?}"),
                Captured::Other(message) => f.write_str(message),
            }
        }
    }

    impl std::error::Error for Captured {}

    impl de::Error for Captured {
        fn custom<T: std::fmt::Display>(msg: T) -> Self {
            Captured::Other(msg.to_string())
        }
    }

    pub struct Recorder;

    impl<'de> de::Deserializer<'de> for Recorder {
        type Error = Captured;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Captured> {
            Err(Captured::Other("not a struct".into()))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Captured> {
            Err(Captured::Fields(fields))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
}

/// The keys `helmdeck.toml` accepts: the serde struct's own field names, as renamed.
fn accepted_keys() -> BTreeSet<String> {
    use serde::Deserialize;
    match FileConfig::deserialize(fields::Recorder) {
        Err(fields::Captured::Fields(names)) => names.iter().map(|n| n.to_string()).collect(),
        other => panic!("FileConfig did not ask for a struct: {other:?}"),
    }
}

/// The keys docs/config.md's key reference lists (the first cell of each table row).
fn documented_keys() -> BTreeSet<String> {
    let text = read(&repo().join("docs/config.md"));
    let mut in_reference = false;
    let mut keys = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with('#') {
            in_reference = line.trim() == "## Key reference";
            continue;
        }
        if !in_reference {
            continue;
        }
        let Some(cell) = line.strip_prefix("| `") else {
            continue;
        };
        let key = cell.split('`').next().unwrap_or("");
        keys.insert(key.to_string());
    }
    keys
}

#[test]
fn the_settings_reference_lists_exactly_the_keys_the_config_accepts() {
    let accepted = accepted_keys();
    assert!(accepted.contains("init-toggle"), "{accepted:?}");
    let documented = documented_keys();
    let missing: Vec<_> = accepted.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&accepted).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "docs/config.md's key reference: not documented {missing:?}; not accepted {unknown:?}"
    );
}

/// `helmdeck deploy RELEASE CHART …` as the CLI parses it, planned by the real loader (which
/// reads CHART/helmdeck.toml).
fn load_plan(args: &[&str]) -> Result<DeployPlan, String> {
    let cli = <Cli as clap::Parser>::try_parse_from(args).map_err(|e| e.to_string())?;
    let Command::Deploy(deploy) = cli.command else {
        panic!("not a deploy: {args:?}");
    };
    DeployPlan::from_args(&deploy).map_err(|e| format!("{e:#}"))
}

/// The flip-like chart in a temporary directory, with `settings` as its helmdeck.toml.
fn flip_chart_with(settings: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let chart = repo().join("tests/charts/flip-like");
    let status = std::process::Command::new("cp")
        .arg("-R")
        .arg(chart.join("."))
        .arg(dir.path())
        .status()
        .expect("run cp");
    assert!(status.success());
    std::fs::write(dir.path().join("helmdeck.toml"), settings).expect("write helmdeck.toml");
    dir
}

#[test]
fn the_flip_recipe_settings_load_with_the_real_loader() {
    let settings = read(&repo().join("docs/recipes/helmdeck.toml"));
    let chart = flip_chart_with(&settings);
    let chart_path = chart.path().to_str().expect("a UTF-8 path");
    let plan = load_plan(&["helmdeck", "deploy", "trust-release", chart_path])
        .unwrap_or_else(|e| panic!("the recipe's helmdeck.toml: {e}"));
    assert_eq!(plan.init_toggle.as_deref(), Some("xnat.initJob.enabled"));
    assert_eq!(
        plan.init_job.as_deref(),
        Some("trust-release-flip-trust-xnat-init")
    );
    assert!(plan.init_selector.is_some());
    assert_eq!(plan.optional.len(), 1);
    assert_eq!(plan.timeout, std::time::Duration::from_secs(600));

    // The loader is the one that refuses what it does not know.
    let bad = flip_chart_with(&format!("{settings}\nno-such-key = true\n"));
    let err = load_plan(&[
        "helmdeck",
        "deploy",
        "trust-release",
        bad.path().to_str().expect("a UTF-8 path"),
    ])
    .expect_err("an unknown key is refused");
    assert!(err.contains("no-such-key"), "{err}");
}

fn yaml(path: &str) -> Value {
    serde_saphyr::from_str(&read(&repo().join(path)))
        .unwrap_or_else(|e| panic!("{path} is not YAML: {e}"))
}

/// The helmdeck commands of a CI file's shell snippets, each checked against the CLI.
fn ci_commands(path: &str, scripts: &[&str]) -> Vec<String> {
    let lines: Vec<(usize, String)> = scripts
        .iter()
        .flat_map(|s| s.lines().map(str::to_string).collect::<Vec<_>>())
        .enumerate()
        .collect();
    let commands: Vec<(String, String)> = script_commands(&lines)
        .into_iter()
        .map(|(_, c)| (path.to_string(), c))
        .collect();
    let problems = unparsable(&commands);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    commands.into_iter().map(|(_, c)| c).collect()
}

/// Every command keeps its report, JUnit file and record under names kept as artifacts.
fn assert_keeps(commands: &[String], artifacts: &[String]) {
    assert!(!commands.is_empty());
    for command in commands {
        let words = shlex::split(command).expect("shell words");
        for flag in ["--report", "--junit", "--record"] {
            let at = words
                .iter()
                .position(|w| w == flag)
                .unwrap_or_else(|| panic!("{flag} missing: {command}"));
            let file = &words[at + 1];
            assert!(
                artifacts.contains(file),
                "{flag} {file} is not kept as an artifact ({artifacts:?})"
            );
        }
        assert!(command.contains("--headless"), "{command}");
    }
}

/// Exactly one whole deploy, and one `--only init` to re-run the init step after exit 3.
fn assert_deploy_and_init(commands: &[String]) {
    let only_init = commands
        .iter()
        .filter(|c| c.contains("--only init"))
        .count();
    let whole = commands
        .iter()
        .filter(|c| c.starts_with("helmdeck deploy ") && !c.contains("--only"))
        .count();
    assert_eq!((whole, only_init), (1, 1), "{commands:#?}");
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => s.lines().map(|l| l.trim().to_string()).collect(),
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn the_github_actions_recipe_deploys_and_keeps_its_evidence() {
    let path = "docs/recipes/github-actions.yml";
    let doc = yaml(path);
    let steps = doc["jobs"]["deploy"]["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("{path}: no jobs.deploy.steps"));
    assert!(doc["jobs"]["deploy"]["runs-on"].is_string());
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    let commands = ci_commands(path, &runs);
    assert_deploy_and_init(&commands);

    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        })
        .unwrap_or_else(|| panic!("{path}: no upload-artifact step"));
    // Kept when the deploy failed too: the evidence of a failure is what matters most.
    assert_eq!(upload["if"], "${{ !cancelled() }}");
    let artifacts = strings(&upload["with"]["path"]);
    assert_keeps(&commands, &artifacts);

    let junit = steps
        .iter()
        .find(|s| s["with"]["report_paths"].is_string())
        .unwrap_or_else(|| panic!("{path}: no JUnit report step"));
    assert!(artifacts.contains(&junit["with"]["report_paths"].as_str().unwrap().to_string()));
    assert_eq!(junit["if"], "${{ !cancelled() }}");
}

/// A GitLab job with the keys of the templates it `extends` (one level, as the recipe uses).
fn gitlab_job(doc: &Value, name: &str) -> serde_json::Map<String, Value> {
    let job = doc[name]
        .as_object()
        .unwrap_or_else(|| panic!("no job {name}"))
        .clone();
    let mut merged = serde_json::Map::new();
    if let Some(base) = job.get("extends").and_then(Value::as_str) {
        merged.extend(
            doc[base]
                .as_object()
                .expect("the extended template")
                .clone(),
        );
    }
    merged.extend(job);
    merged
}

#[test]
fn the_gitlab_recipe_deploys_and_keeps_its_evidence() {
    let path = "docs/recipes/gitlab-ci.yml";
    let doc = yaml(path);
    let deploy = gitlab_job(&doc, "deploy");
    let init = gitlab_job(&doc, "xnat-init");
    let commands_of = |job: &serde_json::Map<String, Value>| {
        let scripts = strings(&job["script"]);
        ci_commands(
            path,
            &scripts.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    };
    let mut all = commands_of(&deploy);
    all.extend(commands_of(&init));
    assert_deploy_and_init(&all);
    assert_eq!(init["when"], "manual");
    // Exit 3 (live, init incomplete) is a warning, not a red pipeline; 1 and 2 stay failures.
    assert_eq!(
        deploy["allow_failure"]["exit_codes"],
        serde_json::json!([3])
    );

    for job in [&deploy, &init] {
        let artifacts = &job["artifacts"];
        assert_eq!(artifacts["when"], "always");
        let kept = strings(&artifacts["paths"]);
        let junit = artifacts["reports"]["junit"]
            .as_str()
            .expect("a JUnit report");
        assert!(kept.contains(&junit.to_string()), "{kept:?}");
        assert_keeps(&commands_of(job), &kept);
    }
}

/// The front page stays a front page: at most 200 lines, with the demo's recording and the
/// two quick-start commands (the test command is the one .ci/run calls).
#[test]
fn the_readme_is_short_and_starts_where_a_newcomer_starts() {
    let readme = read(&repo().join("README.md"));
    let lines = readme.lines().count();
    assert!(lines <= 200, "README.md has {lines} lines");
    assert!(readme.contains("](docs/demo.gif)"), "the recording");
    let md = parse_markdown(&readme);
    let quick: Vec<&str> = md
        .blocks
        .iter()
        .flat_map(|b| b.lines.iter().map(|(_, l)| l.as_str()))
        .collect();
    for command in ["cargo run --release -- demo", "scripts/test.sh"] {
        assert!(
            quick.iter().any(|l| l.contains(command)),
            "README.md's quick start lacks {command}"
        );
    }
    let ci = read(&repo().join(".ci/run"));
    assert!(ci.contains("scripts/test.sh"), "the test command CI calls");
}
