//! `helmdeck inspect` against releases written by the real helm on `helmdeck sim`: it agrees
//! with `helm history -o json` and `helm status -o json`, shows a failed hook's post-mortem,
//! survives corrupt records, and never prints values.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use base64::{Engine as _, engine::general_purpose::STANDARD};
use flate2::{Compression, write::GzEncoder};
use serde_json::{Value, json};

use crate::support::{Sim, chart, hook_phases, stdout_json, text, tool};

/// `helmdeck inspect demo -n apps <extra>`.
fn inspect(sim: &Sim, extra: &[&str]) -> Output {
    let mut args = vec!["inspect", "demo", "-n", "apps"];
    args.extend_from_slice(extra);
    sim.helmdeck_command(&args)
        .output()
        .expect("run helmdeck inspect")
}

/// `inspect --json`: exit code and document.
fn inspect_json(sim: &Sim, extra: &[&str]) -> (Option<i32>, Value) {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let out = inspect(sim, &args);
    (out.status.code(), stdout_json(&out))
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", text(out));
}

/// helm with the simulator's environment plus `env` (e.g. `HELM_DRIVER=configmap`), not waited for.
fn helm_command(sim: &Sim, env: &[(&str, &str)], args: &[&str]) -> Command {
    let mut cmd = sim.client_command(&tool("helm"), args);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn upgrade_args(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["upgrade", "demo", chart().to_str().unwrap(), "-n", "apps"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn helm_upgrade(sim: &Sim, extra: &[&str]) -> Output {
    let args = upgrade_args(extra);
    sim.helm(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// `(name, phase)` of each hook, sorted by name; helm's `""` reads `never ran`.
fn sorted_phases(mut phases: Vec<(String, String)>) -> Vec<(String, String)> {
    for (_, p) in phases.iter_mut() {
        if p.is_empty() {
            *p = "never ran".into();
        }
    }
    phases.sort();
    phases
}

fn our_phases(doc: &Value) -> Vec<(String, String)> {
    let hooks = doc["hooks"].as_array().cloned().unwrap_or_default();
    sorted_phases(
        hooks
            .iter()
            .map(|h| {
                (
                    h["name"].as_str().unwrap().to_string(),
                    h["phase"].as_str().unwrap().to_string(),
                )
            })
            .collect(),
    )
}

/// The differential check: every history entry agrees with `helm history -o json` (revision,
/// status, description, and the other columns), and for every revision the status,
/// description and each hook's phase agree with `helm status --revision N -o json`.
/// Returns the newest revision's document.
fn assert_agrees_with_helm(sim: &Sim, env: &[(&str, &str)]) -> Value {
    let run = |args: &[&str]| helm_command(sim, env, args).output().expect("run helm");
    let theirs = stdout_json(&run(&["history", "demo", "-n", "apps", "-o", "json"]));
    let (code, ours) = inspect_json(sim, &[]);
    assert_eq!(code, Some(0), "{ours:#}");
    let (theirs_h, ours_h) = (
        theirs.as_array().unwrap(),
        ours["history"].as_array().unwrap(),
    );
    assert_eq!(
        ours_h.len(),
        theirs_h.len(),
        "ours {ours_h:#?}\nhelm {theirs:#}"
    );
    for (t, o) in theirs_h.iter().zip(ours_h) {
        for key in [
            "revision",
            "status",
            "description",
            "updated",
            "chart",
            "app_version",
        ] {
            assert_eq!(
                o[key], t[key],
                "history {key} of revision {}: ours {o}\nhelm {t}",
                t["revision"]
            );
        }
        assert_eq!(o["error"], Value::Null);
    }
    for t in theirs_h {
        let n = t["revision"].to_string();
        let status = stdout_json(&run(&[
            "status",
            "demo",
            "-n",
            "apps",
            "--revision",
            &n,
            "-o",
            "json",
        ]));
        let (code, doc) = inspect_json(sim, &["--revision", &n]);
        assert_eq!(code, Some(0), "revision {n}: {doc:#}");
        assert_eq!(doc["revision"].to_string(), n);
        assert_eq!(
            doc["info"]["status"], status["info"]["status"],
            "revision {n}"
        );
        assert_eq!(
            doc["info"]["description"], status["info"]["description"],
            "revision {n}"
        );
        assert_eq!(
            our_phases(&doc),
            sorted_phases(hook_phases(&status)),
            "hook phases of revision {n}"
        );
    }
    ours
}

fn statuses(doc: &Value) -> Vec<String> {
    doc["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["status"].as_str().unwrap().to_string())
        .collect()
}

fn hook<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["hooks"]
        .as_array()
        .and_then(|hs| hs.iter().find(|h| h["name"] == name))
        .unwrap_or_else(|| panic!("no hook {name} in {doc:#}"))
}

#[test]
fn agrees_with_helm_on_a_clean_install() {
    let sim = Sim::start("all-green");
    ok(&sim.install_demo(&["--timeout", "60s"]));
    let doc = assert_agrees_with_helm(&sim, &[]);
    assert_eq!(statuses(&doc), ["deployed"]);
    assert_eq!(doc["info"]["operation"], "install");
    assert_eq!(doc["lock"], Value::Null);
    // Execution order: pre hooks by weight, then post hooks by weight.
    let order: Vec<&str> = doc["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["demo-migrate", "demo-init", "demo-seed"]);
    // The workloads are judged as the deploy step judges them.
    let api = doc["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "demo-api")
        .expect("demo-api");
    assert_eq!(api["kind"], "Deployment");
    assert!(
        api["message"]
            .as_str()
            .unwrap()
            .starts_with("deployment \"demo-api\""),
        "{api}"
    );
}

fn failed_post_upgrade_hook() -> Sim {
    let sim = Sim::start("hook-fails");
    // The install skips the hooks (seed fails in this scenario), so revision 1 is deployed.
    ok(&sim.install_demo(&["--no-hooks", "--timeout", "60s"]));
    let out = helm_upgrade(&sim, &["--timeout", "60s"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    sim
}

#[test]
fn agrees_with_helm_on_a_failed_post_upgrade_hook() {
    let sim = failed_post_upgrade_hook();
    let doc = assert_agrees_with_helm(&sim, &[]);
    assert_eq!(statuses(&doc), ["deployed", "failed"]);
    assert_eq!(doc["info"]["operation"], "upgrade");
    assert_eq!(hook(&doc, "demo-seed")["phase"], "Failed");
    assert_eq!(hook(&doc, "demo-init")["phase"], "Succeeded");
    let (_, first) = inspect_json(&sim, &["--revision", "1"]);
    assert_eq!(
        hook(&first, "demo-migrate")["phase"],
        "never ran",
        "installed with --no-hooks"
    );
}

#[test]
fn failed_hook_post_mortem_shows_the_jobs_logs_exit_code_and_events() {
    let sim = failed_post_upgrade_hook();
    let (code, doc) = inspect_json(&sim, &[]);
    assert_eq!(code, Some(0), "{doc:#}");
    let live = &hook(&doc, "demo-seed")["live"];
    assert_eq!(live["found"], true, "{live:#}");
    assert_eq!(live["kind"], "Job");
    assert!(
        live["status"]
            .as_str()
            .unwrap()
            .contains("BackoffLimitExceeded"),
        "{live:#}"
    );
    let pods = live["pods"].as_array().unwrap();
    assert!(!pods.is_empty(), "{live:#}");
    // The lines the scenario's seed Job writes, and its exit code.
    let scenario = std::fs::read_to_string(
        crate::support::repo().join("crates/helmdeck-sim/scenarios/hook-fails.yaml"),
    )
    .unwrap();
    let wanted = [
        "loading fixtures/demo/orders.yaml: row 17: customer_id 4711 not found",
        "violates foreign key constraint \\\"orders_customer_id_fkey\\\"",
    ];
    for w in wanted {
        assert!(scenario.contains(w), "the scenario changed: {w}");
    }
    for pod in pods {
        let c = &pod["containers"][0];
        assert_eq!(c["name"], "seed");
        assert_eq!(c["exit_code"], 1, "{pod:#}");
        assert_eq!(c["terminated"]["exit_code"], 1);
        let log = c["log"].as_array().unwrap();
        assert!(
            log.iter()
                .any(|l| l
                    == "loading fixtures/demo/orders.yaml: row 17: customer_id 4711 not found"),
            "{pod:#}"
        );
        assert!(
            log.iter().any(|l| l
                .as_str()
                .unwrap()
                .contains("violates foreign key constraint \"orders_customer_id_fkey\"")),
            "{pod:#}"
        );
    }
    let reasons: Vec<&str> = live["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert!(reasons.contains(&"BackoffLimitExceeded"), "{reasons:?}");
    // Hooks that succeeded carry no live evidence.
    assert_eq!(hook(&doc, "demo-init")["live"], Value::Null);

    // The plain-text view shows the same facts.
    let out = inspect(&sim, &["--headless"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let screen = String::from_utf8_lossy(&out.stdout);
    for want in [
        "Hook demo-seed (Job, Failed)",
        "container seed: terminated, exit 1 (Error)",
        "│ loading fixtures/demo/orders.yaml: row 17: customer_id 4711 not found",
        "BackoffLimitExceeded",
    ] {
        assert!(screen.contains(want), "missing {want:?} in\n{screen}");
    }
}

#[test]
fn agrees_with_helm_on_a_superseded_chain() {
    let sim = Sim::start("all-green");
    ok(&sim.install_demo(&["--timeout", "60s"]));
    ok(&sim.install_demo(&["--timeout", "60s"]));
    ok(&helm_upgrade(
        &sim,
        &["--timeout", "60s", "--set", "image.tag=1.4.3"],
    ));
    let doc = assert_agrees_with_helm(&sim, &[]);
    assert_eq!(statuses(&doc), ["superseded", "superseded", "deployed"]);
    assert_eq!(doc["info"]["operation"], "upgrade");
}

#[test]
fn agrees_with_helm_on_a_rollback() {
    let sim = Sim::start("all-green");
    ok(&sim.install_demo(&["--timeout", "60s"]));
    ok(&helm_upgrade(
        &sim,
        &["--timeout", "60s", "--set", "image.tag=1.4.3"],
    ));
    ok(&sim.helm(&["rollback", "demo", "1", "-n", "apps", "--timeout", "60s"]));
    let doc = assert_agrees_with_helm(&sim, &[]);
    assert_eq!(statuses(&doc), ["superseded", "superseded", "deployed"]);
    assert_eq!(doc["info"]["description"], "Rollback to 1");
    assert_eq!(doc["info"]["operation"], "rollback");
    // The chart has no rollback hooks: none of them is part of this run.
    assert!(
        doc["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["in_this_run"] == false),
        "{doc:#}"
    );
}

/// A scenario whose migrate hook runs for a minute, so helm can be killed while it waits.
const SLOW_MIGRATE: &str = "description: slow migrate hook\nnamespaces: [apps]\njobs:\n  - match: '*-migrate'\n    after: 60s\n";

#[test]
fn agrees_with_helm_on_a_pending_upgrade_left_by_a_killed_helm() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("slow-migrate.yaml");
    std::fs::write(&scenario, SLOW_MIGRATE).unwrap();
    let sim = Sim::start(scenario.to_str().unwrap());
    ok(&sim.install_demo(&["--no-hooks", "--timeout", "60s"]));
    let args = upgrade_args(&["--timeout", "120s"]);
    let mut helm = helm_command(
        &sim,
        &[],
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .spawn()
    .expect("spawn helm");
    // Once the hook Job exists, helm has stored revision 2 as pending-upgrade with the hook Running.
    sim.wait_for("the migrate hook Job", Duration::from_secs(60), |s| {
        s.kubectl(&["get", "job", "demo-migrate", "-n", "apps", "-o", "name"])
            .status
            .success()
    });
    helm.kill().expect("SIGKILL helm");
    let _ = helm.wait();

    let doc = assert_agrees_with_helm(&sim, &[]);
    assert_eq!(statuses(&doc), ["deployed", "pending-upgrade"]);
    let lock = &doc["lock"];
    assert_eq!(lock["revision"], 2, "{doc:#}");
    assert_eq!(lock["status"], "pending-upgrade");
    assert_eq!(lock["last_deployed"], 1);
    assert_eq!(lock["command"], "helm rollback demo 1 -n apps");
    assert!(lock["age_seconds"].as_i64().unwrap() >= 0);
    let migrate = hook(&doc, "demo-migrate");
    assert_eq!(migrate["phase"], "Running");
    // The hook's Job is still running: its pod and log are shown.
    assert_eq!(migrate["live"]["found"], true, "{migrate:#}");
    assert_eq!(migrate["live"]["status"], "Running", "{migrate:#}");
    assert_eq!(hook(&doc, "demo-seed")["phase"], "never ran");

    let out = inspect(&sim, &["--headless"]);
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(
        screen.contains("revision 2 is pending-upgrade since"),
        "{screen}"
    );
    assert!(
        screen.contains("fix: helm rollback demo 1 -n apps"),
        "{screen}"
    );
}

#[test]
fn agrees_with_helm_on_the_configmap_driver() {
    let sim = Sim::start("all-green");
    let env = [("HELM_DRIVER", "configmap")];
    let chart = chart();
    let install = [
        "upgrade",
        "--install",
        "demo",
        chart.to_str().unwrap(),
        "-n",
        "apps",
        "--timeout",
        "60s",
    ];
    ok(&helm_command(&sim, &env, &install).output().unwrap());
    ok(&helm_command(&sim, &env, &install).output().unwrap());
    let doc = assert_agrees_with_helm(&sim, &env);
    let storage: Vec<&str> = doc["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["storage"].as_str().unwrap())
        .collect();
    assert_eq!(storage, ["configmap", "configmap"]);
}

// Corrupt records: a clean install (revision 1), then a planted revision 2.

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// Stores `payload` (what Helm base64-encodes once) as revision 2's Secret, labelled as Helm labels it.
fn plant_revision_2(sim: &Sim, payload: &[u8], status: &str) {
    let file = sim.home().join("release-v2");
    std::fs::write(&file, payload).unwrap();
    let name = "sh.helm.release.v1.demo.v2";
    let from = format!("--from-file=release={}", file.display());
    ok(&sim.kubectl(&[
        "create",
        "secret",
        "generic",
        name,
        "-n",
        "apps",
        "--type",
        "helm.sh/release.v1",
        &from,
    ]));
    let status = format!("status={status}");
    ok(&sim.kubectl(&[
        "label",
        "secret",
        name,
        "-n",
        "apps",
        "owner=helm",
        "name=demo",
        &status,
        "version=2",
    ]));
}

fn installed() -> Sim {
    let sim = Sim::start("all-green");
    ok(&sim.install_demo(&["--no-hooks", "--timeout", "60s"]));
    sim
}

/// Revision 2 is broken: its row says why, revision 1 still shows, and only inspecting
/// revision 2 (the default, being the newest) exits 1.
fn assert_broken_revision_2(sim: &Sim, why: &str) {
    let (code, doc) = inspect_json(sim, &[]);
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(doc["readable"], false);
    assert_eq!(doc["revision"], 2);
    let error = doc["error"].as_str().unwrap();
    assert!(
        error.starts_with("revision 2 cannot be read (secret sh.helm.release.v1.demo.v2): "),
        "{error}"
    );
    assert!(error.contains(why), "{error}");
    let history = doc["history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "{doc:#}");
    assert_eq!(history[0]["status"], "deployed");
    assert_eq!(history[0]["error"], Value::Null);
    assert!(
        history[1]["error"].as_str().unwrap().contains(why),
        "{:#}",
        history[1]
    );
    assert_eq!(history[1]["status"], "superseded", "the label's status");

    let (code, doc) = inspect_json(sim, &["--revision", "1"]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["info"]["status"], "deployed");
    assert!(doc["history"][1]["error"].as_str().unwrap().contains(why));

    let out = inspect(sim, &["--revision", "2", "--headless"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(
        screen.contains("revision 2 cannot be read") && screen.contains(why),
        "{screen}"
    );
    assert!(
        screen.contains("Install complete"),
        "revision 1 still shows: {screen}"
    );
}

#[test]
fn corrupt_record_bad_base64() {
    let sim = installed();
    plant_revision_2(&sim, b"this is %%% not base64", "superseded");
    assert_broken_revision_2(&sim, "not valid base64");
}

#[test]
fn corrupt_record_bad_gzip() {
    let sim = installed();
    let bogus = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03this is not a deflate stream";
    plant_revision_2(&sim, STANDARD.encode(bogus).as_bytes(), "superseded");
    assert_broken_revision_2(&sim, "not valid gzip");
}

#[test]
fn corrupt_record_truncated_json() {
    let sim = installed();
    let json =
        br#"{"name":"demo","namespace":"apps","version":2,"info":{"status":"deployed","descr"#;
    plant_revision_2(&sim, STANDARD.encode(gzip(json)).as_bytes(), "superseded");
    assert_broken_revision_2(&sim, "not valid release JSON");
}

#[test]
fn corrupt_record_odd_json() {
    let sim = installed();
    plant_revision_2(
        &sim,
        STANDARD
            .encode(gzip(br#"{"name":"demo","version":"two","hooks":{}}"#))
            .as_bytes(),
        "superseded",
    );
    assert_broken_revision_2(&sim, "cannot read release record");
}

#[test]
fn corrupt_record_huge_manifest() {
    let sim = installed();
    let mut release = br#"{"name":"demo","namespace":"apps","version":2,"info":{"status":"deployed"},"manifest":""#.to_vec();
    release.extend(std::iter::repeat_n(b'x', 65 * 1024 * 1024));
    release.extend(br#""}"#);
    plant_revision_2(
        &sim,
        STANDARD.encode(gzip(&release)).as_bytes(),
        "superseded",
    );
    drop(release);
    assert_broken_revision_2(&sim, "refusing to read it");
}

#[test]
fn unknown_fields_in_a_record_are_ignored() {
    let sim = installed();
    let release = json!({
        "name": "demo", "namespace": "apps", "version": 2, "from_the_future": {"x": [1, 2]},
        "info": {"status": "deployed", "description": "Upgrade complete", "last_deployed": "2026-01-01T10:00:00Z", "new_info": true},
        "chart": {"metadata": {"name": "deckapp", "version": "0.5.0", "appVersion": "1.5.0", "new_meta": 1}},
        "hooks": [{"name": "demo-migrate", "kind": "Job", "events": ["pre-upgrade"], "weight": -5,
                   "last_run": {"phase": "Succeeded", "extra": 1}, "new_hook_field": "x"}],
    });
    plant_revision_2(
        &sim,
        STANDARD
            .encode(gzip(release.to_string().as_bytes()))
            .as_bytes(),
        "deployed",
    );
    let (code, doc) = inspect_json(&sim, &[]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(doc["history"][1]["error"], Value::Null);
    assert_eq!(doc["history"][1]["chart"], "deckapp-0.5.0");
    assert_eq!(doc["info"]["description"], "Upgrade complete");
    assert_eq!(hook(&doc, "demo-migrate")["phase"], "Succeeded");
    // helm reads it too, and agrees.
    let history = stdout_json(&sim.helm(&["history", "demo", "-n", "apps", "-o", "json"]));
    assert_eq!(history[1]["chart"], "deckapp-0.5.0", "{history}");
}

#[test]
fn no_value_from_a_values_file_appears_in_any_output() {
    const PASSWORD: &str = "s3cr3t-hunter2";
    let sim = Sim::start("all-green");
    let values = sim.home().join("secret-values.yaml");
    std::fs::write(
        &values,
        format!("adminPassword: {PASSWORD}\ndb:\n  password: {PASSWORD}\n"),
    )
    .unwrap();
    ok(&sim.install_demo(&["-f", values.to_str().unwrap(), "--timeout", "60s"]));
    // The record really holds it.
    let stored = sim.helm(&["get", "values", "demo", "-n", "apps"]);
    assert!(
        String::from_utf8_lossy(&stored.stdout).contains(PASSWORD),
        "{}",
        text(&stored)
    );
    for extra in [
        &["--json"][..],
        &["--headless"],
        &["--show-manifest", "--headless"],
        &["--show-manifest", "--json"],
        &["--json", "--revision", "1"],
    ] {
        let out = inspect(&sim, extra);
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", text(&out));
        let all = text(&out);
        assert!(
            !all.contains(PASSWORD),
            "{extra:?} printed the password:\n{all}"
        );
    }
    let (_, doc) = inspect_json(&sim, &["--show-manifest"]);
    assert!(
        doc["manifest"]
            .as_str()
            .unwrap()
            .contains("kind: Deployment"),
        "the manifest is shown on request"
    );
}

#[test]
fn a_release_without_records_exits_1_and_a_bad_revision_flag_is_a_usage_error() {
    let sim = Sim::start("all-green");
    let (code, doc) = inspect_json(&sim, &[]);
    assert_eq!(code, Some(1), "{doc:#}");
    assert!(
        doc["error"].as_str().unwrap().contains("has no records"),
        "{doc:#}"
    );
    let out = inspect(&sim, &["--revision", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "helmdeck: --revision must be 1 or more (got 0)\n",
        "{}",
        text(&out)
    );
}

#[test]
fn an_unreachable_cluster_exits_1_at_once() {
    let sim = Sim::start("all-green");
    let kubeconfig = std::fs::read_to_string(&sim.kubeconfig).unwrap();
    let dead = sim.home().join("dead-kubeconfig");
    std::fs::write(
        &dead,
        kubeconfig.replace(sim.url.as_str(), "http://127.0.0.1:1"),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = sim
        .helmdeck_command(&["inspect", "demo", "-n", "apps", "--json"])
        .env("KUBECONFIG", &dead)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc = stdout_json(&out);
    assert!(
        doc["error"].as_str().unwrap().contains("unreachable"),
        "{doc:#}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

/// `(kind, name, optional, why)` of every workload, sorted.
fn optional_marks(workloads: &Value, because: &str) -> Vec<(String, String, bool, Value)> {
    let mut marks: Vec<_> = workloads
        .as_array()
        .unwrap_or_else(|| panic!("no workloads: {workloads}"))
        .iter()
        .map(|w| {
            (
                w["kind"].as_str().unwrap_or("").to_string(),
                w["name"].as_str().unwrap_or("").to_string(),
                w["optional"].as_bool().unwrap_or(false),
                w[because].clone(),
            )
        })
        .collect();
    marks.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    marks
}

#[test]
fn inspect_and_deploy_agree_on_every_way_of_marking_a_workload_optional() {
    let sim = Sim::start("all-green");
    // The chart's own helmdeck.io/optional annotations off: every mark below is set here.
    ok(&sim.install_demo(&[
        "--set",
        "gpuClient.optional=false",
        "--set",
        "monitoring.optional=false",
        "--timeout",
        "60s",
    ]));
    for (object, annotation) in [
        ("deployment/demo-monitoring", "helmdeck.io/optional=TRUE"),
        (
            "deployment/demo-web",
            "werf.io/fail-mode=IgnoreAndContinueDeployProcess",
        ),
        (
            "statefulset/demo-db",
            "werf.io/track-termination-mode=NonBlocking",
        ),
    ] {
        ok(&sim.kubectl(&["annotate", "-n", "apps", object, annotation]));
    }
    let deny = [
        "--optional",
        "Deployment/*-gpu-client",
        "--optional",
        "*-agent",
    ];
    let mut args = vec!["--only", "rollout", "--timeout", "60s"];
    args.extend(deny);
    let run = sim.deploy(&args);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let (code, doc) = inspect_json(&sim, &deny);
    assert_eq!(code, Some(0), "{doc:#}");

    let deployed = optional_marks(&run.report["workloads"], "optionalBecause");
    let inspected = optional_marks(&doc["workloads"], "optional_because");
    assert_eq!(inspected, deployed);
    let mark = |kind: &str, name: &str| json!([kind, name]);
    let got: Vec<(Value, Value)> = deployed
        .iter()
        .map(|(k, n, _, why)| (mark(k, n), why.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (mark("DaemonSet", "demo-agent"), json!("--optional *-agent")),
            (mark("Deployment", "demo-api"), json!(null)),
            (
                mark("Deployment", "demo-gpu-client"),
                json!("--optional Deployment/*-gpu-client")
            ),
            (
                mark("Deployment", "demo-monitoring"),
                json!("annotation helmdeck.io/optional")
            ),
            (
                mark("Deployment", "demo-web"),
                json!("annotation werf.io/fail-mode")
            ),
            (
                mark("StatefulSet", "demo-db"),
                json!("annotation werf.io/track-termination-mode")
            ),
        ]
    );
}

/// `--revision 99` of a release that stores only revision 1: exit 1, the stored revisions
/// named, and nothing live listed as if it were revision 99's (no "Workloads: none found").
#[test]
fn a_revision_that_does_not_exist_exits_1_naming_the_stored_ones() {
    let sim = installed();
    let out = inspect(&sim, &["--revision", "99", "--headless"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("✗ demo · apps · release demo has no revision 99 (stored: 1)\n"),
        "{}",
        text(&out)
    );
    assert!(!said.contains("Workloads"), "{}", text(&out));
    assert!(!said.contains("none found"), "{}", text(&out));
    // The history still shows what there is to inspect.
    assert!(said.contains("History"), "{}", text(&out));
    assert!(out.stderr.is_empty(), "{}", text(&out));

    let (code, doc) = inspect_json(&sim, &["--revision", "99"]);
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(doc["readable"], false, "{doc:#}");
    assert_eq!(
        doc["error"], "release demo has no revision 99 (stored: 1)",
        "{doc:#}"
    );
    assert_eq!(doc["workloads"], json!([]), "{doc:#}");
}

/// Every way inspect refuses before reading the release: exit 2 and one plain line on stderr
/// (stdout is a pipe here), never a colour-eyre report or a backtrace, nothing on stdout.
#[test]
fn inspect_errors_are_one_plain_line_when_stdout_is_not_a_terminal() {
    let sim = Sim::start("all-green");
    let broken = sim.home().join("broken-kubeconfig");
    std::fs::write(&broken, "apiVersion: v1\nkind: Config\nclusters: [[[\n").unwrap();
    let missing = sim.home().join("no-such-kubeconfig");
    let cases: [(&[&str], Option<&std::path::Path>, &str); 5] = [
        (
            &["inspect", "Bad_Name"],
            None,
            "release name \"Bad_Name\" is invalid",
        ),
        (
            &["inspect", "demo", "-n", "BAD"],
            None,
            "namespace \"BAD\" is invalid",
        ),
        (
            &["inspect", "demo", "--optional", "Pod/x"],
            None,
            "--optional \"Pod/x\": unknown kind \"Pod\"",
        ),
        (
            &["inspect", "demo"],
            Some(&broken),
            "reading the kubeconfig",
        ),
        (
            &["inspect", "demo"],
            Some(&missing),
            "reading the kubeconfig",
        ),
    ];
    for (args, kubeconfig, want) in cases {
        let mut cmd = sim.helmdeck_command(args);
        if let Some(k) = kubeconfig {
            cmd.env("KUBECONFIG", k);
        }
        cmd.env("RUST_BACKTRACE", "1");
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("helmdeck: ") && err.contains(want),
            "{args:?}: {err}"
        );
        for noise in ["\u{1b}", "Location:", "Backtrace", "backtrace", "Error:"] {
            assert!(!err.contains(noise), "{args:?}: {noise:?} in {err}");
        }
    }
}

/// helm's default `backoffLimit: 6` on the failing seed hook: seven pods, each scheduled,
/// pulled, created and started. The text keeps the Warning whole and gives each repeated
/// Normal reason one line with its count; `--json` keeps every event.
#[test]
fn a_backoff_six_hook_folds_its_repeated_events() {
    let sim = Sim::start("hook-fails");
    ok(&sim.install_demo(&["--no-hooks", "--timeout", "60s"]));
    let out = helm_upgrade(
        &sim,
        &["--timeout", "120s", "--set", "seedJob.backoffLimit=6"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let (_, doc) = inspect_json(&sim, &[]);
    let live = &hook(&doc, "demo-seed")["live"];
    assert_eq!(live["pods"].as_array().map(Vec::len), Some(7), "{live:#}");
    let all = live["events"].as_array().unwrap().len();
    let out = inspect(&sim, &["--headless"]);
    let said = String::from_utf8_lossy(&out.stdout);
    let events: Vec<&str> = said
        .lines()
        .skip_while(|l| l.trim() != "events")
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .collect();
    let section = said
        .lines()
        .skip_while(|l| !l.starts_with("Hook demo-seed"))
        .take_while(|l| !l.is_empty())
        .count();
    eprintln!(
        "backoffLimit 6: {all} events in the JSON, {} event lines, the hook's section {section} lines",
        events.len(),
    );
    assert!(events.len() < all, "{said}");
    assert!(
        events
            .iter()
            .any(|l| l.contains("Warning  BackoffLimitExceeded")),
        "{said}"
    );
    for reason in ["Scheduled", "Pulled", "Started"] {
        let lines: Vec<&&str> = events
            .iter()
            .filter(|l| l.contains(&format!("Normal   {reason} ")))
            .collect();
        assert_eq!(lines.len(), 1, "{reason}: {said}");
        assert!(
            lines[0].contains("(×7 across 7 pods, the last shown)"),
            "{said}"
        );
    }
}

/// Issue 24: a Deployment scaled to 1,200 replicas (more than the simulator's three nodes of
/// 110 pods hold: READY stays below desired) reads `N/1200` whole in the headless text, and its
/// READY cell ends in the same column as the 2-replica rows' (as wide as its widest count).
#[test]
fn four_digit_replica_counts_are_whole_and_the_columns_line_up() {
    let sim = installed();
    ok(&sim.kubectl(&[
        "scale",
        "deployment/demo-api",
        "-n",
        "apps",
        "--replicas=1200",
    ]));
    sim.wait_for("1,200 updated replicas", Duration::from_secs(120), |s| {
        s.get_json("/apis/apps/v1/namespaces/apps/deployments/demo-api")["status"]
            ["updatedReplicas"]
            == 1200
    });
    let out = inspect(&sim, &["--headless"]);
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    let row = |name: &str| {
        shown
            .lines()
            .find(|l| l.contains(&format!(" {name} ")) && l.contains("deployment \""))
            .unwrap_or_else(|| panic!("the {name} row:\n{shown}"))
    };
    // Where the READY cell (`ready/desired`) ends, in characters, and the cell.
    let ready = |r: &str| {
        let words: Vec<&str> = r.split_whitespace().collect();
        let cell = words
            .iter()
            .find(|w| {
                w.split_once('/').is_some_and(|(a, b)| {
                    a.bytes().all(|c| c.is_ascii_digit()) && b.bytes().all(|c| c.is_ascii_digit())
                })
            })
            .unwrap_or_else(|| panic!("a READY cell in {r}"))
            .to_string();
        let end = r[..r.find(&format!(" {cell} ")).expect("the cell") + cell.len() + 1]
            .chars()
            .count();
        (cell, end)
    };
    let (api, web) = (ready(row("demo-api")), ready(row("demo-web")));
    assert!(api.0.ends_with("/1200"), "{api:?}:\n{shown}");
    assert!(web.0.ends_with("/2"), "{shown}");
    assert_eq!(api.1, web.1, "the READY cells end in one column:\n{shown}");
}
