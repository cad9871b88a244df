//! The commands helmdeck prints as advice (the next step after exit 3, a rollback, a lock's
//! recovery). Each is complete and shell-quoted (POSIX `sh`), so it runs exactly as printed, and
//! none carries a value: `--only init` reads the deployed revision's values from its record.

use std::borrow::Cow;

/// One word, quoted for `sh` only when it needs to be.
pub fn quote(word: &str) -> Cow<'_, str> {
    match shlex::try_quote(word) {
        Ok(quoted) => quoted,
        // A NUL cannot reach a program's argv at all; drop it rather than print something
        // that cannot run.
        Err(_) => Cow::Owned(quote(&word.replace('\0', "")).into_owned()),
    }
}

/// The words as one command line.
pub fn join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `-n NS [--kube-context CTX]` as helm spells it.
pub fn helm_scope(namespace: &str, context: Option<&str>) -> Vec<String> {
    let mut words = vec!["-n".to_string(), namespace.to_string()];
    if let Some(context) = context {
        words.extend(["--kube-context".to_string(), context.to_string()]);
    }
    words
}

/// `helm rollback RELEASE REVISION -n NS [--kube-context CTX]`.
pub fn helm_rollback(
    release: &str,
    revision: i64,
    namespace: &str,
    context: Option<&str>,
) -> String {
    let mut words = vec![
        "helm".to_string(),
        "rollback".into(),
        release.into(),
        revision.to_string(),
    ];
    words.extend(helm_scope(namespace, context));
    join(&words)
}

/// `helm history RELEASE -n NS [--kube-context CTX]`.
pub fn helm_history(release: &str, namespace: &str, context: Option<&str>) -> String {
    let mut words = vec!["helm".to_string(), "history".into(), release.into()];
    words.extend(helm_scope(namespace, context));
    join(&words)
}

/// `kubectl delete KIND NAME -n NS [--context CTX]` (kubectl's flag is `--context`).
pub fn kubectl_delete(kind: &str, name: &str, namespace: &str, context: Option<&str>) -> String {
    let mut words = vec![
        "kubectl".to_string(),
        "delete".into(),
        kind.into(),
        name.into(),
        "-n".into(),
        namespace.into(),
    ];
    if let Some(context) = context {
        words.extend(["--context".to_string(), context.to_string()]);
    }
    join(&words)
}

/// `kubectl logs job/NAME -n NS [--context CTX]`: the log of a Job's pod.
pub fn kubectl_logs_job(job: &str, namespace: &str, context: Option<&str>) -> String {
    let mut words = vec![
        "kubectl".to_string(),
        "logs".into(),
        format!("job/{job}"),
        "-n".into(),
        namespace.into(),
    ];
    if let Some(context) = context {
        words.extend(["--context".to_string(), context.to_string()]);
    }
    join(&words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_the_shell_needs_it() {
        assert_eq!(
            join(&["helm", "rollback", "demo", "2", "-n", "apps"]),
            "helm rollback demo 2 -n apps"
        );
        assert_eq!(
            join(&["a b", "it's", "$HOME", "x;rm", "", "k=v"]),
            r#"'a b' "it's" '$HOME' 'x;rm' '' 'k=v'"#
        );
        assert_eq!(quote("with\0nul"), "withnul");
    }

    #[test]
    fn a_rollback_and_a_record_deletion_carry_the_context() {
        assert_eq!(
            helm_rollback("demo", 4, "apps", Some("prod eu")),
            "helm rollback demo 4 -n apps --kube-context 'prod eu'"
        );
        assert_eq!(
            helm_history("demo", "apps", Some("prod eu")),
            "helm history demo -n apps --kube-context 'prod eu'"
        );
        assert_eq!(
            kubectl_delete("secret", "sh.helm.release.v1.demo.v1", "apps", Some("prod")),
            "kubectl delete secret sh.helm.release.v1.demo.v1 -n apps --context prod"
        );
        assert_eq!(
            kubectl_logs_job("demo-init", "apps", Some("prod eu")),
            "kubectl logs job/demo-init -n apps --context 'prod eu'"
        );
    }
}
