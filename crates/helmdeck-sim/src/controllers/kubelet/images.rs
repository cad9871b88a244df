//! What the kubelet derives from a pod spec without running anything: image names and IDs,
//! the pull error a missing image gives, the QoS class, and the exit code of a shell command.

use serde_json::Value;

use super::super::fnv;

/// The exit code a run-to-completion pod's first container ends with when its command is a
/// shell whose script ends in `exit N` (`["sh","-c","exit 3"]`, or `sh -c` with the script in
/// `args`), as busybox would on a real cluster: the kubelet runs no images, so this is the one
/// command it honours. None: the scenario's job rule decides.
pub(crate) fn shell_exit(pod: &Value) -> Option<i32> {
    let c = pod.pointer("/spec/containers/0")?;
    let strs = |k: &str| -> Vec<&str> {
        c[k].as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let argv: Vec<&str> = strs("command").into_iter().chain(strs("args")).collect();
    let [shell, "-c", script, ..] = argv.as_slice() else {
        return None;
    };
    let shell = shell.rsplit('/').next().unwrap_or(shell);
    if !matches!(shell, "sh" | "bash" | "ash" | "dash") {
        return None;
    }
    let last = script
        .split(['\n', ';'])
        .map(str::trim)
        .rfind(|s| !s.is_empty())?;
    let code = last.strip_prefix("exit")?.trim();
    // `exit` alone keeps the last command's status, which the simulator cannot know.
    code.parse::<i32>().ok().map(|n| n & 0xff)
}

fn full_image(img: &str) -> String {
    let first = img.split('/').next().unwrap_or("");
    let mut full = if !img.contains('/') {
        format!("docker.io/library/{img}")
    } else if first.contains('.') || first.contains(':') || first == "localhost" {
        img.to_string()
    } else {
        format!("docker.io/{img}")
    };
    let last = full.rsplit('/').next().unwrap_or("");
    if !last.contains(':') && !last.contains('@') {
        full.push_str(":latest");
    }
    full
}

pub(super) fn pull_error_detail(img: &str) -> String {
    let full = full_image(img);
    format!(
        "rpc error: code = NotFound desc = failed to pull and unpack image \"{full}\": failed to resolve reference \"{full}\": {full}: not found"
    )
}

pub(super) fn pull_error(img: &str) -> String {
    format!("Failed to pull image \"{img}\": {}", pull_error_detail(img))
}

pub(super) fn image_id(img: &str) -> String {
    let full = full_image(img);
    let repo = full
        .rsplit_once(':')
        .filter(|(_, tag)| !tag.contains('/'))
        .map_or(full.as_str(), |(r, _)| r);
    let h = fnv(img.as_bytes());
    format!(
        "{repo}@sha256:{h:016x}{:016x}{:016x}{:016x}",
        h.rotate_left(13),
        h.rotate_left(29),
        h.rotate_left(41)
    )
}

/// The pod QoS class from its containers' requests and limits.
pub(crate) fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|k| spec.get(*k).and_then(Value::as_array))
        .flatten()
        .collect();
    let mut any = false;
    let mut guaranteed = !containers.is_empty();
    for c in &containers {
        let req = c.pointer("/resources/requests").and_then(Value::as_object);
        let lim = c.pointer("/resources/limits").and_then(Value::as_object);
        if req.is_some_and(|r| !r.is_empty()) || lim.is_some_and(|l| !l.is_empty()) {
            any = true;
        }
        for res in ["cpu", "memory"] {
            let l = lim.and_then(|l| l.get(res));
            let r = req.and_then(|r| r.get(res));
            if l.is_none() || r.is_some_and(|r| Some(r) != l) {
                guaranteed = false;
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}
