//! CI and the ecosystem: the JUnit file (`--junit`), parsed back and checked for every element
//! and attribute CI reporters read; the GitHub Actions annotations and job summary; the helm
//! plugin with the real helm; shell completions and the man page.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use quick_xml::events::Event;
use quick_xml::{Reader, XmlVersion};

use crate::support::{DeployRun, Sim, finish, repo, text, tool, with_init};

/// One XML element as the checks need it.
#[derive(Debug, Default)]
struct Node {
    name: String,
    attrs: BTreeMap<String, String>,
    text: String,
    children: Vec<Node>,
}

impl Node {
    fn attr(&self, key: &str) -> &str {
        self.attrs
            .get(key)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("<{}> has no {key}: {:?}", self.name, self.attrs))
    }

    fn number(&self, key: &str) -> f64 {
        let value = self.attr(key);
        value
            .parse()
            .unwrap_or_else(|_| panic!("<{}> {key}={value:?} is not a number", self.name))
    }

    fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }
}

fn node(e: &quick_xml::events::BytesStart) -> Node {
    Node {
        name: e.name().as_ref().to_string(),
        attrs: e
            .attributes()
            .map(|a| {
                let a = a.expect("a well-formed attribute");
                (
                    a.key.as_ref().to_string(),
                    a.normalized_value(XmlVersion::Explicit1_0)
                        .expect("an escaped value")
                        .into_owned(),
                )
            })
            .collect(),
        ..Node::default()
    }
}

/// The document's root element, read with a maintained XML parser (quick-xml): a file that is
/// not well-formed fails here.
fn parse(xml: &str) -> Node {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().check_end_names = true;
    let mut stack: Vec<Node> = vec![Node::default()];
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => stack.push(node(&e)),
            Event::Empty(e) => stack.last_mut().expect("a parent").children.push(node(&e)),
            Event::Text(t) => {
                let t = t.xml10_content();
                stack.last_mut().expect("a parent").text.push_str(&t);
            }
            // Entities come apart from the text around them.
            Event::GeneralRef(r) => {
                let entity = format!("&{};", r.xml10_content());
                let t = quick_xml::escape::unescape(&entity).expect("a predefined entity");
                stack.last_mut().expect("a parent").text.push_str(&t);
            }
            Event::End(_) => {
                let done = stack.pop().expect("an open element");
                stack.last_mut().expect("a parent").children.push(done);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let mut top = stack.pop().expect("the document");
    assert!(stack.is_empty(), "unclosed elements");
    assert_eq!(top.children.len(), 1, "one root element");
    top.children.remove(0)
}

/// What a testcase says: passed, failure, error or skipped, with the message.
fn status(case: &Node) -> (&'static str, String) {
    for (name, said) in [
        ("failure", "failure"),
        ("error", "error"),
        ("skipped", "skipped"),
    ] {
        if let Some(c) = case.child(name) {
            return (said, c.attrs.get("message").cloned().unwrap_or_default());
        }
    }
    ("passed", String::new())
}

/// Checks every element and attribute the reporters of Jenkins, GitLab and GitHub read (the
/// shape of Jenkins' JUnit schema: testsuites > testsuite > testcase > failure|error|skipped,
/// system-out) and that the counts agree with the cases. Returns each case by
/// `classname/name`.
fn check_junit(path: &Path) -> (String, BTreeMap<String, (&'static str, String, String)>) {
    let xml = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"),
        "{xml}"
    );
    let root = parse(&xml);
    assert_eq!(root.name, "testsuites", "{xml}");
    let mut cases = BTreeMap::new();
    let mut totals = [0.0; 4];
    for suite in &root.children {
        assert_eq!(suite.name, "testsuite", "{xml}");
        assert!(!suite.attr("name").is_empty());
        assert!(suite.number("time") >= 0.0);
        let mut counts = [0.0; 4];
        for case in &suite.children {
            assert_eq!(case.name, "testcase", "{xml}");
            assert!(!case.attr("name").is_empty() && !case.attr("classname").is_empty());
            assert!(case.number("time") >= 0.0, "{xml}");
            for child in &case.children {
                assert!(
                    ["failure", "error", "skipped", "system-out"].contains(&child.name.as_str()),
                    "unexpected <{}> in {xml}",
                    child.name
                );
                if child.name == "failure" || child.name == "error" {
                    assert!(!child.attr("message").is_empty(), "{xml}");
                    assert!(!child.attr("type").is_empty(), "{xml}");
                }
            }
            let (said, message) = status(case);
            counts[0] += 1.0;
            match said {
                "failure" => counts[1] += 1.0,
                "error" => counts[2] += 1.0,
                "skipped" => counts[3] += 1.0,
                _ => {}
            }
            let out = case
                .child("system-out")
                .map(|o| o.text.clone())
                .unwrap_or_default();
            let key = format!("{}/{}", case.attr("classname"), case.attr("name"));
            assert!(
                cases.insert(key.clone(), (said, message, out)).is_none(),
                "{key} twice"
            );
        }
        for (i, key) in ["tests", "failures", "errors", "skipped"]
            .iter()
            .enumerate()
        {
            assert_eq!(suite.number(key), counts[i], "{key} of {xml}");
            totals[i] += counts[i];
        }
    }
    for (i, key) in ["tests", "failures", "errors", "skipped"]
        .iter()
        .enumerate()
    {
        assert_eq!(root.number(key), totals[i], "{key} of {xml}");
    }
    assert!(root.number("time") >= 0.0);
    (xml, cases)
}

/// `helmdeck deploy … --junit <home>/junit.xml`, with the environment given.
fn deploy(sim: &Sim, extra: &[&str], env: &[(&str, &Path)]) -> (DeployRun, PathBuf) {
    let junit = sim.home().join("junit.xml");
    let report = sim.home().join("report.json");
    let mut args = vec!["--junit", junit.to_str().expect("a UTF-8 path")];
    args.extend_from_slice(extra);
    let mut cmd = sim.deploy_command(&report, &args);
    cmd.env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = Instant::now();
    let out = cmd.output().expect("run helmdeck");
    (finish(out, &report, started), junit)
}

const STEPS: &str = "helmdeck.demo.steps";

#[test]
fn junit_of_a_landed_deploy_passes_every_gating_case_and_annotates_on_github() {
    let sim = Sim::start("all-green");
    let summary = sim.home().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let (run, junit) = deploy(
        &sim,
        &with_init(&["--timeout", "60s"]),
        &[
            ("GITHUB_ACTIONS", Path::new("true")),
            ("GITHUB_STEP_SUMMARY", &summary),
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let (xml, cases) = check_junit(&junit);
    for step in ["preflight", "upgrade", "rollout", "init"] {
        assert_eq!(cases[&format!("{STEPS}/{step}")].0, "passed", "{xml}");
    }
    assert_eq!(
        cases["helmdeck.demo.workloads/Deployment/demo-web"].0,
        "passed"
    );
    assert_eq!(cases["helmdeck.demo.verdict/verdict"].0, "passed");
    assert!(
        cases["helmdeck.demo.verdict/verdict"]
            .2
            .starts_with("verdict: LANDED (exit 0)")
    );
    // The annotation follows the verdict lines, one line, the title's `:` escaped.
    let notice = run
        .stdout
        .lines()
        .find(|l| l.starts_with("::"))
        .unwrap_or_else(|| panic!("no annotation: {}", run.describe()));
    assert!(
        notice.starts_with("::notice title=helmdeck demo%3A LANDED (exit 0)::"),
        "{notice}"
    );
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(
        summary.starts_with("earlier step\n## helmdeck · demo in apps\n"),
        "appended: {summary}"
    );
    assert!(summary.contains("**LANDED** (exit 0)"), "{summary}");
    assert!(summary.contains("| init | ✓ succeeded |"), "{summary}");
}

/// (That no value reaches the JUnit file or the summary is
/// `record::values_never_reach_the_record_the_stream_the_junit_file_or_the_job_summary`, with
/// a chart that does show its password live.)
#[test]
fn junit_of_a_rollout_failure_names_the_workload() {
    let sim = Sim::start("crashloop");
    let summary = sim.home().join("summary.md");
    let (run, junit) = deploy(
        &sim,
        &["--timeout", "8s"],
        &[
            ("GITHUB_ACTIONS", Path::new("true")),
            ("GITHUB_STEP_SUMMARY", &summary),
        ],
    );
    assert_eq!(run.code, Some(1), "{}", run.describe());
    let (xml, cases) = check_junit(&junit);
    assert_eq!(cases[&format!("{STEPS}/rollout")].0, "failure", "{xml}");
    assert_eq!(cases[&format!("{STEPS}/init")].0, "skipped", "{xml}");
    let (said, message, _) = &cases["helmdeck.demo.workloads/Deployment/demo-web"];
    assert_eq!(*said, "failure", "{xml}");
    assert!(!message.is_empty());
    assert!(
        xml.contains("CrashLoopBackOff"),
        "the evidence is in the file: {xml}"
    );
    assert_eq!(cases["helmdeck.demo.verdict/verdict"].0, "failure");
    // Every problem and the verdict as ::error lines; the verdict's last.
    let annotations: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert!(annotations.len() >= 2, "{}", run.describe());
    assert!(annotations.iter().all(|l| l.starts_with("::error title=")));
    assert!(
        annotations
            .last()
            .is_some_and(|l| l.starts_with("::error title=helmdeck demo%3A FAILED (exit 1)::")),
        "{annotations:?}"
    );
    assert!(annotations.iter().any(|l| l.contains("CrashLoopBackOff")));
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(summary.contains("| rollout | ✗ failed |"), "{summary}");
    assert!(summary.contains("### Problems"), "{summary}");
}

#[test]
fn junit_of_an_init_failure_fails_the_init_case_with_the_jobs_words() {
    let sim = Sim::start("init-fails");
    let (run, junit) = deploy(&sim, &with_init(&["--timeout", "60s"]), &[]);
    assert_eq!(run.code, Some(3), "{}", run.describe());
    let (xml, cases) = check_junit(&junit);
    assert_eq!(cases[&format!("{STEPS}/rollout")].0, "passed", "{xml}");
    assert_eq!(cases[&format!("{STEPS}/init")].0, "failure", "{xml}");
    assert!(xml.contains("connect: connection refused"), "{xml}");
    assert!(xml.contains("type=\"live-init-incomplete\""), "{xml}");
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("::")),
        "no annotations outside GitHub Actions"
    );
}

#[test]
fn a_bad_junit_path_is_refused_before_the_cluster() {
    let sim = Sim::start("all-green");
    let out = sim
        .deploy_command(
            &sim.home().join("r.json"),
            &["--junit", "/nonexistent-dir/j.xml"],
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .contains("--junit /nonexistent-dir/j.xml: directory /nonexistent-dir does not exist"),
        "{stderr}"
    );
    assert_eq!(sim.get_json("/_sim/stats")["requests"], 1);
}

/// helm with its data, config and cache in a fresh directory.
fn helm(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(tool("helm"));
    cmd.args(args)
        .env("HOME", home)
        .env("HELM_DATA_HOME", home.join("data"))
        // helm 4.1 installs into HELM_DATA_HOME/plugins whatever HELM_PLUGINS says, and loads
        // from HELM_PLUGINS: point both at the same place.
        .env("HELM_PLUGINS", home.join("data/plugins"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("KUBECONFIG", home.join("no-kubeconfig"))
        .env_remove("HELM_NAMESPACE")
        .env_remove("HELM_KUBECONTEXT");
    cmd
}

fn run(mut cmd: Command) -> Output {
    cmd.output().expect("run helm")
}

#[test]
fn helm_deck_runs_helmdeck_after_helm_plugin_install_from_the_checkout() {
    let home = tempfile::tempdir().unwrap();
    let installed = run(helm(
        home.path(),
        &["plugin", "install", repo().to_str().unwrap()],
    ));
    assert!(installed.status.success(), "{}", text(&installed));
    let mut deck = helm(home.path(), &["deck", "deploy", "--help"]);
    deck.env("HELMDECK_BIN", env!("CARGO_BIN_EXE_helmdeck"));
    let help = run(deck);
    assert_eq!(help.status.code(), Some(0), "{}", text(&help));
    let said = String::from_utf8_lossy(&help.stdout);
    assert!(
        said.contains("Usage: helmdeck deploy [OPTIONS] <RELEASE> <CHART>"),
        "{said}"
    );
    // helm keeps -n for itself; the wrapper hands it back, so helmdeck's own check sees it.
    let mut bad = helm(
        home.path(),
        &["deck", "deploy", "demo", "/nonexistent", "-n", "Bad_NS"],
    );
    bad.env("HELMDECK_BIN", env!("CARGO_BIN_EXE_helmdeck"));
    let bad = run(bad);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(
        text(&bad).contains("namespace \"Bad_NS\" is invalid"),
        "{}",
        text(&bad)
    );
    // No binary anywhere: one clear line, exit 2.
    let mut missing = helm(home.path(), &["deck", "deploy", "--help"]);
    missing
        .env("HELMDECK_BIN", home.path().join("no-such-helmdeck"))
        .env("PATH", "/usr/bin:/bin");
    let missing = run(missing);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    assert!(
        text(&missing).contains("helm deck: the helmdeck binary is not installed"),
        "{}",
        text(&missing)
    );
}

/// helm keeps `-n` and `--kube-context` for itself; the wrapper hands them back to `watch` as
/// to `deploy` and `inspect`. The release lives only in `other` (the context's namespace is
/// `apps`), and the kubeconfig's current context points at a closed port: a watch that lost
/// either flag waits on `apps` or cannot reach the cluster, and ends 1.
#[test]
fn helm_deck_watch_gets_the_namespace_and_context_helm_took() {
    let sim = Sim::start_yaml("namespaces: [apps, other]\n");
    let installed = sim.helm(&[
        "upgrade",
        "--install",
        "demo",
        crate::support::chart().to_str().unwrap(),
        "-n",
        "other",
        "--timeout",
        "60s",
    ]);
    assert!(installed.status.success(), "{}", text(&installed));
    let kubeconfig = sim.home().join("two-contexts");
    let sim_config = std::fs::read_to_string(&sim.kubeconfig).unwrap();
    let two = sim_config
        .replace(
            "contexts:\n",
            "contexts:\n- name: elsewhere\n  context:\n    cluster: nowhere\n    user: helmdeck-sim\n",
        )
        .replace(
            "clusters:\n",
            "clusters:\n- name: nowhere\n  cluster:\n    server: http://127.0.0.1:1\n",
        )
        .replace("current-context: helmdeck-sim", "current-context: elsewhere");
    assert_ne!(two, sim_config, "the kubeconfig's layout changed");
    std::fs::write(&kubeconfig, two).unwrap();
    let home = tempfile::tempdir().unwrap();
    let installed = run(helm(
        home.path(),
        &["plugin", "install", repo().to_str().unwrap()],
    ));
    assert!(installed.status.success(), "{}", text(&installed));
    let mut watch = helm(
        home.path(),
        &[
            "deck",
            "watch",
            "demo",
            "-n",
            "other",
            "--kube-context",
            "helmdeck-sim",
            "--headless",
            "--timeout",
            "20s",
        ],
    );
    watch
        .env("HELMDECK_BIN", env!("CARGO_BIN_EXE_helmdeck"))
        .env("KUBECONFIG", &kubeconfig)
        .env("XDG_STATE_HOME", home.path().join("state"));
    let watched = run(watch);
    let said = text(&watched);
    assert_eq!(watched.status.code(), Some(0), "{said}");
    assert!(
        said.contains("watching release demo in other"),
        "the namespace helm took: {said}"
    );
    assert!(said.contains("revision 1 is deployed"), "{said}");
    // demo, replay and sim never get them: `-n` there is helm's alone.
    let script = std::fs::read_to_string(repo().join("scripts/helm-deck.sh")).unwrap();
    let handed = script
        .lines()
        .find(|l| l.trim_start().starts_with("deploy |"))
        .unwrap_or_else(|| panic!("no case line for the handed-back commands:\n{script}"));
    for never in ["demo", "replay", "sim"] {
        assert!(!handed.contains(never), "{handed}");
    }
    let manifest = std::fs::read_to_string(repo().join("plugin.yaml")).unwrap();
    let usage = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("usage:"))
        .unwrap_or_else(|| panic!("no usage line:\n{manifest}"));
    assert!(
        usage.contains("watch") && usage.contains("deploy, watch and inspect only"),
        "{usage}"
    );
}

fn helmdeck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_helmdeck"))
        .args(args)
        .output()
        .expect("run helmdeck")
}

#[test]
fn bash_completions_are_generated_and_parse() {
    let out = helmdeck(&["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let script = String::from_utf8(out.stdout).unwrap();
    assert!(script.contains("complete -F _helmdeck"), "{script}");
    assert!(script.contains("--junit"), "deploy's flags are completed");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("helmdeck.bash");
    std::fs::write(&file, &script).unwrap();
    let checked = Command::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(checked.status.success(), "{}", text(&checked));
    for shell in ["zsh", "fish"] {
        let out = helmdeck(&["completions", shell]);
        assert!(out.status.success() && !out.stdout.is_empty(), "{shell}");
    }
}

#[test]
fn the_man_page_renders() {
    let out = helmdeck(&["man"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let roff = String::from_utf8(out.stdout).unwrap();
    assert!(roff.contains(".TH helmdeck 1"), "{roff}");
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("helmdeck.1");
    std::fs::write(&page, &roff).unwrap();
    // man(1) where the machine has it; the roff itself is checked either way.
    if let Ok(rendered) = Command::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "80")
        .output()
    {
        assert!(rendered.status.success(), "{}", text(&rendered));
        let said = String::from_utf8_lossy(&rendered.stdout);
        assert!(said.contains("helmdeck"), "{said}");
        assert!(said.contains("deploy"), "{said}");
    }
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages).unwrap();
    let out = helmdeck(&["man", "--out-dir", pages.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(pages.join("helmdeck-deploy.1").is_file());
}
