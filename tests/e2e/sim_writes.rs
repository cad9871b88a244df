//! Writes as a real API server takes them, seen through the real kubectl and helm: every
//! `kubectl create` subcommand (kubectl 1.35 sends their bodies as protobuf), server-side apply
//! conflicts between field managers, a chart rendering `null` installed and upgraded by helm
//! 4's server-side apply, and the 403 of a `forbidden` fault.

use serde_json::Value;

use crate::support::{Sim, text};

/// Whether every field of `want` is in `have` with the same value (`have` may hold more: the
/// server's defaults and metadata); the first path that differs otherwise.
fn subset(want: &Value, have: &Value, at: &str) -> Result<(), String> {
    match (want, have) {
        (Value::Object(w), Value::Object(h)) => w.iter().try_for_each(|(k, v)| {
            let next = format!("{at}.{k}");
            match h.get(k) {
                Some(hv) => subset(v, hv, &next),
                // `{}` and `[]` are what Go writes for an empty struct or list: no field at all.
                None if v.as_object().is_some_and(|o| o.is_empty()) => Ok(()),
                None => Err(format!("{next}: missing (want {v})")),
            }
        }),
        (Value::Array(w), Value::Array(h)) if w.len() == h.len() => w
            .iter()
            .zip(h)
            .enumerate()
            .try_for_each(|(i, (wv, hv))| subset(wv, hv, &format!("{at}[{i}]"))),
        _ if want == have => Ok(()),
        _ => Err(format!("{at}: want {want}, have {have}")),
    }
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(out)))
}

/// The object as the client built it, without what the server alone sets.
fn sent(mut obj: Value) -> Value {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("creationTimestamp");
    }
    if let Some(o) = obj.as_object_mut() {
        o.remove("status");
    }
    obj
}

#[test]
fn every_kubectl_create_subcommand_creates_what_kubectl_sent() {
    let sim = Sim::start("all-green");
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "clusterrole",
                "cr1",
                "--verb=get,list",
                "--resource=pods,deployments.apps",
            ],
            "clusterrole/cr1",
        ),
        (
            &[
                "clusterrolebinding",
                "crb1",
                "--clusterrole=cr1",
                "--user=u",
                "--serviceaccount=apps:sa1",
            ],
            "clusterrolebinding/crb1",
        ),
        (&["configmap", "cm1", "--from-literal=a=b"], "configmap/cm1"),
        (
            &[
                "cronjob",
                "cj1",
                "--image=busybox",
                "--schedule=*/5 * * * *",
                "--",
                "date",
            ],
            "cronjob/cj1",
        ),
        (
            &[
                "deployment",
                "d1",
                "--image=nginx:1.27",
                "--replicas=0",
                "--port=80",
            ],
            "deployment/d1",
        ),
        (
            &[
                "ingress",
                "ing1",
                "--class=nginx",
                "--rule=foo.com/bar*=svc1:8080,tls=s1",
                "--default-backend=svc2:http",
            ],
            "ingress/ing1",
        ),
        (
            &["job", "j1", "--image=busybox", "--", "sh", "-c", "exit 0"],
            "job/j1",
        ),
        (&["namespace", "ns1"], "namespace/ns1"),
        (
            &[
                "poddisruptionbudget",
                "pdb1",
                "--selector=app=x",
                "--min-available=50%",
            ],
            "poddisruptionbudget/pdb1",
        ),
        (
            &[
                "priorityclass",
                "pc1",
                "--value=1000",
                "--description=high",
                "--preemption-policy=Never",
            ],
            "priorityclass/pc1",
        ),
        (
            &[
                "quota",
                "q1",
                "--hard=pods=2,requests.cpu=500m",
                "--scopes=BestEffort",
            ],
            "resourcequota/q1",
        ),
        (
            &[
                "role",
                "r1",
                "--verb=get",
                "--resource=pods",
                "--resource-name=p1",
            ],
            "role/r1",
        ),
        (
            &["rolebinding", "rb1", "--role=r1", "--group=g"],
            "rolebinding/rb1",
        ),
        (
            &[
                "secret",
                "generic",
                "s1",
                "--from-literal=a=b",
                "--type=Opaque",
            ],
            "secret/s1",
        ),
        (
            &[
                "secret",
                "docker-registry",
                "s2",
                "--docker-server=r.io",
                "--docker-username=u",
                "--docker-password=p",
            ],
            "secret/s2",
        ),
        (
            &["secret", "tls", "s3", "--cert=CERT", "--key=KEY"],
            "secret/s3",
        ),
        (
            &["service", "clusterip", "svc1", "--tcp=80:8080"],
            "service/svc1",
        ),
        (
            &[
                "service",
                "nodeport",
                "svc2",
                "--tcp=80:http",
                "--node-port=30080",
            ],
            "service/svc2",
        ),
        (
            &["service", "loadbalancer", "svc3", "--tcp=443:8443"],
            "service/svc3",
        ),
        (
            &[
                "service",
                "externalname",
                "svc4",
                "--external-name=x.example.com",
            ],
            "service/svc4",
        ),
        (&["serviceaccount", "sa1"], "serviceaccount/sa1"),
    ];
    // A TLS secret needs a real key pair: kubectl parses both files.
    let (cert, key) = tls_pair(&sim);
    let mut failures = Vec::new();
    for (args, object) in cases {
        let args: Vec<String> = args
            .iter()
            .map(|a| a.replace("CERT", &cert).replace("KEY", &key))
            .collect();
        // Flags before the arguments: some end with `--` and a command.
        let create: Vec<&str> = ["create", "-n", "apps"]
            .into_iter()
            .chain(args.iter().map(String::as_str))
            .collect();
        let dry: Vec<&str> = ["create", "-n", "apps", "--dry-run=client", "-o", "json"]
            .into_iter()
            .chain(args.iter().map(String::as_str))
            .collect();
        let want = sent(json_of(&sim.kubectl(&dry)));
        let out = sim.kubectl(&create);
        if !out.status.success() {
            failures.push(format!("kubectl {}: {}", create.join(" "), text(&out)));
            continue;
        }
        let have = json_of(&sim.kubectl(&["get", object, "-n", "apps", "-o", "json"]));
        if let Err(diff) = subset(&want, &have, "") {
            failures.push(format!("{object}: {diff}\nstored: {have}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A self-signed certificate and key (kubectl checks that they are a pair), made by openssl
/// into the sim's directory; skipped (placeholders fail the case) without openssl.
fn tls_pair(sim: &Sim) -> (String, String) {
    let dir = sim.home();
    let (cert, key) = (dir.join("tls.crt"), dir.join("tls.key"));
    let made = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=x",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("run openssl");
    assert!(made.status.success(), "openssl: {}", text(&made));
    (cert.display().to_string(), key.display().to_string())
}

#[test]
fn a_second_field_manager_conflicts_until_it_forces() {
    let sim = Sim::start("all-green");
    let manifest = |replicas: u32| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: apps}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: c, image: 'nginx:1'}}]}}\n"
        )
    };
    let apply = |manager: &str, replicas: u32, extra: &[&str]| {
        let path = sim.home().join(format!("{manager}-{replicas}.yaml"));
        std::fs::write(&path, manifest(replicas)).expect("write manifest");
        let mut args = vec!["apply", "--server-side", "-f", path.to_str().unwrap()];
        let flag = format!("--field-manager={manager}");
        args.push(&flag);
        args.extend_from_slice(extra);
        sim.kubectl(&args)
    };
    let out = apply("a", 2, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let out = apply("b", 3, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "Apply failed with 1 conflict: conflict with \"a\" using apps/v1: .spec.replicas"
        ),
        "{stderr}"
    );
    let replicas = |sim: &Sim| {
        json_of(&sim.kubectl(&["get", "deployment/web", "-n", "apps", "-o", "json"]))["spec"]
            ["replicas"]
            .clone()
    };
    assert_eq!(replicas(&sim), 2, "a refused apply changes nothing");
    let out = apply("b", 3, &["--force-conflicts"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(replicas(&sim), 3);
    // Ownership moved: now `a` is the one that conflicts.
    let out = apply("a", 2, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("conflict with \"b\" using apps/v1: .spec.replicas"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_chart_rendering_null_installs_and_upgrades_with_server_side_apply() {
    let sim = Sim::start("all-green");
    let chart = sim.home().join("nullchart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: nullchart\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(chart.join("values.yaml"), "image: 'nats:2.10'\n").unwrap();
    std::fs::write(
        chart.join("templates/sts.yaml"),
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: nats\n  labels: {app: nats}\nspec:\n  replicas: 1\n  serviceName: nats\n  selector: {matchLabels: {app: nats}}\n  volumeClaimTemplates: null\n  template:\n    metadata:\n      labels: {app: nats}\n      annotations: {gone: null}\n    spec:\n      containers:\n      - name: nats\n        image: {{ .Values.image | quote }}\n",
    )
    .unwrap();
    let chart = chart.to_str().unwrap();
    let install = |image: &str| {
        sim.helm(&[
            "upgrade",
            "--install",
            "nats",
            chart,
            "-n",
            "apps",
            "--set",
            &format!("image={image}"),
        ])
    };
    let out = install("nats:2.10");
    assert!(out.status.success(), "install: {}", text(&out));
    let sts = json_of(&sim.kubectl(&[
        "get",
        "statefulset/nats",
        "-n",
        "apps",
        "-o",
        "json",
        "--show-managed-fields",
    ]));
    assert!(sts["spec"].get("volumeClaimTemplates").is_none(), "{sts}");
    assert!(
        sts["spec"]["template"]["metadata"]
            .get("annotations")
            .is_none(),
        "{sts}"
    );
    let managers = &sts["metadata"]["managedFields"];
    assert_eq!(
        (&managers[0]["manager"], &managers[0]["operation"]),
        (&Value::from("helm"), &Value::from("Apply")),
        "helm 4 installs by server-side apply: {managers}"
    );
    let out = install("nats:2.11");
    assert!(out.status.success(), "upgrade: {}", text(&out));
    let sts = json_of(&sim.kubectl(&["get", "statefulset/nats", "-n", "apps", "-o", "json"]));
    assert_eq!(
        sts["spec"]["template"]["spec"]["containers"][0]["image"],
        "nats:2.11"
    );
}

#[test]
fn kubectl_get_secrets_under_a_forbidden_fault_prints_rbacs_error() {
    let sim = Sim::start_yaml(
        "faults:\n  - {do: forbidden, resources: [secrets], verbs: [get, list, watch], namespace: apps, user: 'system:serviceaccount:apps:deployer'}\n",
    );
    let out = sim.kubectl(&["get", "secrets", "-n", "apps"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (Forbidden): secrets is forbidden: User \"system:serviceaccount:apps:deployer\" cannot list resource \"secrets\" in API group \"\" in the namespace \"apps\""
    );
    // Other namespaces and other resources are untouched.
    let out = sim.kubectl(&["get", "secrets", "-n", "default"]);
    assert!(out.status.success(), "{}", text(&out));
    let out = sim.kubectl(&["get", "configmaps", "-n", "apps"]);
    assert!(out.status.success(), "{}", text(&out));
}
