//! The init step's render (issue 9 items 2, 4, 6): the Job is checked offline before the first
//! cluster request, and rendered after the upgrade from exactly what helm deployed.

use crate::support::{ChartRepo, Sim, chart_copy, text, with_init};

/// The simulator's request count: 1 means only the stats request itself.
fn requests(sim: &Sim) -> u64 {
    sim.get_json("/_sim/stats")["requests"]
        .as_u64()
        .expect("a request count")
}

#[test]
fn a_mistyped_init_job_is_exit_2_naming_the_jobs_the_toggle_adds() {
    let sim = Sim::start("all-green");
    let run = sim.deploy(&[
        "--init-toggle",
        "initJob.enabled",
        "--init-job",
        "demo-initt",
        "--timeout",
        "60s",
    ]);
    assert_eq!(run.code, Some(2), "{}", run.describe());
    let message = run.stderr.trim();
    assert_eq!(message.lines().count(), 1, "one line: {message}");
    assert!(
        message.contains("initJob.enabled=true adds Job demo-init")
            && message.contains("none named demo-initt")
            && message.ends_with("(did you mean demo-init?)"),
        "{message}"
    );
    assert_eq!(requests(&sim), 1, "no cluster request before exit 2");
}

#[test]
fn an_init_job_the_toggle_does_not_switch_off_is_exit_2() {
    let sim = Sim::start("all-green");
    // A mistyped key: initJob.enabled stays true, so demo-init renders with the toggle off.
    let run = sim.deploy(&[
        "--init-toggle",
        "initjob.enabled",
        "--init-job",
        "demo-init",
        "--timeout",
        "60s",
    ]);
    assert_eq!(run.code, Some(2), "{}", run.describe());
    let message = run.stderr.trim();
    assert!(
        message.contains("Job demo-init is rendered with initjob.enabled=false too"),
        "{message}"
    );
    // A hook the toggle never touches.
    let run = sim.deploy(&[
        "--init-toggle",
        "initJob.enabled",
        "--init-job",
        "demo-seed",
        "--timeout",
        "60s",
    ]);
    assert_eq!(run.code, Some(2), "{}", run.describe());
    assert!(
        run.stderr
            .contains("Job demo-seed is rendered with initJob.enabled=false too"),
        "{}",
        run.describe()
    );
    assert_eq!(requests(&sim), 1, "no cluster request before exit 2");
}

#[test]
fn values_from_stdin_reach_the_upgrade_and_the_init_render() {
    let sim = Sim::start("all-green");
    let input = b"web:\n  replicas: 3\ninitJob:\n  siteName: From Stdin\n";
    let run = sim.deploy_with_stdin(&with_init(&["-f", "-", "--timeout", "60s"]), input);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(run.step("init")["status"], "succeeded");
    let values = sim.helm(&["get", "values", "demo", "-n", "apps", "-o", "json"]);
    let values: serde_json::Value =
        serde_json::from_slice(&values.stdout).unwrap_or_else(|_| panic!("{}", text(&values)));
    assert_eq!(
        values["web"]["replicas"], 3,
        "the upgrade got stdin: {values}"
    );
    assert!(
        sim.job_args("demo-init")
            .contains(&"--site-name=From Stdin".to_string()),
        "the init render got stdin: {:?}",
        sim.job_args("demo-init")
    );
}

#[test]
fn the_init_render_uses_every_value_the_upgrade_used() {
    let sim = Sim::start("all-green");
    let file = sim.home().join("after-dashes.yaml");
    std::fs::write(&file, "initJob:\n  adminEmail: ops@example.com\n").unwrap();
    let run = sim.deploy(&with_init(&[
        "--timeout",
        "60s",
        "--",
        "--set-string",
        "initJob.siteName=Set String",
        "--values",
        file.to_str().unwrap(),
    ]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let args = sim.job_args("demo-init");
    assert!(
        args.contains(&"--site-name=Set String".to_string())
            && args.contains(&"--admin-email=ops@example.com".to_string()),
        "{args:?}"
    );
    // --reuse-values: the record's values are exact by construction.
    let run = sim.deploy(&with_init(&[
        "--timeout",
        "60s",
        "--",
        "--reuse-values",
        "--set-json",
        "initJob.backoffLimit=2",
    ]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let args = sim.job_args("demo-init");
    assert!(
        args.contains(&"--site-name=Set String".to_string()),
        "the reused values reach the init render: {args:?}"
    );
    let job = sim.get_json("/apis/batch/v1/namespaces/apps/jobs/demo-init");
    assert_eq!(job["spec"]["backoffLimit"], 2, "{job}");
}

#[test]
fn the_init_job_renders_as_an_install_on_a_first_install_and_an_upgrade_after() {
    let sim = Sim::start("all-green");
    let dir = tempfile::tempdir().unwrap();
    let chart = chart_copy(dir.path(), |path, text| {
        if path.ends_with("init-job.yaml") {
            text.replace(
                "            - init\n",
                "            - init\n            - {{ if .Release.IsUpgrade }}--upgrade{{ else }}--install{{ end }}\n",
            )
        } else {
            text
        }
    });
    let deploy =
        |sim: &Sim| sim.deploy_chart(&chart, "render.json", &with_init(&["--timeout", "60s"]));
    let run = deploy(&sim);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(
        sim.job_args("demo-init").contains(&"--install".to_string()),
        "{:?}",
        sim.job_args("demo-init")
    );
    let run = deploy(&sim);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert!(
        sim.job_args("demo-init").contains(&"--upgrade".to_string()),
        "{:?}",
        sim.job_args("demo-init")
    );
}

#[test]
fn a_repo_chart_is_pulled_once_and_the_upgrade_and_the_render_use_that_copy() {
    let sim = Sim::start("all-green");
    let dir = tempfile::tempdir().unwrap();
    let repo = ChartRepo::demo(&sim, dir.path());
    let mut args = with_init(&["--timeout", "60s"]);
    args.extend_from_slice(&["--", "--repo", &repo.url, "--version", "0.4.2"]);
    // A chart named in the repo, not a path.
    let run = sim.deploy_chart(std::path::Path::new("deckapp"), "repo-report.json", &args);
    assert_eq!(run.code, Some(0), "{}", run.describe());
    assert_eq!(
        run.step("init")["status"],
        "succeeded",
        "{}",
        run.describe()
    );
    assert_eq!(repo.gets("/deckapp-0.4.2.tgz"), 1, "pulled once");
}

#[test]
fn the_post_renderer_reaches_the_init_render() {
    let sim = Sim::start("all-green");
    // helm 4 post-renderers are plugins; this one rewrites the init Job's site name.
    let plugin = sim.home().join(".local/share/helm/plugins/stamp");
    std::fs::create_dir_all(&plugin).unwrap();
    std::fs::write(
        plugin.join("plugin.yaml"),
        "apiVersion: v1\ntype: postrenderer/v1\nname: stamp\nversion: 0.1.0\nruntime: subprocess\nruntimeConfig:\n  platformCommand:\n    - command: ${HELM_PLUGIN_DIR}/stamp.sh\n",
    )
    .unwrap();
    let script = plugin.join("stamp.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nsed 's/--site-name=Deck Demo/--site-name=Post Rendered/'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = sim.deploy(&with_init(&[
        "--timeout",
        "60s",
        "--",
        "--post-renderer",
        "stamp",
    ]));
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let args = sim.job_args("demo-init");
    assert!(
        args.contains(&"--site-name=Post Rendered".to_string()),
        "{args:?}"
    );
}
