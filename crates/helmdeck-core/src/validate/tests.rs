use super::*;

#[test]
fn release_names_follow_helms_rule() {
    for ok in [
        "demo",
        "a",
        "demo-app",
        "demo.app",
        "x1.y-2",
        &"a".repeat(53),
    ] {
        assert!(release_name(ok).is_ok(), "{ok:?}");
    }
    for bad in [
        "",
        "Demo",
        "demo_app",
        "demo,app=x",
        "demo=x",
        "demo/x",
        "-demo",
        "demo-",
        "demo.",
        ".demo",
        "de..mo",
        "démo",
        "demo app",
        &"a".repeat(54),
    ] {
        let err = release_name(bad).expect_err(bad);
        assert!(err.to_string().starts_with("release name"), "{err}");
    }
}

#[test]
fn namespaces_are_dns_labels() {
    for ok in ["apps", "a", "kube-system", "a1", &"n".repeat(63)] {
        assert!(namespace(ok).is_ok(), "{ok:?}");
    }
    for bad in [
        "",
        "Apps",
        "apps.x",
        "apps_x",
        "-apps",
        "apps-",
        &"n".repeat(64),
    ] {
        assert!(namespace(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn a_missing_local_chart_is_refused_and_references_pass() {
    let dir = tempfile::tempdir().unwrap();
    let existing = dir.path().to_str().unwrap();
    for ok in [
        existing,
        "repo/name",
        "oci://registry.example/charts/app",
        "https://example.com/app-1.0.0.tgz",
        "bare-name",
        "c",
    ] {
        assert!(chart(ok).is_ok(), "{ok:?}");
    }
    for bad in ["./no-such-chart", "../no-such", "/no/such/chart", "."] {
        if Path::new(bad).exists() {
            continue;
        }
        let err = chart(bad).expect_err(bad);
        assert!(err.to_string().starts_with("chart path"), "{err}");
    }
    assert!(matches!(chart(" "), Err(InputError::ChartEmpty)));
}

/// Each of these was run through `helm template -f` (helm v4.1.4): it reads only the first
/// document, takes the last of repeated keys and wants a map at the top.
#[test]
fn values_files_are_judged_as_helm_reads_them() {
    let p = Path::new("v.yaml");
    for ok in [
        "a: 1\n",
        "",
        "# only a comment\n",
        "~\n",
        "a: 1\na: 2\n",
        "a: 1\n---\nb: 2\n",
        "---\n---\na: 1\n",
        "a: 1\n...\ngarbage: [\n",
        "base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n",
        "1: a\ntrue: b\n",
        "\u{feff}a: 1\n",
        "--- {a: 1}\n",
        "a: |\n  ---\n  text\n",
    ] {
        assert!(
            values_text(p, ok.as_bytes()).is_ok(),
            "{ok:?}: {:?}",
            values_text(p, ok.as_bytes())
        );
    }
    for list in ["- a\n- b\n", "hello\n", "42\n"] {
        assert!(
            matches!(
                values_text(p, list.as_bytes()),
                Err(InputError::ValuesNotMap(_))
            ),
            "{list:?}"
        );
    }
    for broken in ["a: [1\n", "a: 1\n\t b: 2\n", "password: \"hunter2\n"] {
        let err = values_text(p, broken.as_bytes()).expect_err(broken);
        let text = err.to_string();
        assert!(text.contains("is not YAML"), "{text}");
        assert!(!text.contains("hunter2") && !text.contains('\n'), "{text}");
    }
    for binary in [&b"a: 1\n\x00"[..], b"\xff\xfe\x00a"] {
        assert!(matches!(
            values_text(p, binary),
            Err(InputError::ValuesBinary(_))
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        values_file(dir.path()),
        Err(InputError::ValuesDirectory(_))
    ));
    assert!(values_file(Path::new("-")).is_ok());
    assert!(values_file(Path::new("https://example.com/v.yaml")).is_ok());
}

#[test]
fn timeouts_fit_helm_and_the_waits() {
    assert!(timeout("1s", Duration::from_secs(1)).is_ok());
    assert!(timeout("1.5s", Duration::from_millis(1500)).is_ok());
    assert!(timeout("max", MAX_TIMEOUT).is_ok());
    assert!(matches!(
        timeout("2562048h", Duration::from_secs(2_562_048 * 3600)),
        Err(InputError::TimeoutTooLong(_))
    ));
    assert!(matches!(
        timeout("500ms", Duration::from_millis(500)),
        Err(InputError::TimeoutSubSecond(_))
    ));
}

#[test]
fn helmdecks_own_flags_among_the_helm_arguments() {
    let refused = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        extra_args(&args).err().map(|e| e.to_string())
    };
    for args in [
        &["--namespace", "x"][..],
        &["--namespace=x"],
        &["-n", "x"],
        &["-nx"],
        &["-n=x"],
        &["-in", "x"],
        &["--kube-context", "c"],
        &["--kube-context=c"],
        &["--kubeconfig", "/k"],
    ] {
        assert!(refused(args).is_some(), "{args:?}");
    }
    for args in [
        &["--history-max", "3"][..],
        &["--install"],
        &["-i"],
        &["--description", "new"],
        &["-f", "n.yaml"],
        &["--create-namespace"],
    ] {
        assert_eq!(refused(args), None, "{args:?}");
    }
    assert!(
        refused(&["-n", "x"])
            .unwrap()
            .starts_with("-n among the helm arguments")
    );
}

#[test]
fn deny_list_patterns_name_a_watched_kind() {
    for ok in [
        "demo-*",
        "Deployment/*-gpu",
        "statefulset/db",
        "DaemonSet/agent",
    ] {
        assert!(optional_pattern(ok).is_ok(), "{ok}");
    }
    assert!(matches!(
        optional_pattern(""),
        Err(InputError::OptionalEmpty)
    ));
    assert!(matches!(
        optional_pattern("Deployment/"),
        Err(InputError::OptionalNoName(_))
    ));
    assert!(matches!(
        optional_pattern("Deploymnt/x"),
        Err(InputError::OptionalKind { .. })
    ));
    assert!(matches!(
        optional_pattern("Job/x"),
        Err(InputError::OptionalKind { .. })
    ));
}

#[test]
fn report_paths_are_checked_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    assert!(report_path(&dir.path().join("r.json")).is_ok());
    assert!(matches!(
        report_path(dir.path()),
        Err(InputError::ReportIsDirectory { .. })
    ));
    assert!(matches!(
        report_path(&dir.path().join("missing/r.json")),
        Err(InputError::ReportNoDirectory { .. })
    ));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "the check leaves nothing behind"
    );
    assert_eq!(parent_dir(Path::new("r.json")), Path::new("."));
}

#[test]
fn value_flags_and_their_masking() {
    let args: Vec<String> = [
        "--set",
        "a=1",
        "--set-json=b={}",
        "--history-max",
        "3",
        "--set-file",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(
        value_flags(&args),
        vec![
            ("--set".to_string(), "a=1".to_string()),
            ("--set-json".to_string(), "b={}".to_string())
        ]
    );
    assert_eq!(
        mask_value(
            "failed parsing --set data: key \"set-hunter2\" has no value",
            "db.password=abc,set-hunter2"
        ),
        "failed parsing --set data: key \"***\" has no value"
    );
    assert_eq!(
        mask_value(
            "failed parsing --set-json data a={json-hunter2",
            "a={json-hunter2"
        ),
        "failed parsing --set-json data ***"
    );
}

#[test]
fn cast_sizes_are_cols_by_rows_within_the_screens_range() {
    assert_eq!(cast_size("120x36").unwrap(), (120, 36));
    assert_eq!(cast_size("40X12").unwrap(), (40, 12));
    for bad in [
        "", "120", "x36", "120x", "39x36", "120x11", "501x36", "120x201", "-1x5", "1e2x30",
    ] {
        let e = cast_size(bad).unwrap_err();
        assert!(matches!(e, InputError::CastSize(_)), "{bad}");
        assert!(e.to_string().starts_with("--size "), "{e}");
    }
}
