use super::*;
use clap::Parser;
use color_eyre::eyre::{Result, eyre};

fn parse(argv: &[&str]) -> Result<DeployPlan> {
    let cli = crate::cli::Cli::try_parse_from(argv).map_err(|e| eyre!("{e}"))?;
    match cli.command {
        crate::cli::Command::Deploy(a) => Ok(DeployPlan::from_args(&a)?),
        _ => unreachable!(),
    }
}

#[test]
fn flags_win_over_the_file_and_lists_append() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prod.yaml"), "a: 1\n").unwrap();
    std::fs::write(
        dir.path().join("helmdeck.toml"),
        "namespace = \"apps\"\ninit-toggle = \"xnat.initJob.enabled\"\ninit-job = \"x-init\"\noptional = [\"*-gpu\"]\nvalues = [\"prod.yaml\"]\ntimeout = \"2m\"\n",
    )
    .unwrap();
    let chart = dir.path().to_str().unwrap();
    let plan = parse(&[
        "helmdeck",
        "deploy",
        "rel",
        chart,
        "-n",
        "other",
        "--optional",
        "Deployment/mon",
    ])
    .unwrap();
    assert_eq!(plan.namespace.as_deref(), Some("other"));
    assert_eq!(plan.timeout, Duration::from_secs(120));
    assert_eq!(plan.optional.len(), 2);
    assert_eq!(plan.values, vec![dir.path().join("prod.yaml")]);
    assert_eq!(plan.init_job.as_deref(), Some("x-init"));
}

#[test]
fn usage_errors() {
    assert!(
        parse(&[
            "helmdeck",
            "deploy",
            "rel",
            "/nonexistent",
            "-f",
            "/nonexistent/values.yaml"
        ])
        .is_err()
    );
    assert!(parse(&["helmdeck", "deploy", "rel", "c", "--timeout", "soon"]).is_err());
    assert!(parse(&["helmdeck", "deploy", "rel", "c", "--", "--wait"]).is_err());
    assert!(parse(&["helmdeck", "deploy", "rel", "c", "--", "--atomic"]).is_err());
    assert!(parse(&["helmdeck", "deploy", "rel", "c", "--", "--wait=watcher"]).is_err());
    assert!(parse(&["helmdeck", "deploy", "rel", "c", "--init-toggle", "a.b"]).is_err());
    assert!(parse(&["helmdeck", "deploy", "rel", "c", "--optional", "["]).is_err());
    assert!(parse(&["helmdeck", "deploy", "rel", "c", "--", "--history-max", "3"]).is_ok());
}

#[test]
fn plan_from_the_flag_or_the_file_never_with_only_or_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("helmdeck.toml"), "plan = true\n").unwrap();
    let chart = dir.path().to_str().unwrap();
    let from_file = parse(&["helmdeck", "deploy", "rel", chart]).unwrap();
    assert!(from_file.plan && !from_file.plan_only);
    // `--only` and `--dry-run` plan no upgrade: the file's default stays out of them.
    let only = parse(&["helmdeck", "deploy", "rel", chart, "--only", "rollout"]).unwrap();
    assert!(!only.plan);
    let dry = parse(&["helmdeck", "deploy", "rel", chart, "--dry-run"]).unwrap();
    assert!(!dry.plan);
    let plan_only = parse(&["helmdeck", "deploy", "rel", "c", "--plan-only"]).unwrap();
    assert!(plan_only.plan && plan_only.plan_only, "--plan-only plans");
    assert!(!parse(&["helmdeck", "deploy", "rel", "c"]).unwrap().plan);
    for conflict in [
        ["--plan", "--dry-run"],
        ["--plan-only", "--dry-run"],
        ["--plan", "--only=init"],
        ["--plan-only", "--only=rollout"],
    ] {
        let mut argv = vec!["helmdeck", "deploy", "rel", "c"];
        argv.extend(conflict);
        assert!(parse(&argv).is_err(), "{conflict:?}");
    }
}

/// Found by tests/fuzz (config_structured): a timeout past Duration's range panicked.
#[test]
fn timeout_too_long_for_a_duration_is_a_usage_error() {
    for t in ["18447000000000000000", "310000000000000000m"] {
        let err = parse(&["helmdeck", "deploy", "rel", "c", "--timeout", t]).expect_err(t);
        assert!(err.to_string().starts_with("--timeout: "), "{err}");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("helmdeck.toml"),
        "timeout = \"18447000000000000000\"\n",
    )
    .unwrap();
    assert!(parse(&["helmdeck", "deploy", "rel", dir.path().to_str().unwrap()]).is_err());
}

#[test]
fn the_namespace_is_the_flag_else_the_kube_contexts() {
    let asked = parse(&["helmdeck", "deploy", "rel", "c", "-n", "apps"]).unwrap();
    assert_eq!(asked.namespace_or("from-context"), "apps");
    let left = parse(&["helmdeck", "deploy", "rel", "c"]).unwrap();
    assert_eq!(left.namespace_or("from-context"), "from-context");
    let summary = crate::engine::model::PlanSummary::of(&left, left.namespace_or("ns"));
    assert_eq!(summary.namespace, "ns");
    assert_eq!(summary.release, "rel");
    assert_eq!(summary.timeout_secs, DEFAULT_TIMEOUT.as_secs());
}

fn parse_err(argv: &[&str]) -> ConfigError {
    let cli = crate::cli::Cli::try_parse_from(argv).expect("valid flags");
    match cli.command {
        crate::cli::Command::Deploy(a) => DeployPlan::from_args(&a).expect_err("a usage error"),
        _ => unreachable!(),
    }
}

#[test]
fn helms_rollback_flag_is_refused_naming_helmdecks_own() {
    for flag in ["--rollback-on-failure", "--atomic=true"] {
        let err = parse_err(&["helmdeck", "deploy", "rel", "c", "--", flag]);
        assert!(matches!(&err, ConfigError::HelmRollback(_)), "{err:?}");
        assert!(
            err.to_string()
                .contains("helmdeck's own --rollback-on-failure"),
            "{err}"
        );
    }
    let plan = parse(&[
        "helmdeck",
        "deploy",
        "rel",
        "c",
        "--rollback-on-failure",
        "--recover-lock",
        "--force",
    ])
    .expect("helmdeck's own flags");
    assert!(plan.rollback_on_failure && plan.recover_lock && plan.force);
    assert!(plan.extra.is_empty(), "never passed to helm");
    assert!(parse(&["helmdeck", "deploy", "rel", "c", "--force"]).is_err());
}

#[test]
fn errors_are_typed_and_the_chain_reads_as_before() {
    let err = parse_err(&["helmdeck", "deploy", "rel", "c", "--", "--wait=watcher"]);
    assert!(
        matches!(&err, ConfigError::HelmWaits(f) if f == "--wait"),
        "{err:?}"
    );
    let err = parse_err(&["helmdeck", "deploy", "rel", "c", "--optional", "["]);
    assert!(matches!(err, ConfigError::Optional(_)), "{err:?}");
    assert!(
        format!("{:#}", eyre!(err)).starts_with("--optional: invalid glob \"[\": "),
        "the edge prints the whole chain"
    );
    let err = parse_err(&[
        "helmdeck",
        "deploy",
        "rel",
        "c",
        "-f",
        "/nonexistent/v.yaml",
    ]);
    let ConfigError::ValuesUnreadable { source, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
}

fn chart_with_file(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("helmdeck.toml"), text).unwrap();
    let chart = dir.path().to_str().unwrap().to_string();
    (dir, chart)
}

#[test]
fn a_bare_number_in_the_file_is_seconds_as_the_flag_reads_it() {
    for (text, secs) in [("timeout = 30\n", 30.0), ("timeout = 1.5\n", 1.5)] {
        let (_dir, chart) = chart_with_file(text);
        let plan = parse(&["helmdeck", "deploy", "rel", &chart]).unwrap();
        assert_eq!(plan.timeout, Duration::from_secs_f64(secs), "{text}");
    }
    let flag = parse(&["helmdeck", "deploy", "rel", "c", "--timeout", "30"]).unwrap();
    assert_eq!(flag.timeout, Duration::from_secs(30));
    for text in ["timeout = 0\n", "timeout = -5\n", "timeout = 0.5\n"] {
        let (_dir, chart) = chart_with_file(text);
        assert!(
            parse(&["helmdeck", "deploy", "rel", &chart]).is_err(),
            "{text}"
        );
    }
}

#[test]
fn helm_gets_the_timeout_as_go_reads_it() {
    let plan = |t: &str| parse(&["helmdeck", "deploy", "rel", "c", "--timeout", t]).unwrap();
    assert_eq!(plan("5m").helm_timeout(), "300s");
    assert_eq!(plan("1.5s").helm_timeout(), "1.5s");
    assert_eq!(plan("2562047h").helm_timeout(), "9223369200s");
}

#[test]
fn a_broken_settings_file_is_named_by_line_without_its_text() {
    let (_dir, chart) = chart_with_file("namespace = \"apps\"\napi-token = \"hunter2\n");
    let err = parse_err(&["helmdeck", "deploy", "rel", &chart]);
    let text = format!("{:#}", eyre!(err));
    assert!(text.contains("helmdeck.toml: line 2, column "), "{text}");
    assert!(!text.contains("hunter2") && !text.contains('\n'), "{text}");
    let (_dir, chart) = chart_with_file("values = \"hunter4\"\n");
    let text = format!(
        "{:#}",
        eyre!(parse_err(&["helmdeck", "deploy", "rel", &chart]))
    );
    assert!(
        text.contains("line 1, column 10: invalid type: string \"***\""),
        "{text}"
    );
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    let refused = |argv: &[&str]| match parse_err(argv) {
        ConfigError::Input(e) => e.to_string(),
        other => panic!("{argv:?}: {other:?}"),
    };
    let base = ["helmdeck", "deploy"];
    let with = |more: &[&'static str]| [&base[..], more].concat();
    assert!(refused(&with(&["Demo", "c"])).starts_with("release name \"Demo\""));
    assert!(refused(&with(&["demo", "c", "-n", ""])).starts_with("namespace \"\""));
    assert!(refused(&with(&["demo", "c", "--timeout", "500ms"])).contains("under a second"));
    assert!(refused(&with(&["demo", "c", "--timeout", "3000000h"])).contains("maximum"));
    assert!(refused(&with(&["demo", "c", "--", "-n", "x"])).starts_with("-n among"));
    assert!(refused(&with(&["demo", "c", "--optional", "Pod/x"])).contains("unknown kind"));
    assert!(
        refused(&with(&["demo", "c", "--report", "/nonexistent-dir/r.json"]))
            .contains("does not exist")
    );
}

#[test]
fn lock_min_age_is_a_flag_or_a_file_key_and_defaults_to_10m() {
    let plan = parse(&["helmdeck", "deploy", "rel", "c"]).unwrap();
    assert_eq!(plan.lock_min_age, DEFAULT_LOCK_MIN_AGE);
    assert_eq!(DEFAULT_LOCK_MIN_AGE, Duration::from_secs(600));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("helmdeck.toml"), "lock-min-age = \"2m\"\n").unwrap();
    let chart = dir.path().to_str().unwrap();
    let plan = parse(&["helmdeck", "deploy", "rel", chart]).unwrap();
    assert_eq!(plan.lock_min_age, Duration::from_secs(120));
    let plan = parse(&["helmdeck", "deploy", "rel", chart, "--lock-min-age", "1s"]).unwrap();
    assert_eq!(plan.lock_min_age, Duration::from_secs(1), "the flag wins");
    let err = parse_err(&["helmdeck", "deploy", "rel", "c", "--lock-min-age", "soon"]);
    assert!(matches!(err, ConfigError::LockMinAge(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("--lock-min-age: \"soon\" is not a duration"),
        "{err}"
    );
}

#[test]
fn the_init_selector_is_one_label_equality_read_from_the_flag_or_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("helmdeck.toml"),
        "init-toggle = \"x.enabled\"\ninit-job = \"x-init\"\ninit-selector = \"app.kubernetes.io/component=xnat-init\"\n",
    )
    .unwrap();
    let chart = dir.path().to_str().unwrap();
    let plan = parse(&["helmdeck", "deploy", "rel", chart]).unwrap();
    let selector = plan.init_selector.unwrap();
    assert_eq!(
        (selector.key.as_str(), selector.value.as_str()),
        ("app.kubernetes.io/component", "xnat-init")
    );
    let plan = parse(&[
        "helmdeck",
        "deploy",
        "rel",
        chart,
        "--init-selector",
        "tier==init",
    ])
    .unwrap();
    assert_eq!(plan.init_selector.unwrap().to_string(), "tier=init");
    for bad in [
        "tier",
        "tier=a b",
        "=init",
        "tier!=init",
        "a/b/c=d",
        "tier=init,x=y",
    ] {
        let err = parse(&["helmdeck", "deploy", "rel", chart, "--init-selector", bad])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("--init-selector "), "{bad}: {err}");
    }
    // Without the init step there is nothing to select.
    let err = parse(&[
        "helmdeck",
        "deploy",
        "rel",
        "/nonexistent-chart-dir",
        "--init-selector",
        "a=b",
    ])
    .unwrap_err()
    .to_string();
    assert!(err.contains("needs --init-toggle and --init-job"), "{err}");
}

#[test]
fn failures_allowed_per_replica_is_off_by_default_a_flag_or_a_file_key_and_never_negative() {
    let plan = parse(&["helmdeck", "deploy", "rel", "c"]).unwrap();
    assert_eq!(plan.failures_allowed_per_replica, None, "off by default");
    let (_dir, chart) = chart_with_file("failures-allowed-per-replica = 2\n");
    let plan = parse(&["helmdeck", "deploy", "rel", &chart]).unwrap();
    assert_eq!(plan.failures_allowed_per_replica, Some(2));
    let flag = ["--failures-allowed-per-replica", "0"];
    let plan = parse(&["helmdeck", "deploy", "rel", &chart, flag[0], flag[1]]).unwrap();
    assert_eq!(plan.failures_allowed_per_replica, Some(0), "the flag wins");
    for bad in ["-1", "1.5", "many"] {
        let argv = ["helmdeck", "deploy", "rel", "c", flag[0], bad];
        assert!(parse(&argv).is_err(), "{bad}");
    }
    for text in [
        "failures-allowed-per-replica = -1\n",
        "failures-allowed-per-replica = \"1\"\n",
    ] {
        let (_dir, chart) = chart_with_file(text);
        let err = parse_err(&["helmdeck", "deploy", "rel", &chart]);
        assert!(
            matches!(err, ConfigError::ParseFile { .. }),
            "{text}: {err:?}"
        );
    }
}

#[test]
fn targets_come_from_the_flags_else_the_files_tables_each_labelled() {
    let (dir, chart) = chart_with_file(
        "namespace = \"flip\"\nset = [\"a=1\"]\n\
         [[target]]\nlabel = \"gstt\"\ncontext = \"gstt-prod\"\nvalues = [\"gstt.yaml\"]\nset = [\"site=gstt\"]\n\
         [[target]]\ncontext = \"arn:aws:eks:eu-west-2:1:cluster/kch\"\nnamespace = \"kch\"\n",
    );
    std::fs::write(dir.path().join("gstt.yaml"), "site: gstt\n").unwrap();
    let plan = parse(&["helmdeck", "deploy", "r", &chart, "--set", "b=2"]).unwrap();
    let labels: Vec<&str> = plan.targets.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["gstt", "arn:aws:eks:eu-west-2:1:cluster/kch"]);
    assert_eq!(plan.targets[0].values, [dir.path().join("gstt.yaml")]);

    // A target's plan: its context, its namespace else the deploy's, its values after.
    let gstt = plan.for_target(&plan.targets[0]);
    assert_eq!(gstt.context.as_deref(), Some("gstt-prod"));
    assert_eq!(gstt.namespace.as_deref(), Some("flip"));
    assert_eq!(gstt.set, ["a=1", "b=2", "site=gstt"]);
    assert_eq!(gstt.values.last(), Some(&dir.path().join("gstt.yaml")));
    assert!(gstt.targets.is_empty());
    let kch = plan.for_target(&plan.targets[1]);
    assert_eq!(kch.namespace.as_deref(), Some("kch"));
    assert_eq!(kch.set, ["a=1", "b=2"]);

    // --target replaces the tables.
    let plan = parse(&["helmdeck", "deploy", "r", &chart, "--target", "other"]).unwrap();
    assert_eq!(plan.targets.len(), 1);
    assert_eq!(
        (
            plan.targets[0].label.as_str(),
            plan.targets[0].context.as_str()
        ),
        ("other", "other")
    );
    // No target: the single deploy, as before.
    assert!(
        parse(&["helmdeck", "deploy", "r", "./c"])
            .unwrap()
            .targets
            .is_empty()
    );
}

#[test]
fn a_fleet_refuses_what_cannot_apply_to_every_target() {
    let err = |argv: &[&str]| parse_err(argv).to_string();
    let base = ["helmdeck", "deploy", "r", "./c"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        base.iter().chain(extra).copied().collect()
    };
    for flag in [
        &["--parallel", "2"][..],
        &["--canary", "a"],
        &["--stop-on-failure"],
    ] {
        let said = err(&with(flag));
        assert!(said.contains("needs targets"), "{flag:?}: {said}");
    }
    assert!(err(&with(&["--target", "a", "--canary", "b"])).contains("--canary b"));
    assert!(err(&with(&["--target", "a", "--events", "-"])).contains("--events"));
    assert!(err(&with(&["--target", "a", "-f", "-"])).contains("-f -"));
    // Two labels making one file name would overwrite each other's report.
    let said = err(&with(&["--target", "a:b", "--target", "a/b"]));
    assert!(said.contains("a-b"), "{said}");
    // --kube-context and --target: clap refuses the pair.
    assert!(parse(&with(&["--target", "a", "--kube-context", "b"])).is_err());
    // The canary may be named by its context.
    let plan = parse(&with(&["--target", "a", "--target", "b", "--canary", "b"])).unwrap();
    assert_eq!(plan.targets.len(), 2);
}

/// The fleet's flags are deploy's (and the demo's) alone: `inspect` and `watch` judge one
/// cluster and refuse them as unknown flags.
#[test]
fn only_deploy_and_demo_take_the_fleets_flags() {
    use clap::Parser;
    for argv in [
        &["helmdeck", "inspect", "r", "--target", "a"][..],
        &["helmdeck", "watch", "r", "--target", "a"],
        &["helmdeck", "inspect", "r", "--parallel", "2"],
    ] {
        assert!(crate::cli::Cli::try_parse_from(argv).is_err(), "{argv:?}");
    }
    for argv in [
        &[
            "helmdeck",
            "deploy",
            "r",
            "./c",
            "--target",
            "a",
            "--parallel",
            "2",
        ][..],
        &["helmdeck", "demo", "--fleet", "3", "--canary", "site-1"],
    ] {
        assert!(crate::cli::Cli::try_parse_from(argv).is_ok(), "{argv:?}");
    }
}
