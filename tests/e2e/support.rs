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

/// A running `helmdeck sim` process, killed on drop.
pub struct Sim {
    child: Child,
    pub url: String,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
}

impl Sim {
    pub fn start(scenario: &str) -> Sim {
        let dir = tempfile::tempdir().expect("temp dir");
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
            child,
            url,
            dir,
            kubeconfig,
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
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HELM_CACHE_HOME", home.join(".cache/helm"))
            .env("HELM_CONFIG_HOME", home.join(".config/helm"))
            .env("HELM_DATA_HOME", home.join(".local/share/helm"))
            .env_remove("HELM_DRIVER")
            .env_remove("HELM_NAMESPACE")
            .env_remove("HELM_KUBECONTEXT")
            .stdin(Stdio::null());
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
        let _ = self.child.kill();
        let _ = self.child.wait();
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

impl Sim {
    pub fn helmdeck_command(&self, args: &[&str]) -> Command {
        let mut cmd = self.client_command(Path::new(env!("CARGO_BIN_EXE_helmdeck")), args);
        cmd.env("HELM_BIN", tool("helm"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// `helmdeck deploy demo <chart> -n apps --headless --report … <extra>`.
    pub fn deploy(&self, extra: &[&str]) -> DeployRun {
        let report = self
            .home()
            .join(format!("report-{}.json", std::process::id()));
        let _ = std::fs::remove_file(&report);
        let chart = chart();
        let mut args = vec![
            "deploy",
            "demo",
            chart.to_str().unwrap(),
            "-n",
            "apps",
            "--headless",
            "--report",
            report.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let started = Instant::now();
        let out = self.helmdeck_command(&args).output().expect("run helmdeck");
        finish(out, &report, started)
    }
}

pub fn finish(out: Output, report: &Path, started: Instant) -> DeployRun {
    let report = std::fs::read_to_string(report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    DeployRun {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        report,
        elapsed: started.elapsed(),
    }
}
