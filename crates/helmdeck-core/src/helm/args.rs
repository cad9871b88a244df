//! helm's own flags (v4, `helm upgrade --help` and its global flags), sorted by what they
//! change, so each helm call helmdeck makes gets the ones it needs: the chart pull its chart
//! source, the init render its render settings, an advice command none of the values.

/// What a flag given to `helm upgrade` changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `-f`, `--set*`: the release's values.
    Values,
    /// Where the chart comes from (`--version`, `--repo`, credentials, TLS).
    ChartSource,
    /// How the chart renders; `helm template` takes these as `helm upgrade` does.
    Render,
    /// helm's global flags (kubeconfig, caches, registry config): every call takes them.
    Global,
    /// Only the upgrade: history, hooks, apply and wait settings, and anything unknown.
    Upgrade,
}

struct Flag {
    long: &'static str,
    short: Option<char>,
    takes_value: bool,
    kind: Kind,
    /// A credential: never printed.
    secret: bool,
}

const fn flag(long: &'static str, takes_value: bool, kind: Kind) -> Flag {
    Flag {
        long,
        short: None,
        takes_value,
        kind,
        secret: false,
    }
}

const FLAGS: &[Flag] = &[
    Flag {
        short: Some('f'),
        ..flag("values", true, Kind::Values)
    },
    flag("set", true, Kind::Values),
    flag("set-string", true, Kind::Values),
    flag("set-json", true, Kind::Values),
    flag("set-file", true, Kind::Values),
    flag("set-literal", true, Kind::Values),
    flag("version", true, Kind::ChartSource),
    flag("repo", true, Kind::ChartSource),
    flag("username", true, Kind::ChartSource),
    Flag {
        secret: true,
        ..flag("password", true, Kind::ChartSource)
    },
    flag("ca-file", true, Kind::ChartSource),
    flag("cert-file", true, Kind::ChartSource),
    flag("key-file", true, Kind::ChartSource),
    flag("keyring", true, Kind::ChartSource),
    flag("devel", false, Kind::ChartSource),
    flag("verify", false, Kind::ChartSource),
    flag("insecure-skip-tls-verify", false, Kind::ChartSource),
    flag("plain-http", false, Kind::ChartSource),
    flag("pass-credentials", false, Kind::ChartSource),
    flag("post-renderer", true, Kind::Render),
    flag("post-renderer-args", true, Kind::Render),
    flag("skip-schema-validation", false, Kind::Render),
    flag("enable-dns", false, Kind::Render),
    flag("dependency-update", false, Kind::Render),
    flag("burst-limit", true, Kind::Global),
    flag("color", true, Kind::Global),
    flag("colour", true, Kind::Global),
    flag("content-cache", true, Kind::Global),
    flag("debug", false, Kind::Global),
    flag("kube-apiserver", true, Kind::Global),
    flag("kube-as-group", true, Kind::Global),
    flag("kube-as-user", true, Kind::Global),
    flag("kube-ca-file", true, Kind::Global),
    flag("kube-context", true, Kind::Global),
    flag("kube-insecure-skip-tls-verify", false, Kind::Global),
    flag("kube-tls-server-name", true, Kind::Global),
    Flag {
        secret: true,
        ..flag("kube-token", true, Kind::Global)
    },
    flag("kubeconfig", true, Kind::Global),
    Flag {
        short: Some('n'),
        ..flag("namespace", true, Kind::Global)
    },
    flag("qps", true, Kind::Global),
    flag("registry-config", true, Kind::Global),
    flag("repository-cache", true, Kind::Global),
    flag("repository-config", true, Kind::Global),
    flag("description", true, Kind::Upgrade),
    flag("history-max", true, Kind::Upgrade),
    Flag {
        short: Some('l'),
        ..flag("labels", true, Kind::Upgrade)
    },
    Flag {
        short: Some('o'),
        ..flag("output", true, Kind::Upgrade)
    },
    flag("server-side", true, Kind::Upgrade),
    flag("timeout", true, Kind::Upgrade),
];

/// One flag as given (with its value, if it takes one), or a word that is not a flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The words as given: `["--version", "1.2.3"]`, `["--version=1.2.3"]` or `["-fv.yaml"]`.
    pub words: Vec<String>,
    pub kind: Kind,
    /// The long name without dashes (`version`), empty for a word that is not a flag.
    pub name: String,
    pub value: Option<String>,
    pub secret: bool,
}

impl Arg {
    /// The same flag with another value, in the form it was given.
    pub fn with_value(&self, value: &str) -> Arg {
        let words = if self.words.len() == 2 {
            vec![self.words[0].clone(), value.to_string()]
        } else {
            vec![format!("--{}={value}", self.name)]
        };
        Arg {
            words,
            value: Some(value.to_string()),
            ..self.clone()
        }
    }
}

fn lookup_long(name: &str) -> Option<&'static Flag> {
    FLAGS.iter().find(|f| f.long == name)
}

fn lookup_short(c: char) -> Option<&'static Flag> {
    FLAGS.iter().find(|f| f.short == Some(c))
}

/// Splits helm arguments into flags with their values. A flag helmdeck does not know counts as
/// upgrade-only and takes no separate value (helm would refuse it anyway).
pub fn parse(args: &[String]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        let (known, inline): (Option<&Flag>, Option<String>) =
            if let Some(long) = word.strip_prefix("--") {
                match long.split_once('=') {
                    Some((name, value)) => (lookup_long(name), Some(value.to_string())),
                    None => (lookup_long(long), None),
                }
            } else if let Some(short) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
                let mut chars = short.chars();
                let c = chars.next().unwrap_or('-');
                let rest: String = chars.collect();
                let rest = rest.strip_prefix('=').map(str::to_string).unwrap_or(rest);
                (lookup_short(c), (!rest.is_empty()).then_some(rest))
            } else {
                (None, None)
            };
        let Some(flag) = known else {
            let name = word.trim_start_matches('-');
            out.push(Arg {
                words: vec![word.clone()],
                kind: Kind::Upgrade,
                name: if word.starts_with('-') {
                    name.split('=').next().unwrap_or("").to_string()
                } else {
                    String::new()
                },
                value: None,
                secret: false,
            });
            continue;
        };
        let mut words = vec![word.clone()];
        let value = match inline {
            Some(v) => Some(v),
            None if flag.takes_value && i < args.len() => {
                words.push(args[i].clone());
                i += 1;
                Some(args[i - 1].clone())
            }
            None => None,
        };
        out.push(Arg {
            words,
            kind: flag.kind,
            name: flag.long.to_string(),
            value,
            secret: flag.secret,
        });
    }
    out
}

/// The words of `args`, flattened back.
pub fn words<'a>(args: impl IntoIterator<Item = &'a Arg>) -> Vec<String> {
    args.into_iter().flat_map(|a| a.words.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flags_are_split_with_their_values_in_every_form() {
        let args = parse(&strings(&[
            "--set-string",
            "a=b",
            "-fv.yaml",
            "-f",
            "-",
            "--version=1.2.3",
            "--repo",
            "https://charts.example",
            "--post-renderer",
            "stamp",
            "--history-max",
            "3",
            "--create-namespace",
            "--password",
            "pw",
            "--no-such-flag",
            "word",
        ]));
        let kinds: Vec<(Kind, &str, Option<&str>)> = args
            .iter()
            .map(|a| (a.kind, a.name.as_str(), a.value.as_deref()))
            .collect();
        assert_eq!(
            kinds,
            [
                (Kind::Values, "set-string", Some("a=b")),
                (Kind::Values, "values", Some("v.yaml")),
                (Kind::Values, "values", Some("-")),
                (Kind::ChartSource, "version", Some("1.2.3")),
                (Kind::ChartSource, "repo", Some("https://charts.example")),
                (Kind::Render, "post-renderer", Some("stamp")),
                (Kind::Upgrade, "history-max", Some("3")),
                (Kind::Upgrade, "create-namespace", None),
                (Kind::ChartSource, "password", Some("pw")),
                (Kind::Upgrade, "no-such-flag", None),
                (Kind::Upgrade, "", None),
            ]
        );
        assert!(args[8].secret && !args[4].secret);
        assert_eq!(
            words(&args[..3]),
            strings(&["--set-string", "a=b", "-fv.yaml", "-f", "-"])
        );
    }

    #[test]
    fn a_value_is_replaced_in_the_form_it_was_given() {
        let args = parse(&strings(&["--version", "^1", "--version=^2", "-f", "-"]));
        assert_eq!(args[0].with_value("1.4.0").words, ["--version", "1.4.0"]);
        assert_eq!(args[1].with_value("2.0.1").words, ["--version=2.0.1"]);
        assert_eq!(
            args[2].with_value("/tmp/v.yaml").words,
            ["-f", "/tmp/v.yaml"]
        );
    }
}
