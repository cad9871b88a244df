//! Test support: start a simulator process and run real helm/kubectl against it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn chart() -> PathBuf {
    repo().join("assets/demo-chart")
}

/// A real client binary from `.tools/bin` (installed by scripts/install-tools.sh).
pub fn tool(name: &str) -> PathBuf {
    let path = repo().join(".tools/bin").join(name);
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-tools.sh (the README's test command does)",
        path.display()
    );
    path
}

/// How many simulators (each with its helm and helmdeck processes) a test that runs a table of
/// cases keeps going at once: the machine is shared with the rest of the suite.
pub const E2E_PARALLEL: usize = 3;

/// The CI-detection variables helmdeck reads (src/headless.rs), removed from every child.
pub const CI_ENV: [&str; 2] = ["GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"];

/// The environment variable that points the real-cluster subset at a cluster of the user's.
pub const REAL_CLUSTER: &str = "HELMDECK_E2E_KUBECONFIG";

/// A running `helmdeck sim` process, killed on drop; or, for the real-cluster subset, a
/// namespace of its own on the cluster `HELMDECK_E2E_KUBECONFIG` names, deleted on drop.
pub struct Sim {
    child: Option<Child>,
    pub url: String,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
    /// The release namespace the deploy helpers use: `apps` on a simulator.
    pub namespace: String,
}

impl Sim {
    pub fn start(scenario: &str) -> Sim {
        Sim::start_in(tempfile::tempdir().expect("temp dir"), scenario)
    }

    /// A test that needs no fault injection: the cluster `HELMDECK_E2E_KUBECONFIG` names when
    /// it is set (in a fresh namespace, removed at the end), else a simulator on `scenario`.
    pub fn portable(scenario: &str) -> Sim {
        let Some(kubeconfig) = std::env::var_os(REAL_CLUSTER).filter(|v| !v.is_empty()) else {
            return Sim::start(scenario);
        };
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let namespace = format!("helmdeck-e2e-{}-{n}", std::process::id());
        let cluster = Sim {
            child: None,
            url: String::new(),
            dir: tempfile::tempdir().expect("temp dir"),
            kubeconfig: PathBuf::from(kubeconfig),
            namespace,
        };
        let out = cluster.kubectl(&["create", "namespace", &cluster.namespace]);
        assert!(
            out.status.success(),
            "kubectl create namespace: {}",
            text(&out)
        );
        cluster
    }

    /// Whether this runs against a cluster given by `HELMDECK_E2E_KUBECONFIG`.
    pub fn is_real(&self) -> bool {
        self.child.is_none()
    }

    /// A sim on a scenario given as YAML text, written into the sim's own directory.
    pub fn start_yaml(yaml: &str) -> Sim {
        let dir = tempfile::tempdir().expect("temp dir");
        let scenario = dir.path().join("scenario.yaml");
        std::fs::write(&scenario, yaml).expect("write scenario");
        Sim::start_in(dir, scenario.to_str().unwrap())
    }

    /// A sim whose kubeconfig names its context `context` (cluster and user alike), so
    /// several such files listed in one `KUBECONFIG` make a fleet of clusters.
    pub fn start_as(scenario: &str, context: &str) -> Sim {
        let dir = tempfile::tempdir().expect("temp dir");
        let scenario = match scenario.strip_prefix("yaml:") {
            Some(yaml) => {
                let path = dir.path().join("scenario.yaml");
                std::fs::write(&path, yaml).expect("write scenario");
                path.display().to_string()
            }
            None => scenario.to_string(),
        };
        Sim::spawn(dir, &scenario, Some(context))
    }

    fn start_in(dir: tempfile::TempDir, scenario: &str) -> Sim {
        Sim::spawn(dir, scenario, None)
    }

    fn spawn(dir: tempfile::TempDir, scenario: &str, context: Option<&str>) -> Sim {
        if std::env::var_os(REAL_CLUSTER).is_some_and(|v| !v.is_empty()) {
            // Said once per test, so a run against a real cluster shows which tests it did not
            // cover there.
            eprintln!(
                "{REAL_CLUSTER} is set, but {} needs the simulator's scenarios (fault injection): it runs on its own simulator",
                std::thread::current().name().unwrap_or("this test")
            );
        }
        let kubeconfig = dir.path().join("kubeconfig");
        let mut child = Command::new(env!("CARGO_BIN_EXE_helmdeck"))
            .args([
                "sim",
                "--scenario",
                scenario,
                "--listen",
                "127.0.0.1:0",
                "--kubeconfig-out",
            ])
            .arg(&kubeconfig)
            .args(context.map(|c| ["--context", c]).into_iter().flatten())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn helmdeck sim");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read ready line");
        let url = line
            .strip_prefix("ready ")
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("unexpected first line from sim: {line:?}"))
            .to_string();
        Sim {
            child: Some(child),
            url,
            dir,
            kubeconfig,
            namespace: "apps".into(),
        }
    }

    pub fn home(&self) -> &Path {
        self.dir.path()
    }

    /// `program args` with this simulator's client environment: its kubeconfig, a private HOME
    /// and helm directories, and no helm settings inherited from the caller.
    pub fn client_command(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(program);
        let home = self.home();
        cmd.args(args)
            .env("HOME", home)
            // Records go to the test's own state directory, never the real ~/.local/state.
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HELM_CACHE_HOME", home.join(".cache/helm"))
            .env("HELM_CONFIG_HOME", home.join(".config/helm"))
            .env("HELM_DATA_HOME", home.join(".local/share/helm"))
            .env_remove("HELM_DRIVER")
            .env_remove("HELM_NAMESPACE")
            .env_remove("HELM_KUBECONTEXT")
            .stdin(Stdio::null());
        // On a GitHub runner these make every headless run print `::notice` lines and append to
        // the runner's own job summary: a test that wants them sets them itself.
        for name in CI_ENV {
            cmd.env_remove(name);
        }
        cmd
    }

    fn command(&self, tool_name: &str, args: &[&str]) -> Command {
        self.client_command(&tool(tool_name), args)
    }

    pub fn helm(&self, args: &[&str]) -> Output {
        self.command("helm", args).output().expect("run helm")
    }

    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.command("kubectl", args).output().expect("run kubectl")
    }

    /// `helm upgrade --install demo <chart> -n apps` plus extra args.
    pub fn install_demo(&self, extra: &[&str]) -> Output {
        let chart = chart();
        let mut args = vec![
            "upgrade",
            "--install",
            "demo",
            chart.to_str().unwrap(),
            "-n",
            "apps",
        ];
        args.extend_from_slice(extra);
        self.helm(&args)
    }

    /// GET a path of the simulator and parse JSON.
    pub fn get_json(&self, path: &str) -> Value {
        let text = self.get(path);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {path}: {e}: {text}"))
    }

    pub fn get(&self, path: &str) -> String {
        assert!(
            !self.is_real(),
            "GET {path}: the simulator's HTTP API is not there on a real cluster"
        );
        let host = self.url.trim_start_matches("http://");
        let mut stream = TcpStream::connect(host).expect("connect to sim");
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (_, body) = response.split_once("\r\n\r\n").expect("HTTP response");
        body.to_string()
    }

    /// Polls until `f` holds or the deadline passes.
    pub fn wait_for(&self, what: &str, timeout: Duration, mut f: impl FnMut(&Sim) -> bool) {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if f(self) {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("timed out after {timeout:?} waiting for {what}");
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        match &mut self.child {
            Some(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            None => {
                // The namespace and everything in it, release records included.
                let _ = self.kubectl(&["delete", "namespace", &self.namespace, "--wait=false"]);
            }
        }
    }
}

pub fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(out)))
}

/// Phase of each hook in a `helm status -o json` document, by name.
pub fn hook_phases(status: &Value) -> Vec<(String, String)> {
    status["hooks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            (
                h["name"].as_str().unwrap_or("").to_string(),
                h["last_run"]["phase"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// A finished `helmdeck deploy`.
pub struct DeployRun {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub report: Value,
    pub elapsed: Duration,
}

impl DeployRun {
    pub fn reason(&self) -> &str {
        self.report["verdict"]["reason"].as_str().unwrap_or("")
    }

    pub fn workload(&self, kind: &str, name: &str) -> &Value {
        self.report["workloads"]
            .as_array()
            .and_then(|ws| ws.iter().find(|w| w["kind"] == kind && w["name"] == name))
            .unwrap_or_else(|| panic!("no {kind}/{name} in report: {}", self.report["workloads"]))
    }

    pub fn step(&self, name: &str) -> &Value {
        self.report["steps"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["step"] == name))
            .unwrap_or_else(|| panic!("no step {name}"))
    }

    /// The init Job's entry of `hooks[]` (`events: ["init"]`), which every report holds.
    pub fn init_hook(&self) -> &Value {
        self.report["hooks"]
            .as_array()
            .and_then(|hs| {
                hs.iter()
                    .find(|h| h["events"] == serde_json::json!(["init"]))
            })
            .unwrap_or_else(|| panic!("no init entry in hooks: {}", self.report["hooks"]))
    }

    /// Whether a line of `verdict.evidence` contains `text`.
    pub fn evidence_has(&self, text: &str) -> bool {
        self.report["verdict"]["evidence"]
            .as_array()
            .is_some_and(|e| {
                e.iter()
                    .any(|l| l.as_str().is_some_and(|l| l.contains(text)))
            })
    }

    pub fn describe(&self) -> String {
        format!(
            "exit {:?} after {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// The demo deploy's usual flags: release `demo`, namespace `apps`, init step configured.
pub const DEMO_INIT: [&str; 4] = [
    "--init-toggle",
    "initJob.enabled",
    "--init-job",
    "demo-init",
];

/// [`DEMO_INIT`] followed by `extra`.
pub fn with_init<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = DEMO_INIT.to_vec();
    v.extend_from_slice(extra);
    v
}

impl Sim {
    pub fn helmdeck_command(&self, args: &[&str]) -> Command {
        let mut cmd = self.client_command(Path::new(env!("CARGO_BIN_EXE_helmdeck")), args);
        cmd.env("HELM_BIN", tool("helm"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// `helmdeck deploy demo <chart> -n apps --headless --report <report> <extra>`, not yet run.
    pub fn deploy_command(&self, report: &Path, extra: &[&str]) -> Command {
        self.deploy_chart_command(&chart(), report, extra)
    }

    /// `helmdeck deploy demo CHART -n apps --headless --report <report> <extra>`, not yet run.
    pub fn deploy_chart_command(&self, chart: &Path, report: &Path, extra: &[&str]) -> Command {
        let mut args = vec![
            "deploy",
            "demo",
            chart.to_str().expect("a UTF-8 path"),
            "-n",
            &self.namespace,
            "--headless",
            "--report",
            report.to_str().expect("a UTF-8 path"),
        ];
        args.extend_from_slice(extra);
        self.helmdeck_command(&args)
    }

    /// `helmdeck deploy demo <chart> -n apps --headless --report … <extra>`.
    pub fn deploy(&self, extra: &[&str]) -> DeployRun {
        let report = format!("report-{}.json", std::process::id());
        self.deploy_chart(&chart(), &report, extra)
    }

    /// `helmdeck deploy demo CHART -n apps --headless --report <home>/<report> <extra>`, run to
    /// its end (a report left there before is removed first).
    pub fn deploy_chart(&self, chart: &Path, report: &str, extra: &[&str]) -> DeployRun {
        let report = self.home().join(report);
        let _ = std::fs::remove_file(&report);
        let started = Instant::now();
        let out = self
            .deploy_chart_command(chart, &report, extra)
            .output()
            .expect("run helmdeck");
        finish(out, &report, started)
    }

    /// `helm history demo -n apps -o json`, parsed.
    pub fn helm_history(&self) -> Value {
        stdout_json(&self.helm(&["history", "demo", "-n", "apps", "-o", "json"]))
    }

    /// Waits until helm, installing `demo`, has stored its pending record and created the slow
    /// `demo-migrate` hook Job of [`SLOW_MIGRATE`]: it is waiting on the hook.
    pub fn wait_for_helm_on_the_migrate_hook(&self) {
        self.wait_for(
            "helm waiting on the slow migrate hook (its Job exists)",
            Duration::from_secs(30),
            |s| {
                // Not merely the pending record: helm only records `failed` on a signal once it
                // is past creating the release, so wait until it waits on the hook.
                s.get("/api/v1/namespaces/apps/secrets?labelSelector=owner%3Dhelm")
                    .contains("pending-install")
                    && s.get("/apis/batch/v1/namespaces/apps/jobs")
                        .contains("demo-migrate")
            },
        );
    }
}

/// A scenario whose migration hook takes a minute, so helm is mid-install while it runs.
pub const SLOW_MIGRATE: &str = "namespaces: [apps]\njobs:\n  - {match: '*-migrate', after: 60s}\n";

/// A headless deploy on a [`SLOW_MIGRATE`] sim, sent `signal` once helm waits on the hook; the
/// sim (to look at the release after) and the run.
pub fn signal_during_helm(signal: i32, report_name: &str) -> (Sim, DeployRun) {
    let sim = Sim::start_yaml(SLOW_MIGRATE);
    let report = sim.home().join(report_name);
    let started = Instant::now();
    let child = sim.deploy_command(&report, &[]).spawn().unwrap();
    sim.wait_for_helm_on_the_migrate_hook();
    unsafe { libc::kill(child.id() as i32, signal) };
    let run = finish(child.wait_with_output().unwrap(), &report, started);
    (sim, run)
}

impl Sim {}

/// Every child a test starts runs without the CI-detection variables of the runner the suite
/// runs on (helm, kubectl, helmdeck and the commands run as printed alike).
#[test]
fn children_never_inherit_the_runners_ci_variables() {
    let sim = Sim::start("all-green");
    let removed = |cmd: &Command, name: &str| {
        cmd.get_envs()
            .any(|(k, v)| k == std::ffi::OsStr::new(name) && v.is_none())
    };
    for cmd in [
        sim.helmdeck_command(&["version"]),
        sim.command("helm", &["version"]),
        sim.deploy_command(Path::new("r.json"), &[]),
    ] {
        for name in CI_ENV {
            assert!(removed(&cmd, name), "{name} reaches {cmd:?}");
        }
    }
    // And helmdeck reads no other: every `GITHUB_*` its source names is in the list.
    fn scan(dir: &Path, names: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("src is readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                scan(&path, names);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let src = std::fs::read_to_string(&path).expect("a source file");
                for (at, _) in src.match_indices("\"GITHUB_") {
                    names.push(
                        src[at + 1..]
                            .chars()
                            .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                            .collect(),
                    );
                }
            }
        }
    }
    let mut names = Vec::new();
    scan(&repo().join("src"), &mut names);
    assert!(names.iter().any(|n| n == "GITHUB_ACTIONS"), "{names:?}");
    for name in names {
        assert!(CI_ENV.contains(&name.as_str()), "{name} is not removed");
    }
}

/// Panics unless `report` is valid against docs/report.schema.json: every report the suite reads
/// passes through here, so the schema is checked against every scenario's real report.
pub fn check_report(report: &Value) {
    static SCHEMA: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let validator = SCHEMA.get_or_init(|| {
        let schema: Value = serde_json::from_str(include_str!("../../docs/report.schema.json"))
            .expect("schema is JSON");
        jsonschema::validator_for(&schema).expect("schema is a valid JSON Schema")
    });
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{e} (at {})", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report does not match docs/report.schema.json:\n{}\n{report:#}",
        errors.join("\n")
    );
}

pub fn finish(out: Output, report: &Path, started: Instant) -> DeployRun {
    let report = std::fs::read_to_string(report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    if !report.is_null() {
        check_report(&report);
    }
    DeployRun {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        report,
        elapsed: started.elapsed(),
    }
}

impl Sim {
    /// Like [`Sim::deploy`], with `input` on helmdeck's standard input (for `-f -`).
    pub fn deploy_with_stdin(&self, extra: &[&str], input: &[u8]) -> DeployRun {
        let report = self.home().join("report-stdin.json");
        let _ = std::fs::remove_file(&report);
        let started = Instant::now();
        let mut child = self
            .deploy_command(&report, extra)
            .stdin(Stdio::piped())
            .spawn()
            .expect("run helmdeck");
        let mut stdin = child.stdin.take().expect("piped stdin");
        stdin.write_all(input).expect("write helmdeck's stdin");
        drop(stdin);
        let out = child.wait_with_output().expect("wait for helmdeck");
        finish(out, &report, started)
    }

    /// The args of the first container of Job `name` in `apps`, as the simulator stores it.
    pub fn job_args(&self, name: &str) -> Vec<String> {
        let job = self.get_json(&format!("/apis/batch/v1/namespaces/apps/jobs/{name}"));
        job.pointer("/spec/template/spec/containers/0/args")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("no Job {name} with container args: {job}"))
            .iter()
            .map(|a| a.as_str().unwrap_or("").to_string())
            .collect()
    }

    /// Runs `command` exactly as helmdeck printed it, through `sh -c`, with `helmdeck`, `helm`
    /// and `kubectl` found on PATH (the built binary and .tools/bin) and this simulator's
    /// client environment.
    pub fn run_printed(&self, command: &str) -> Output {
        let bin = Path::new(env!("CARGO_BIN_EXE_helmdeck"))
            .parent()
            .expect("the binary's directory")
            .to_path_buf();
        let tools = tool("helm").parent().expect(".tools/bin").to_path_buf();
        let path =
            std::env::join_paths([bin, tools, "/usr/bin".into(), "/bin".into()]).expect("a PATH");
        self.client_command(Path::new("/bin/sh"), &["-c", command])
            .env("PATH", path)
            .env_remove("HELM_BIN")
            .output()
            .expect("run sh -c")
    }
}

/// Every command a deploy printed as advice, as printed: the verdict's `next:` line and the
/// command a lock message ends in (`clear it with: …`).
pub fn printed_commands(run: &DeployRun) -> Vec<String> {
    let mut out = Vec::new();
    for line in run.stdout.lines().chain(run.stderr.lines()) {
        if let Some(command) = line.strip_prefix("next: ") {
            out.push(command.to_string());
        } else if let Some((_, command)) = line.split_once("clear it with: ") {
            out.push(command.to_string());
        }
    }
    out.dedup();
    out
}

/// A copy of the demo chart in `dir`, with `edit` applied to each file's text (for charts that
/// differ from the demo chart in one template).
pub fn chart_copy(dir: &Path, edit: impl Fn(&Path, String) -> String) -> PathBuf {
    fn walk(from: &Path, to: &Path, edit: &dyn Fn(&Path, String) -> String) {
        std::fs::create_dir_all(to).expect("create chart dir");
        for entry in std::fs::read_dir(from).expect("read chart dir") {
            let entry = entry.expect("a dir entry");
            let (src, dst) = (entry.path(), to.join(entry.file_name()));
            if src.is_dir() {
                walk(&src, &dst, edit);
            } else {
                let text = std::fs::read_to_string(&src).expect("a text file");
                let rel = src.strip_prefix(chart()).unwrap_or(&src);
                std::fs::write(&dst, edit(rel, text)).expect("write chart file");
            }
        }
    }
    let root = dir.join("deckapp");
    walk(&chart(), &root, &edit);
    root
}

/// A chart repository served over HTTP on loopback from a directory (`index.yaml` and the
/// packaged charts), counting the GETs of each path. Stops when dropped.
pub struct ChartRepo {
    pub url: String,
    hits: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    addr: std::net::SocketAddr,
}

impl ChartRepo {
    /// Packages the demo chart into `dir` with the real helm, indexes it and serves it.
    pub fn demo(sim: &Sim, dir: &Path) -> ChartRepo {
        let chart = chart();
        let out = sim.helm(&[
            "package",
            chart.to_str().unwrap(),
            "-d",
            dir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out));
        let out = sim.helm(&["repo", "index", dir.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out));
        ChartRepo::serve(dir.to_path_buf())
    }

    fn serve(dir: PathBuf) -> ChartRepo {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("an address");
        let hits = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (hits2, stop2) = (hits.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
                let mut request = String::new();
                if reader.read_line(&mut request).is_err() {
                    continue;
                }
                let mut header = String::new();
                while reader.read_line(&mut header).is_ok_and(|n| n > 2) {
                    header.clear();
                }
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                hits2.lock().expect("hits").push(path.clone());
                let file = dir.join(path.trim_start_matches('/'));
                let (status, body) = match std::fs::read(&file) {
                    Ok(body) if file.is_file() => ("200 OK", body),
                    _ => ("404 Not Found", b"not found".to_vec()),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
            }
        });
        ChartRepo {
            url: format!("http://{addr}"),
            hits,
            stop,
            addr,
        }
    }

    /// How many times `path` was fetched.
    pub fn gets(&self, path: &str) -> usize {
        self.hits
            .lock()
            .expect("hits")
            .iter()
            .filter(|p| *p == path)
            .count()
    }
}

impl Drop for ChartRepo {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accept loop so the thread sees the flag and ends.
        let _ = TcpStream::connect(self.addr);
    }
}

/// A new pseudo-terminal of `rows` x `cols`: (master, slave). The master is close-on-exec, so
/// a child never holds it (closing ours is then a hang-up).
pub fn openpty(rows: u16, cols: u16) -> (std::fs::File, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd;
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    assert_eq!(
        unsafe { libc::fcntl(master, libc::F_SETFD, libc::FD_CLOEXEC) },
        0
    );
    unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::os::fd::OwnedFd::from_raw_fd(slave),
        )
    }
}
