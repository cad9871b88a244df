//! Bad input to the simulator gets a Kubernetes `Status`, never a crash.

use std::io::{Read, Write};
use std::net::TcpStream;

use serde_json::Value;

use crate::support::Sim;

/// Sends one raw request; returns the status code and the body.
fn request(sim: &Sim, method: &str, path: &str, content_type: &str, body: &[u8]) -> (u16, String) {
    let host = sim.url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let code = response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (code, body)
}

fn status(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not a Status ({e}): {body}"))
}

#[test]
fn malformed_bodies_get_a_status_400_and_the_server_keeps_serving() {
    let sim = Sim::start("all-green");
    let cases: [(&str, &str, &str, &[u8]); 5] = [
        (
            "POST",
            "/apis/apps/v1/namespaces/apps/deployments",
            "application/json",
            b"{not json",
        ),
        (
            "POST",
            "/apis/apps/v1/namespaces/apps/deployments",
            "application/json",
            b"[1, 2, 3]",
        ),
        (
            "POST",
            "/api/v1/namespaces/apps/secrets",
            "application/vnd.kubernetes.protobuf",
            b"k8s\x00\x0a\xff\xff\xff",
        ),
        (
            "PUT",
            "/api/v1/namespaces/apps/configmaps/x",
            "application/json",
            b"\xff\xfe",
        ),
        (
            "GET",
            "/api/v1/namespaces/apps/pods?labelSelector=a%20in%20b",
            "application/json",
            b"",
        ),
    ];
    for (method, path, ct, body) in cases {
        let (code, text) = request(&sim, method, path, ct, body);
        assert_eq!(code, 400, "{method} {path}: {text}");
        let s = status(&text);
        assert_eq!(
            (s["kind"].as_str(), s["code"].as_i64()),
            (Some("Status"), Some(400)),
            "{s}"
        );
    }
    let (code, text) = request(
        &sim,
        "PATCH",
        "/apis/apps/v1/namespaces/apps/deployments/x",
        "text/plain",
        b"{}",
    );
    assert_eq!(code, 415, "{text}");
    let (code, text) = request(
        &sim,
        "GET",
        "/apis/apps/v1/namespaces/apps/nothings",
        "application/json",
        b"",
    );
    assert_eq!(
        (code, status(&text)["reason"].as_str()),
        (404, Some("NotFound"))
    );
    // Still alive and well.
    let (code, text) = request(&sim, "GET", "/version", "application/json", b"");
    assert_eq!(code, 200, "{text}");
}

#[test]
fn an_unreadable_scenario_names_the_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "namespaces: [apps]\nworkloads:\n  - match: '*-web'\n    start_after: soon\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_helmdeck"))
        .args(["sim", "--scenario", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 4") && err.contains("start_after") && err.contains("not a duration"),
        "{err}"
    );
}
