//! Bad input: exit 2, one line on stderr naming the problem, no secret in it, and not a single
//! request to the cluster (the simulator counts every request it gets).

use std::path::Path;

use crate::support::{Sim, chart};

/// One bad invocation: what it runs, the message it must print, and a secret that must not.
struct Case {
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
    says: String,
    secret: Option<&'static str>,
}

fn case(args: &[&str], says: &str) -> Case {
    Case {
        args: args.iter().map(|a| a.to_string()).collect(),
        env: vec![],
        says: says.into(),
        secret: None,
    }
}

impl Case {
    fn secret(mut self, secret: &'static str) -> Case {
        self.secret = Some(secret);
        self
    }

    fn env(mut self, key: &'static str, value: &Path) -> Case {
        self.env.push((key, value.display().to_string()));
        self
    }
}

/// `helmdeck deploy RELEASE <demo chart> -n apps --headless EXTRA…`.
fn deploy(release: &str, extra: &[&str]) -> Vec<String> {
    let chart = chart();
    let mut args = vec!["deploy", release, chart.to_str().unwrap(), "-n", "apps"];
    args.push("--headless");
    args.extend_from_slice(extra);
    args.iter().map(|a| a.to_string()).collect()
}

fn deploy_case(release: &str, extra: &[&str], says: &str) -> Case {
    let args = deploy(release, extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    case(&args, says)
}

#[test]
fn bad_input_exits_2_with_one_line_and_no_cluster_request() {
    let sim = Sim::start("all-green");
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let s = |name: &str| p(name).display().to_string();
    std::fs::create_dir(p("values-dir")).unwrap();
    std::fs::write(p("binary.yaml"), b"a: 1\n\x00\x01\x02\xff\xfe").unwrap();
    std::fs::write(
        p("broken.yaml"),
        "image:\n  tag: [1.4.2\npassword: \"hunter2\n",
    )
    .unwrap();
    std::fs::write(p("list.yaml"), "- a\n- b\n").unwrap();
    std::fs::write(p("typed.yaml"), "a: 1\n").unwrap();
    // A kubeconfig whose user line is malformed: its token must not be echoed.
    std::fs::write(
        p("bad.kubeconfig"),
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n\
             contexts:\n- name: c\n  context: {{cluster: c, user: u, namespace: apps}}\n\
             current-context: c\nusers:\n- name: u\n  user:\n    token: tok-hunter2 [unclosed: \"x\n",
            sim.url
        ),
    )
    .unwrap();
    // helmdeck.toml beside a chart directory, one line broken and holding a secret.
    std::fs::create_dir(p("tomlchart")).unwrap();
    std::fs::write(
        p("tomlchart/helmdeck.toml"),
        "namespace = \"apps\"\napi-token = \"toml-hunter2\n",
    )
    .unwrap();
    std::fs::create_dir(p("tomltyped")).unwrap();
    std::fs::write(p("tomltyped/helmdeck.toml"), "values = \"hunter4\"\n").unwrap();
    let long = "a".repeat(54);
    let long_ns = "n".repeat(64);
    let chart_dir = chart();
    let chart_dir = chart_dir.to_str().unwrap();

    let cases = vec![
        // Release names helm would refuse (and one that would reach the label selector).
        deploy_case("", &[], "release name \"\" is invalid"),
        deploy_case("Demo", &[], "release name \"Demo\" is invalid"),
        deploy_case("demo_app", &[], "release name \"demo_app\" is invalid"),
        deploy_case(&long, &[], "is invalid"),
        deploy_case("demo,app=x", &[], "release name \"demo,app=x\" is invalid"),
        deploy_case("demo/x", &[], "release name \"demo/x\" is invalid"),
        deploy_case("demo-", &[], "release name \"demo-\" is invalid"),
        // clap's own refusals say it in one line too.
        case(
            &["deploy", "demo"],
            "required arguments were not provided: <CHART>",
        ),
        // Namespaces.
        case(
            &["deploy", "demo", chart_dir, "-n", "", "--headless"],
            "namespace \"\" is invalid",
        ),
        case(
            &["deploy", "demo", chart_dir, "-n", "Apps", "--headless"],
            "namespace \"Apps\" is invalid",
        ),
        case(
            &["deploy", "demo", chart_dir, "-n", "apps.x", "--headless"],
            "namespace \"apps.x\" is invalid",
        ),
        case(
            &["deploy", "demo", chart_dir, "-n", &long_ns, "--headless"],
            "is invalid",
        ),
        // A local chart path that does not exist (a repo/name or oci:// reference is no path).
        case(
            &[
                "deploy",
                "demo",
                "./no-such-chart",
                "-n",
                "apps",
                "--headless",
            ],
            "chart path \"./no-such-chart\" not found",
        ),
        case(
            &[
                "deploy",
                "demo",
                "/no/such/chart",
                "-n",
                "apps",
                "--headless",
            ],
            "chart path \"/no/such/chart\" not found",
        ),
        // Values files.
        deploy_case("demo", &["-f", &s("values-dir")], "is a directory"),
        deploy_case("demo", &["-f", &s("binary.yaml")], "is binary, not YAML"),
        deploy_case("demo", &["-f", &s("broken.yaml")], "is not YAML").secret("hunter2"),
        deploy_case("demo", &["-f", &s("list.yaml")], "is not a map of values"),
        deploy_case("demo", &["-f", &s("missing.yaml")], "is not readable"),
        // Timeouts: overflow, past helm's maximum, under a second.
        deploy_case(
            "demo",
            &["--timeout", "1e19s"],
            "--timeout: \"1e19s\" is not a duration",
        ),
        deploy_case(
            "demo",
            &["--timeout", "1e25s"],
            "--timeout: \"1e25s\" is not a duration",
        ),
        deploy_case(
            "demo",
            &["--timeout", "10000000000000000000s"],
            "is too long a duration",
        ),
        deploy_case("demo", &["--timeout", "2562048h"], "helm's maximum"),
        deploy_case("demo", &["--timeout", "500ms"], "under a second"),
        deploy_case(
            "demo",
            &["--timeout", "0s"],
            "--timeout must be more than 0",
        ),
        // helmdeck's own flags among the extra helm arguments.
        deploy_case(
            "demo",
            &["--", "--namespace", "other"],
            "--namespace among the helm",
        ),
        deploy_case(
            "demo",
            &["--", "--namespace=other"],
            "--namespace among the helm",
        ),
        deploy_case("demo", &["--", "-n", "other"], "-n among the helm"),
        deploy_case("demo", &["--", "-nother"], "-n among the helm"),
        deploy_case(
            "demo",
            &["--", "--kube-context", "x"],
            "--kube-context among the helm",
        ),
        deploy_case(
            "demo",
            &["--", "--wait"],
            "--wait is not allowed among the helm arguments",
        ),
        // Deny-list patterns.
        deploy_case(
            "demo",
            &["--optional", "Deploymnt/x"],
            "unknown kind \"Deploymnt\"",
        ),
        deploy_case(
            "demo",
            &["--optional", ""],
            "--optional: the pattern is empty",
        ),
        deploy_case(
            "demo",
            &["--optional", "Deployment/"],
            "the name pattern is empty",
        ),
        // The report path, checked before anything runs.
        deploy_case(
            "demo",
            &["--report", "/nonexistent-dir/report.json"],
            "directory /nonexistent-dir does not exist",
        ),
        deploy_case("demo", &["--report", &s("values-dir")], "is a directory"),
        deploy_case(
            "demo",
            &["--report", "/sys/helmdeck-report.json"],
            "directory /sys is not writable",
        ),
        // helm's own parse of --set, with the value kept out of the message.
        deploy_case(
            "demo",
            &["--set", "db.password=abc,set-hunter2"],
            "--set db.password=***,***: helm cannot parse it",
        )
        .secret("set-hunter2"),
        deploy_case(
            "demo",
            &["--", "--set-json", "a={json-hunter2"],
            "--set-json a=***: helm cannot parse it",
        )
        .secret("json-hunter2"),
        // Files that hold secrets: their lines are never echoed.
        deploy_case("demo", &[], "reading the kubeconfig")
            .env("KUBECONFIG", &p("bad.kubeconfig"))
            .secret("tok-hunter2"),
        case(
            &["deploy", "demo", &s("tomlchart"), "--headless"],
            "helmdeck.toml: line 2",
        )
        .secret("toml-hunter2"),
        case(
            &["deploy", "demo", &s("tomltyped"), "--headless"],
            "helmdeck.toml: line 1",
        )
        .secret("hunter4"),
        // inspect and demo check the same.
        case(
            &["inspect", "Demo_x", "-n", "apps", "--headless"],
            "release name \"Demo_x\" is invalid",
        ),
        case(
            &["inspect", "demo", "-n", "", "--headless"],
            "namespace \"\" is invalid",
        ),
        case(
            &["inspect", "demo", "-n", "apps", "--headless"],
            "reading the kubeconfig",
        )
        .env("KUBECONFIG", &p("bad.kubeconfig"))
        .secret("tok-hunter2"),
        case(
            &["demo", "--headless", "--report", "/nonexistent-dir/r.json"],
            "directory /nonexistent-dir does not exist",
        ),
    ];
    let mut failures = Vec::new();
    for c in &cases {
        let before = requests(&sim);
        let args: Vec<&str> = c.args.iter().map(String::as_str).collect();
        let mut cmd = sim.helmdeck_command(&args);
        for (k, v) in &c.env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run helmdeck");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let after = requests(&sim);
        let mut wrong = Vec::new();
        if out.status.code() != Some(2) {
            wrong.push(format!("exit {:?}", out.status.code()));
        }
        if !stderr.contains(&c.says) {
            wrong.push(format!("no {:?}", c.says));
        }
        if stderr.trim_end().lines().count() != 1 || !stderr.starts_with("helmdeck") {
            wrong.push("not one line".into());
        }
        if !stdout.trim().is_empty() {
            wrong.push("printed on stdout".into());
        }
        if let Some(secret) = c.secret
            && (stderr.contains(secret) || stdout.contains(secret))
        {
            wrong.push(format!("echoed the secret {secret:?}"));
        }
        // The stats request itself is the one request between the two reads.
        if after != before + 1 {
            wrong.push(format!("{} cluster requests", after - before - 1));
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{:?}: {}\n    stderr: {}    stdout: {}",
                c.args,
                wrong.join(", "),
                stderr,
                stdout.lines().next().unwrap_or("")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad inputs were not refused as they should be:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

fn requests(sim: &Sim) -> u64 {
    sim.get_json("/_sim/stats")["requests"]
        .as_u64()
        .expect("a request count")
}
